"""Is an element ready for a pointer action: attached, visible, stable, enabled, scrolled into
view and not covered. One script per attempt, retried on page events until the action's timeout,
the way Playwright's own checks retry; the last reason it was not ready goes into the error."""

from __future__ import annotations

from webhand.engine.pointer import helpers

# `this` is the element. Returns {x, y} (its click point, in its frame's viewport) when it can be
# acted on, {dropdown: true} for an option of a drop-down when `optionClick` (it is chosen, not
# clicked: pointer.PICK_OPTION), {wait: reason, by?, kind?} when not yet, or {error: reason} when it
# never will be. Scrolling and the hit test are pointer.py's, shared with the Playwright driver.
CHECK = """async function (needEnabled, needPointer, optionClick) {
  const P = """ + helpers() + """;
  const e = this;
  if (!e.isConnected) return {error: 'removed'};
  if (optionClick && P.dropdownOf(e)) return {dropdown: true};
  const box = () => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const [left, top, width, height] = box();
  if (width === 0 || height === 0 || getComputedStyle(e).visibility !== 'visible') return {wait: 'not visible'};
  if (needEnabled && P.disabled(e)) return {wait: 'not enabled'};
  await new Promise(resolve => requestAnimationFrame(() => resolve()));
  const again = box();
  if (again[0] !== left || again[1] !== top || again[2] !== width || again[3] !== height) return {wait: 'not stable'};
  let [x, y] = P.reveal(e);
  if (!needPointer) return {x, y};
  let cover = P.cover(e, x, y);
  if (cover && cover.kind === 'pinned') {  // under a sticky header or a bar: in the middle of the view it may be clear
    P.centre(e);
    [x, y] = P.point(e);
    cover = P.cover(e, x, y);
  }
  if (cover) return {wait: 'covered', by: cover.by, kind: cover.kind};
  return {x, y};
}"""

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

# Scrolls the element into the middle of every scroller above it, the frames above included.
CENTRE = "function () { this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'}); }"

# Scrolls the element into view inside every scroller that hides it; its point as CHECK gives it.
SCROLL_INTO_VIEW = """function () {
  const P = """ + helpers() + """;
  const e = this;
  if (!e.isConnected) return {error: 'removed'};
  const r = e.getBoundingClientRect();
  if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility !== 'visible') return {error: 'not visible'};
  const [x, y] = P.reveal(e);
  return {x, y};
}"""

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
