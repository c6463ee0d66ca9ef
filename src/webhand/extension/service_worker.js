// webhand bridge: relays the DevTools protocol of the tabs a person shares to webhand on this
// computer (ws://127.0.0.1 only; the manifest's connect-src allows nothing else).
//
// - A tab is shared only by the person (the popup's "Share this tab"), and stops being shared with
//   "Stop sharing", when it closes, or when the person cancels Chrome's "is debugging" bar.
// - chrome.debugger is attached to a shared tab only while webhand asks for it ("attach"), and
//   detached from every tab when webhand releases them or the connection closes: the browser is
//   left as it was.
// - Every command names a tab; one that is not shared is refused here as well as in webhand.
// - The token never leaves this browser. webhand's relay proves it knows the token first (an
//   HMAC-SHA256 keyed with it over a nonce from each side); only then does this worker send its own
//   proof, and only then does it obey a message. Whatever else listens on the port learns a nonce.
// - Only web pages (http, https) are driven: a shared tab that goes anywhere else (the browser's own
//   pages, this extension's pages, files, data URLs) stops being shared at once, and webhand is told.
// - The service worker may be suspended: an alarm wakes it, and a closed connection is retried
//   with a growing delay.

const DEFAULT_PORT = 47311;
const PROTOCOL_VERSION = "1.3";
const KEEPALIVE_ALARM = "webhand-keepalive";
const PING_SECONDS = 20;  // a message every 20 s keeps the worker alive while connected (Chrome 116+)
const MAX_BACKOFF_MS = 10000;

let socket = null;
let backoffMs = 500;
let reconnectTimer = null;
let pingTimer = null;
let authenticated = false;  // the relay on this socket proved it knows the token
const attached = new Set();  // tab ids chrome.debugger is attached to for webhand
let testConfig;  // undefined: not read yet; null: none (the shipped extension has none)

// -- settings and the shared tabs (kept across suspensions) ----------------------------------
async function readTestConfig() {
  // Only a test build has this file (the tests copy the extension and write it); never shipped.
  if (testConfig !== undefined) return testConfig;
  try {
    const reply = await fetch(chrome.runtime.getURL("test-config.json"));
    testConfig = reply.ok ? await reply.json() : null;
  } catch (error) {
    testConfig = null;
  }
  return testConfig;
}

async function settings() {
  const stored = await chrome.storage.local.get({port: DEFAULT_PORT, token: ""});
  const test = await readTestConfig();
  if (test) return {port: test.port, token: test.token};
  return stored;
}

async function sharedTabs() {
  const {shared} = await chrome.storage.session.get({shared: []});
  return new Set(shared);
}

async function saveShared(set) {
  await chrome.storage.session.set({shared: [...set]});
  await reportShared();
}

