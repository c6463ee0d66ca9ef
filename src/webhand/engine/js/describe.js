// The ways to find an element again on another build of its page (tools/flows/format.py's Target).
// engine/page_scripts.py: DESCRIBE_OF_REF; its twin, locate.js, finds by them.
(e, selector) => {
  const W = window.__webhand;
  const squash = (s) => String(s || '').replace(/\s+/g, ' ').trim();
  const bounded = (s) => squash(s).slice(0, 300);
  const generated = (v) => !v || v.length > 120 || /\d{3,}|:|[0-9a-f]{8,}/i.test(v)
    || /^(ember|react-|mui-|radix-|headlessui-|ng-|yui_|ext-gen|gwt-|j_id|__|rc-|chakra-|mantine-|css-)/i.test(v)
    || /(^|[-_])\d+([-_]|$)/.test(v);
  const me = W.label(e);
  const NAMED = new Set(['row', 'listitem', 'dialog', 'alertdialog', 'form', 'region', 'group', 'article',
    'radiogroup', 'tabpanel', 'navigation', 'table', 'list', 'menu', 'listbox', 'grid', 'tree', 'complementary']);
  const ancestors = [];
  for (let n = e.parentElement; n && ancestors.length < 3; n = n.parentElement) {
    const a = W.label(n);
    if (NAMED.has(a.role) && a.name) ancestors.push({ role: a.role, name: bounded(a.name) });
  }
  let label = '';
  if (e.labels && e.labels.length) label = squash(e.labels[0].textContent);
  else if (e.closest && e.closest('label')) label = squash(e.closest('label').textContent);
  const attributes = {};
  if (e.id && !generated(e.id)) attributes.id = e.id;
  for (const a of ['data-testid', 'name', 'href']) {
    const v = e.getAttribute(a);
    if (v !== null && v.length <= 2000 && !(a === 'name' && generated(v))) attributes[a] = v;
  }
  const field = /^(INPUT|TEXTAREA|SELECT)$/.test(e.tagName);
  return {
    role: me.role && /^[a-z][a-z-]{0,39}$/.test(me.role) ? me.role : '',
    name: bounded(me.name),
    ancestors,
    label: bounded(label),
    placeholder: bounded(e.getAttribute('placeholder') || ''),
    attributes,
    text: field ? '' : bounded(e.innerText !== undefined ? e.innerText : e.textContent),
    css: (selector && selector(e)) || '',
  };
}
