// The app shell's script: registers the service worker that caches the shell, so the page
// loads offline. Version 2 (the button) installs a second worker that waits, since the first
// one controls this page and neither calls skipWaiting() on its own.
const status = document.getElementById('status');
console.log('app script ran');
async function registerVersion(version) {
  const registration = await navigator.serviceWorker.register('sw.js?v=' + version);
  const worker = registration.installing || registration.waiting || registration.active;
  if (version === 1) {
    await navigator.serviceWorker.ready;
    status.textContent = navigator.serviceWorker.controller ? 'controlled by the service worker' : 'service worker ready';
  } else {
    worker.addEventListener('statechange', () => { if (worker.state === 'installed') status.textContent = 'version 2 waiting'; });
    if (worker.state === 'installed') status.textContent = 'version 2 waiting';
  }
}
registerVersion(1);
