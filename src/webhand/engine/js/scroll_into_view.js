// Scrolls an element into view inside every scroller that hides it.
// engine/pointer.py: SCROLL_INTO_VIEW.
function () {
  const P = POINTER_HELPERS;
  const e = this;
  if (!e.isConnected) return {error: 'removed'};
  const r = e.getBoundingClientRect();
  if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility !== 'visible') return {error: 'not visible'};
  const [x, y] = P.reveal(e);
  return {x, y};
}
