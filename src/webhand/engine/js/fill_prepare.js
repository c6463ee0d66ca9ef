// Before a fill: focus the field and select its text, or set a value it takes directly.
// engine/page_scripts.py: FILL_PREPARE.
function (value) {
  (WATCH_DOM)(true);
  const e = this;
  if (!e.isConnected) return {error: 'removed'};
  const box = e.getBoundingClientRect();
  if (box.width === 0 || box.height === 0 || getComputedStyle(e).visibility !== 'visible') return {wait: 'not visible'};
  const direct = ['color', 'date', 'time', 'datetime-local', 'month', 'range', 'week'];
  if (e.tagName === 'INPUT') {
    const type = (e.type || 'text').toLowerCase();
    if (['checkbox', 'radio', 'file', 'submit', 'button', 'reset', 'image', 'hidden'].includes(type))
      return {error: 'not a text field', detail: 'Input of type "' + type + '" cannot be filled'};
    if (type === 'number' && value.trim() !== '' && isNaN(Number(value))) return {error: 'not a number'};
    if (e.disabled) return {wait: 'not enabled'};
    if (e.readOnly) return {wait: 'not editable'};
    if (direct.includes(type)) {
      e.focus(); e.value = value;
      if (e.value !== value) return {error: 'malformed', detail: 'Malformed value for input of type ' + type};
      e.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
      e.dispatchEvent(new Event('change', {bubbles: true}));
      return {done: true};
    }
    e.focus(); e.select(); return {};
  }
  if (e.tagName === 'TEXTAREA') {
    if (e.disabled) return {wait: 'not enabled'};
    if (e.readOnly) return {wait: 'not editable'};
    e.focus(); e.select(); return {};
  }
  if (e.isContentEditable) {
    e.focus();
    const range = document.createRange(); range.selectNodeContents(e);
    const selection = window.getSelection(); selection.removeAllRanges(); selection.addRange(range);
    return {};
  }
  return {error: 'not a text field'};
}
