// What a text field holds, and whether it is a password field.
// engine/page_scripts.py: FIELD_TEXT.
e => {
  if (e.isContentEditable) return {text: e.innerText, hidden: false};
  if (typeof e.value === 'string' && (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA'))
    return {text: e.value, hidden: (e.type || '').toLowerCase() === 'password'};
  return null;
}
