// Resolves once the page drew its next frame, ran the tasks it posted, and went idle.
// engine/settle.py: IDLE.
() => new Promise(resolve =>
  requestAnimationFrame(() => setTimeout(() => requestIdleCallback(() => resolve(true)), 0)))
