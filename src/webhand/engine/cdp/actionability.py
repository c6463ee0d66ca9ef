"""Is an element ready for a pointer action: attached, visible, stable, enabled, scrolled into
view and not covered. One script per attempt, retried on page events until the action's timeout,
the way Playwright's own checks retry; the last reason it was not ready goes into the error. The
checks themselves are engine/pointer.py's (the Firefox driver runs them too); here is what only
the raw-CDP driver needs."""

from __future__ import annotations

from webhand.engine.pointer import helpers

# Where an iframe element's document starts in its own frame's viewport (its content box), and
# whether the point (x, y) of that document shows through the boxes that clip the iframe there.
FRAME_POINT = """function (x, y) {
  const P = """ + helpers() + """;
  const r = this.getBoundingClientRect(), s = getComputedStyle(this);
  const left = r.left + this.clientLeft + parseFloat(s.paddingLeft), top = r.top + this.clientTop + parseFloat(s.paddingTop);
  return [left, top, P.shown(this, left + x, top + y)];
}"""

DESCRIBE = """function () { const e = this; const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').trim().slice(0, 40);
  return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (t ? ' "' + t + '"' : ''); }"""

# Waits until an element matching the selector is in the document (open shadow roots too).
QUERY = """(selector, ms) => new Promise((resolve, reject) => {
  const find = (root) => {
    const hit = root.querySelector(selector);
    if (hit) return hit;
    for (const host of root.querySelectorAll('*')) if (host.shadowRoot) { const inner = find(host.shadowRoot); if (inner) return inner; }
    return null;
  };
  try { document.querySelector(selector); } catch (error) { reject(error); return; }
  const found = find(document);
  if (found) { resolve(found); return; }
  const observer = new MutationObserver(() => { const hit = find(document); if (hit) { observer.disconnect(); clearTimeout(limit); resolve(hit); } });
  observer.observe(document, {subtree: true, childList: true, attributes: true});
  const limit = setTimeout(() => { observer.disconnect(); resolve(null); }, ms);
})"""