// -- the connection ---------------------------------------------------------------------------
function send(message) {
  if (socket && authenticated && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

let connecting = false;  // connect() awaits the settings: two wake-ups at once must open one socket

async function connect() {
  if (connecting || (socket && (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING))) return;
  connecting = true;
  try {
    await open();
  } finally {
    connecting = false;
  }
}

async function open() {
  const {port, token} = await settings();
  if (!token || !Number.isInteger(port) || port < 1 || port > 65535) return;  // not paired yet
  let ws;
  try {
    ws = new WebSocket(`ws://127.0.0.1:${port}/extension`);
  } catch (error) {
    scheduleReconnect();
    return;
  }
  socket = ws;
  authenticated = false;
  const nonce = randomHex();
  let challenged = false;
  ws.onopen = () => ws.send(JSON.stringify({type: "hello", nonce, userAgent: navigator.userAgent}));
  ws.onmessage = async (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch (error) { ws.close(); return; }
    if (socket !== ws) return;
    if (!authenticated) {
      // The one message a relay may send first: its nonce and its proof. Anything else, or a wrong
      // proof, ends the connection with nothing said.
      if (challenged || !message || message.type !== "challenge" || !isNonce(message.nonce) || !isNonce(message.proof)) {
        ws.close();
        return;
      }
      challenged = true;
      const key = await hmacKey(token);
      const relayProof = hexBytes(message.proof);
      if (!(await crypto.subtle.verify("HMAC", key, relayProof, proofText("relay", port, nonce, message.nonce)))) {
        ws.close();
        return;
      }
      const ours = await crypto.subtle.sign("HMAC", key, proofText("extension", port, nonce, message.nonce));
      authenticated = true;
      ws.send(JSON.stringify({type: "auth", proof: bytesHex(new Uint8Array(ours))}));
      return;
    }
    handle(message).catch(() => {});
  };
  ws.onclose = () => {
    if (socket === ws) { socket = null; authenticated = false; }
    clearInterval(pingTimer);
    detachAll();
    scheduleReconnect();
  };
}

// -- the proofs (webhand's security/pairing.py computes the same) --------------------------------
function randomHex() {
  return bytesHex(crypto.getRandomValues(new Uint8Array(32)));
}

function bytesHex(bytes) {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function hexBytes(hex) {
  return new Uint8Array(hex.match(/../g).map((pair) => parseInt(pair, 16)));
}

function isNonce(value) {
  return typeof value === "string" && /^[0-9a-f]{64}$/.test(value);
}

async function hmacKey(token) {
  return await crypto.subtle.importKey("raw", new TextEncoder().encode(token), {name: "HMAC", hash: "SHA-256"},
                                       false, ["sign", "verify"]);
}

// The port is the one this worker dialled: a relay's proof made for another port (a go-between that
// holds this port and passes the handshake to a webhand elsewhere) does not verify.
function proofText(role, port, extensionNonce, relayNonce) {
  return new TextEncoder().encode(`webhand-bridge-v2 ${role} ${port} ${extensionNonce} ${relayNonce}`);
}

function scheduleReconnect() {
  if (reconnectTimer !== null) return;
  const delay = testConfig && testConfig.retryMs ? testConfig.retryMs : backoffMs;  // test builds retry fast
  reconnectTimer = setTimeout(() => { reconnectTimer = null; connect(); }, delay);
  backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
}

async function handle(message) {
  switch (message.type) {
    case "welcome":
      backoffMs = 500;
      clearInterval(pingTimer);
      pingTimer = setInterval(() => send({type: "ping"}), PING_SECONDS * 1000);
      await reportShared();
      return;
    case "attach":
      return reply(message.id, () => attach(message.tabId));
    case "command":
      return reply(message.id, () => command(message));
    case "activate":
      return reply(message.id, () => activate(message.tabId));
    case "release":
      await detachAll();
      return;
  }
}

async function reply(id, work) {
  try {
    send({type: "reply", id, result: (await work()) || {}});
  } catch (error) {
    send({type: "reply", id, error: String((error && error.message) || error)});
  }
}

async function reportShared() {
  const shared = await sharedTabs();
  const tabs = [];
  for (const tabId of shared) {
    try {
      const tab = await chrome.tabs.get(tabId);
      tabs.push({tabId, url: tab.url || "", title: tab.title || ""});
    } catch (error) { /* closed meanwhile */ }
  }
  send({type: "shared", tabs});
}

// -- the debugger, on shared tabs that show web pages only ----------------------------------------
function onTheWeb(url) {
  return /^https?:\/\//i.test(url || "") || url === "about:blank";
}

async function webTab(tabId) {
  // The URL of the document commands would reach; a tab that left the web is let go, for good.
  const tab = await chrome.tabs.get(tabId);
  if (!onTheWeb(tab.url)) {
    await leftTheWeb(tabId, tab.url);
    throw new Error("this tab is not on a web page (http, https) any more, so it is not shared with webhand");
  }
  return tab;
}

async function leftTheWeb(tabId, url) {
  if ((await sharedTabs()).has(tabId)) await unshare(tabId, {reason: "left_the_web", url: String(url || "").slice(0, 200)});
}

async function attach(tabId) {
  if (!(await sharedTabs()).has(tabId)) throw new Error("this tab is not shared");
  await webTab(tabId);
  if (!attached.has(tabId)) {
    try {
      await chrome.debugger.attach({tabId}, PROTOCOL_VERSION);
    } catch (error) {
      // A worker that was suspended and woke again forgot its attachments, which Chrome kept.
      const theirs = (await chrome.debugger.getTargets()).find((t) => t.tabId === tabId && t.attached);
      if (!theirs || !String(error && error.message).includes("already attached")) throw error;
    }
    attached.add(tabId);
  }
  const targets = await chrome.debugger.getTargets();
  const target = targets.find((t) => t.tabId === tabId);
  const tab = await chrome.tabs.get(tabId);
  return {targetId: target ? target.id : String(tabId), url: tab.url || "", title: tab.title || ""};
}

async function command(message) {
  if (!attached.has(message.tabId) || !(await sharedTabs()).has(message.tabId)) {
    throw new Error("this tab is not shared with webhand");
  }
  await webTab(message.tabId);
  if (message.method === "Page.navigate" && !/^https?:\/\//i.test(String((message.params || {}).url || ""))) {
    throw new Error("webhand may open only web pages (http, https) in a shared tab");
  }
  const target = message.sessionId ? {tabId: message.tabId, sessionId: message.sessionId} : {tabId: message.tabId};
  return await chrome.debugger.sendCommand(target, message.method, message.params || {});
}

async function activate(tabId) {
  if (!(await sharedTabs()).has(tabId)) throw new Error("this tab is not shared with webhand");
  const tab = await chrome.tabs.update(tabId, {active: true});
  await chrome.windows.update(tab.windowId, {focused: true});
}

async function detachAll() {
  for (const tabId of [...attached]) {
    attached.delete(tabId);
    try { await chrome.debugger.detach({tabId}); } catch (error) { /* already gone */ }
  }
}

chrome.debugger.onEvent.addListener((source, method, params) => {
  if (source.tabId === undefined || !attached.has(source.tabId)) return;
  const frame = method === "Page.frameNavigated" && params && params.frame;
  if (frame && !frame.parentId && !source.sessionId && !onTheWeb(frame.url)) {
    attached.delete(source.tabId);  // synchronously: no later command reaches that document
    leftTheWeb(source.tabId, frame.url);
    try { chrome.debugger.detach({tabId: source.tabId}); } catch (error) { /* already gone */ }
    return;
  }
  send({type: "event", tabId: source.tabId, sessionId: source.sessionId || null, method, params: params || {}});
});

chrome.debugger.onDetach.addListener(async (source, reason) => {
  if (source.tabId === undefined || !attached.has(source.tabId)) return;
  attached.delete(source.tabId);
  if (reason === "canceled_by_user") await unshare(source.tabId, {reason});  // the person closed Chrome's bar
  else send({type: "detached", tabId: source.tabId, reason});
});

// -- sharing (the popup's buttons) ----------------------------------------------------------------
async function share(tabId) {
  if (!onTheWeb((await chrome.tabs.get(tabId)).url)) return;  // the browser's own pages are never shared
  const shared = await sharedTabs();
  shared.add(tabId);
  await saveShared(shared);
  await chrome.action.setBadgeText({tabId, text: "on"});
  connect();
}

async function unshare(tabId, why = {reason: "stopped_sharing"}) {
  const shared = await sharedTabs();
  shared.delete(tabId);
  if (attached.has(tabId)) {
    attached.delete(tabId);
    try { await chrome.debugger.detach({tabId}); } catch (error) { /* already gone */ }
  }
  send({type: "detached", tabId, ...why});
  await saveShared(shared);
  try { await chrome.action.setBadgeText({tabId, text: ""}); } catch (error) { /* tab closed */ }
}

chrome.tabs.onRemoved.addListener(async (tabId) => {
  if ((await sharedTabs()).has(tabId)) await unshare(tabId, {reason: "tab_closed"});
});

// Test builds only (test-config.json): share the tabs whose URL has autoShareUrl, standing in for
// the person's click; the shipped extension has no such file, and shares nothing by itself.
async function autoShare(tab) {
  const test = await readTestConfig();
  if (test && test.autoShareUrl && (tab.url || "").includes(test.autoShareUrl) && !(await sharedTabs()).has(tab.id)) {
    await share(tab.id);
  }
}

chrome.tabs.onUpdated.addListener(async (tabId, change, tab) => {
  if (change.url && !onTheWeb(change.url)) await leftTheWeb(tabId, change.url);
  if (change.status === "complete") await autoShare(tab);
  if (change.url && (await sharedTabs()).has(tabId)) await reportShared();
});

readTestConfig().then(async (test) => {
  if (!test) return;
  for (const tab of await chrome.tabs.query({})) await autoShare(tab);
  // Headless Chromium takes one URL on its command line: the test's other tabs are opened here, once.
  const {opened} = await chrome.storage.session.get({opened: false});
  if (!opened && Array.isArray(test.openTabs)) {
    await chrome.storage.session.set({opened: true});
    for (const url of test.openTabs) await chrome.tabs.create({url: String(url), active: false});
  }
});

chrome.runtime.onMessage.addListener((message, sender, respond) => {
  if (sender.id !== chrome.runtime.id || sender.tab) return false;  // the popup only, never a page
  (async () => {
    if (message.type === "share") await share(message.tabId);
    else if (message.type === "unshare") await unshare(message.tabId);
    else if (message.type === "pair") {
      await chrome.storage.local.set({token: String(message.token || "").trim(), port: Number(message.port) || DEFAULT_PORT});
      if (socket) socket.close();
      backoffMs = 500;
      connect();
    }
    const {port, token} = await settings();
    respond({connected: !!socket && authenticated && socket.readyState === WebSocket.OPEN, paired: !!token, port,
             shared: [...(await sharedTabs())]});
  })();
  return true;
});

// -- staying alive ------------------------------------------------------------------------------
chrome.alarms.create(KEEPALIVE_ALARM, {periodInMinutes: 0.5});
chrome.alarms.onAlarm.addListener((alarm) => { if (alarm.name === KEEPALIVE_ALARM) connect(); });
chrome.runtime.onStartup.addListener(() => connect());
chrome.runtime.onInstalled.addListener(() => connect());
connect();
