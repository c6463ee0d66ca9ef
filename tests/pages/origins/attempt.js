// One attempt to reach a URL over one channel, in any global (page, worker, service worker).
// Resolves to what the page could see: "status <n>", "open", "failed"; never rejects.
// Every attempt ends on an event (response, error, close) with a cap, so that once it resolved,
// a request that was going to reach the server has reached it.
function attemptIn(kind, url) {
  const cap = (promise) => Promise.race([promise, new Promise(r => setTimeout(() => r("no answer"), 5000))]);
  if (kind === "fetch") {
    return cap(fetch(url, {mode: "no-cors"}).then(r => "status " + r.status, () => "failed"));
  }
  if (kind === "xhr") {
    return cap(new Promise(resolve => {
      const xhr = new XMLHttpRequest();
      xhr.onload = () => resolve("status " + xhr.status);
      xhr.onerror = () => resolve("failed");
      xhr.open("GET", url);
      xhr.send();
    }));
  }
  if (kind === "ws") {
    return cap(new Promise(resolve => {
      let ws;
      try { ws = new WebSocket(url); } catch (e) { resolve("failed"); return; }
      ws.onopen = () => { ws.close(); resolve("open"); };
      ws.onerror = () => resolve("failed");
      ws.onclose = () => resolve("failed");
    }));
  }
  return Promise.resolve("unknown kind " + kind);
}
