// Selects an option of a drop-down the way Playwright's selectOption does.
// engine/pointer.py: PICK_OPTION.
function () {
  const P = POINTER_HELPERS;
  const o = this, s = P.dropdownOf(o);
  if (!o.isConnected || !s) return {error: 'removed'};
  const box = s.getBoundingClientRect();
  if (box.width === 0 || box.height === 0 || getComputedStyle(s).visibility !== 'visible') return {wait: 'not visible'};
  if (P.disabled(o) || P.disabled(s)) return {wait: 'not enabled'};
  o.selected = true;
  s.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  s.dispatchEvent(new Event('change', {bubbles: true}));
  return {label: (o.label || o.textContent || '').trim()};
}
