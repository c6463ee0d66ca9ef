// Just before a press: whether it lands on the element, still what it was.
// engine/pointer.py: AT_PRESS.
function (x, y, aimed, fresh) {
  const P = POINTER_HELPERS;
  const e = this;
  if (fresh && e.isConnected) [x, y] = P.point(e);
  const here = () => { const hit = P.hitAt(e, x, y); return hit ? P.label(hit) : null; };
  if (!e.isConnected || P.cover(e, x, y)) return {moved: here(), gone: !e.isConnected};
  const now = P.label(e);
  if (aimed && (now.role !== aimed.role || now.name !== aimed.name)) return {renamed: now};
  return {label: now};
}
