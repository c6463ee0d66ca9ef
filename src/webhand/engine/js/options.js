// What a select offers, and which of the wanted values or labels it lacks.
// engine/page_scripts.py: OPTIONS.
(e, wanted) => {
  if (e.tagName !== 'SELECT') return {not_select: e.tagName.toLowerCase() + (e.type ? ' type=' + e.type : '')};
  const options = [...e.options].map(o => ({value: o.value, label: (o.label || o.textContent || '').trim()}));
  const missing = wanted.filter(w => !options.some(o => o.value === w || o.label === w));
  return {not_select: '', missing, multiple: e.multiple,
          options: options.map(o => o.label === o.value ? JSON.stringify(o.value) : JSON.stringify(o.label) + ' (value ' + JSON.stringify(o.value) + ')')};
}
