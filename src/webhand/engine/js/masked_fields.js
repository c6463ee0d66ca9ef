// How many fields of a document webhand masked still hold text.
// engine/page_scripts.py: MASKED_FIELDS.
() => [...document.querySelectorAll('[style*="--webhand-secret"]')]
  .filter(e => (typeof e.value === 'string' ? e.value : e.textContent) !== '').length
