// Hides or shows again the text of a field webhand typed a secret into.
// engine/page_scripts.py: MASK_TEXT.
e => on => {
  const s = e.style;
  if (on) {
    s.setProperty('-webkit-text-security', 'disc', 'important');
    s.setProperty('--webhand-secret', '1');
  } else if (s.getPropertyValue('--webhand-secret')) {
    s.removeProperty('-webkit-text-security');
    s.removeProperty('--webhand-secret');
  }
}
