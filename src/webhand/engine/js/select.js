// Selects the options whose value or label is wanted; their labels.
// engine/page_scripts.py: SELECT.
function (wanted) {
  const e = this;
  for (const option of e.options) option.selected = wanted.includes(option.value) || wanted.includes((option.label || option.textContent || '').trim());
  e.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  e.dispatchEvent(new Event('change', {bubbles: true}));
  return [...e.selectedOptions].map(o => (o.label || o.textContent || '').trim());
}
