// The service worker of effects/workers.html: installs, claims its pages, caches nothing.
self.addEventListener('activate', event => event.waitUntil(self.clients.claim()));
