// Caches the app shell on install; answers from the cache first, then from the network.
const version = new URL(self.location).searchParams.get('v') || '1';
const SHELL = ['./', 'index.html', 'app.js', 'app.css'];
self.addEventListener('install', event => {
  console.log('service worker v' + version + ' installing');
  event.waitUntil(caches.open('shell-v' + version).then(cache => cache.addAll(SHELL)));
});
self.addEventListener('activate', event => {
  console.log('service worker v' + version + ' active');
  event.waitUntil(self.clients.claim());
});
self.addEventListener('fetch', event => {
  event.respondWith(caches.match(event.request).then(hit => hit || fetch(event.request)));
});
