// Before a Playwright click: a drop-down option, another part of the element's widget, or a plain click.
// engine/pointer.py: PREPARE.
e => {
  const P = POINTER_HELPERS;
  if (P.dropdownOf(e)) return 'dropdown';
  const box = e.getBoundingClientRect();
  if (!e.isConnected || box.width === 0 || box.height === 0 || getComputedStyle(e).visibility !== 'visible' || P.disabled(e)) return 'click';
  const [x, y] = P.reveal(e), hit = P.hitAt(e, x, y);
  return !hit || P.within(e, hit) || P.cover(e, x, y) ? 'click' : 'widget';
}
