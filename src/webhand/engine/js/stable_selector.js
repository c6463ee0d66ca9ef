// A selector that finds the element on a fresh load.
// engine/page_scripts.py: STABLE_SELECTOR.
e => {
  const unique = s => { try { return document.querySelectorAll(s).length === 1; } catch (_) { return false; } };
  const steady = v => v && !/\d{3,}|:/.test(v);
  if (steady(e.id) && unique('#' + CSS.escape(e.id))) return '#' + CSS.escape(e.id);
  const tag = e.tagName.toLowerCase();
  for (const a of ['data-testid', 'data-test', 'name', 'aria-label', 'placeholder', 'href', 'title', 'value', 'type']) {
    const v = e.getAttribute(a);
    if (v === null || v.length > 120) continue;
    const s = tag + '[' + a + '="' + CSS.escape(v) + '"]';
    if (unique(s)) return s;
  }
  const steps = [];
  for (let n = e; n && n.nodeType === 1 && n !== document.documentElement; n = n.parentElement) {
    if (n !== e && steady(n.id) && unique('#' + CSS.escape(n.id))) { steps.unshift('#' + CSS.escape(n.id)); break; }
    let i = 1;
    for (let p = n.previousElementSibling; p; p = p.previousElementSibling) if (p.tagName === n.tagName) i++;
    steps.unshift(n.tagName.toLowerCase() + ':nth-of-type(' + i + ')');
    if (unique(steps.join(' > '))) return steps.join(' > ');
  }
  const s = steps.join(' > ');
  return unique(s) ? s : '';
}
