// Resolves at the main document's load (at once when it is complete).
// engine/settle.py: LOADED.
() => document.readyState === 'complete' ||
  new Promise(resolve => window.addEventListener('load', () => resolve(true), {once: true}))
