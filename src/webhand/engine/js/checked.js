// Whether a checkbox or radio (native or ARIA) is checked.
// engine/page_scripts.py: CHECKED.
function () {
  const e = this;
  if (e.tagName === 'INPUT' && (e.type === 'checkbox' || e.type === 'radio')) return {state: e.checked, radio: e.type === 'radio'};
  const role = (e.getAttribute('role') || '').toLowerCase();
  if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role))
    return {state: e.getAttribute('aria-checked') === 'true', radio: role.includes('radio')};
  return {error: 'not a checkbox'};
}
