// The kind of form field, so one call can fill fields of different kinds.
// engine/page_scripts.py: KIND.
e => {
  const tag = e.tagName, role = (e.getAttribute('role') || '').toLowerCase();
  if (tag === 'SELECT') return 'select';
  if (tag === 'INPUT') {
    const type = (e.type || 'text').toLowerCase();
    if (type === 'checkbox' || type === 'radio') return type;
    return ['button', 'submit', 'reset', 'image', 'file', 'hidden'].includes(type) ? 'other' : 'text';
  }
  if (tag === 'TEXTAREA' || e.isContentEditable || ['textbox', 'searchbox', 'combobox'].includes(role)) return 'text';
  if (role === 'checkbox' || role === 'switch') return 'checkbox';
  if (role === 'radio') return 'radio';
  return 'other';
}
