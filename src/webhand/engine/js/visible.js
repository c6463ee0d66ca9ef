// Whether the element a selector finds is shown (or, wanted false, not).
// engine/waits.py: VISIBLE.
([selector, wanted]) => {
  const e = document.querySelector(selector);
  const shown = !!e && (() => { const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility === 'visible'; })();
  return wanted ? shown : !shown;
}
