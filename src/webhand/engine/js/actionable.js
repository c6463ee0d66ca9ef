// Whether an element can be acted on now: its click point, or why not (wait or error).
// engine/pointer.py: ACTIONABLE.
async function (needEnabled, needPointer, optionClick) {
  const P = POINTER_HELPERS;
  const e = this;
  if (!e.isConnected) return {error: 'removed'};
  if (optionClick && P.dropdownOf(e)) return {dropdown: true};
  const box = () => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const [left, top, width, height] = box();
  if (width === 0 || height === 0 || getComputedStyle(e).visibility !== 'visible') return {wait: 'not visible'};
  if (needEnabled && P.disabled(e)) return {wait: 'not enabled'};
  await new Promise(resolve => requestAnimationFrame(() => resolve()));
  const again = box();
  if (again[0] !== left || again[1] !== top || again[2] !== width || again[3] !== height) return {wait: 'not stable'};
  let [x, y] = P.reveal(e);
  if (!needPointer) return {x, y};
  let cover = P.cover(e, x, y);
  if (cover && cover.kind === 'pinned') {  // under a sticky header or a bar: in the middle of the view it may be clear
    P.centre(e);
    [x, y] = P.point(e);
    cover = P.cover(e, x, y);
  }
  if (cover) return {wait: 'covered', by: cover.by, kind: cover.kind};
  return {x, y, label: P.label(e)};
}
