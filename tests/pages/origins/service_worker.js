importScripts("attempt.js");
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("message", (event) => {
  event.waitUntil(attemptIn(event.data.kind, event.data.url).then(outcome => event.ports[0].postMessage(outcome)));
});
