"""Is an element ready for a pointer action: attached, visible, stable, enabled, scrolled into
view and not covered. One script per attempt, retried on page events until the action's timeout,
the way Playwright's own checks retry; the last reason it was not ready goes into the error."""

from __future__ import annotations

# `this` is the element. Returns {x, y} (its centre, in its frame's viewport) when it can be
# acted on, or {wait: reason, by?} when not yet, or {error: reason} when it never will be.
CHECK = """async function (needEnabled, needPointer) {
  const e = this;
  if (!e.isConnected) return {error: 'removed'};
  const box = () => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const style = getComputedStyle(e);
  let [left, top, width, height] = box();
  if (width === 0 || height === 0 || style.visibility !== 'visible') return {wait: 'not visible'};
  if (needEnabled) {
    const disabled = (el) => {
      for (let n = el; n; n = n.parentElement) {
        if (['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP', 'FIELDSET'].includes(n.tagName) && n.disabled)
          return n === el || n.tagName === 'FIELDSET' || n.tagName === 'OPTGROUP';
        if (n.getAttribute && n.getAttribute('aria-disabled') === 'true') return true;
      }
      return false;
    };
    if (disabled(e)) return {wait: 'not enabled'};
  }
  const frame = () => new Promise(resolve => requestAnimationFrame(() => resolve()));
  await frame();
  const again = box();
  if (again[0] !== left || again[1] !== top || again[2] !== width || again[3] !== height) return {wait: 'not stable'};
  const view = [window.innerWidth, window.innerHeight];
  if (left < 0 || top < 0 || left + width > view[0] || top + height > view[1]) {
    e.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
    [left, top, width, height] = box();
  }
  const rects = e.getClientRects();
  const first = rects.length ? rects[0] : {left, top, width, height};
  const x = first.left + first.width / 2, y = first.top + first.height / 2;
  if (!needPointer) return {x, y};
  let hit = document.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  const inside = (n) => { for (let c = n; c; c = c.parentNode || c.host) if (c === e) return true; return false; };
  if (hit && !inside(hit)) {
    if (e.labels && [...e.labels].some(l => l.contains(hit))) return {x, y};  // its label covers it: a click there is a click on it
    const attrs = [...hit.attributes].slice(0, 3).map(a => a.name + '="' + a.value.slice(0, 40) + '"').join(' ');
    return {wait: 'covered', by: '<' + hit.tagName.toLowerCase() + (attrs ? ' ' + attrs : '') + '>'};
  }
  return {x, y};
}"""

# The content box of an iframe element, in its own frame's viewport: where its document starts.
FRAME_OFFSET = """function () {
  const r = this.getBoundingClientRect(), s = getComputedStyle(this);
  return [r.left + this.clientLeft + parseFloat(s.paddingLeft), r.top + this.clientTop + parseFloat(s.paddingTop)];
}"""

SELECT = """function (wanted) {
  const e = this;
  for (const option of e.options) option.selected = wanted.includes(option.value) || wanted.includes((option.label || option.textContent || '').trim());
  e.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  e.dispatchEvent(new Event('change', {bubbles: true}));
  return [...e.selectedOptions].map(o => (o.label || o.textContent || '').trim());
}"""

CHECKED = """function () {
  const e = this;
  if (e.tagName === 'INPUT' && (e.type === 'checkbox' || e.type === 'radio')) return {state: e.checked, radio: e.type === 'radio'};
  const role = (e.getAttribute('role') || '').toLowerCase();
  if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role))
    return {state: e.getAttribute('aria-checked') === 'true', radio: role.includes('radio')};
  return {error: 'not a checkbox'};
}"""

DESCRIBE = """function () { const e = this; const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').trim().slice(0, 40);
  return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (t ? ' "' + t + '"' : ''); }"""

SCROLL_INTO_VIEW = """function () { const e = this; if (!e.isConnected) return 'removed';
  const r = e.getBoundingClientRect();
  if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility !== 'visible') return 'not visible';
  if (r.top < 0 || r.left < 0 || r.bottom > window.innerHeight || r.right > window.innerWidth)
    e.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  return ''; }"""

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
