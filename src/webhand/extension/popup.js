// The popup: share or stop sharing the active tab, and pair with webhand (token and port).
async function activeTab() {
  const [tab] = await chrome.tabs.query({active: true, currentWindow: true});
  return tab;
}

async function ask(message) {
  return await chrome.runtime.sendMessage(message);
}

function show(state, tab) {
  const shared = tab && state.shared.includes(tab.id);
  document.getElementById("status").textContent =
    !state.paired ? "Not paired: paste the token from `webhand extension pair`."
      : state.connected ? (shared ? "This tab is shared with webhand." : "Connected to webhand.")
        : `webhand is not running on port ${state.port} (retrying).`;
  document.getElementById("share").hidden = !!shared;
  document.getElementById("unshare").hidden = !shared;
  document.getElementById("port").value = state.port;
  document.getElementById("pairing").open = !state.paired;
}

async function refresh(message) {
  const tab = await activeTab();
  show(await ask(message || {type: "status"}), tab);
}

document.getElementById("share").addEventListener("click", async () => {
  const tab = await activeTab();
  if (tab) await refresh({type: "share", tabId: tab.id});
});
document.getElementById("unshare").addEventListener("click", async () => {
  const tab = await activeTab();
  if (tab) await refresh({type: "unshare", tabId: tab.id});
});
document.getElementById("save").addEventListener("click", async () => {
  await refresh({type: "pair", token: document.getElementById("token").value,
                 port: document.getElementById("port").value});
  document.getElementById("token").value = "";
});
refresh();
