// Where a pointer action lands: an object of helpers, each taking the element the action is on.
// engine/pointer.py: _HELPERS, spliced into the pointer scripts as POINTER_HELPERS.
(() => {
  const up = (n) => n.assignedSlot || n.parentElement || (n.parentNode && n.parentNode.host) || null;
  const within = (outer, n) => { for (let c = n; c; c = up(c)) if (c === outer) return true; return false; };
  // Where a click on e goes: the centre of its first box (a link that wraps: its first line).
  const point = (e) => {
    const rects = e.getClientRects(), r = rects.length ? rects[0] : e.getBoundingClientRect();
    return [r.left + r.width / 2, r.top + r.height / 2];
  };
  // Whether (x, y) shows through every box that clips e (scrolled or clipped ancestors, a list box's
  // scroller) and its frame's viewport.
  const shown = (e, x, y) => {
    const doc = e.ownerDocument, view = doc.defaultView;
    if (x < 0 || y < 0 || x >= view.innerWidth || y >= view.innerHeight) return false;
    const propagated = view.getComputedStyle(doc.documentElement).overflow === 'visible';  // body's overflow is the viewport's
    for (let a = up(e); a && a !== doc.documentElement; a = up(a)) {
      if (a === doc.body && propagated) continue;
      if (a.tagName !== 'SELECT') {
        const s = view.getComputedStyle(a);
        if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      }
      const r = a.getBoundingClientRect(), left = r.left + a.clientLeft, top = r.top + a.clientTop;
      if (x < left || y < top || x >= left + a.clientWidth || y >= top + a.clientHeight) return false;
    }
    return true;
  };
  // Whether e is disabled: itself, by a disabled fieldset or optgroup around it, or by aria-disabled.
  const disabled = (e) => {
    for (let n = e; n; n = n.parentElement) {
      if (['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP', 'FIELDSET'].includes(n.tagName) && n.disabled)
        return n === e || n.tagName === 'FIELDSET' || n.tagName === 'OPTGROUP';
      if (n.getAttribute && n.getAttribute('aria-disabled') === 'true') return true;
    }
    return false;
  };
  const centre = (e) => e.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  // Scrolls e into the middle of whatever hides its click point; returns the point.
  const reveal = (e) => {
    const [x, y] = point(e);
    if (shown(e, x, y)) return [x, y];
    centre(e);
    return point(e);
  };
  const hitAt = (e, x, y) => {
    let hit = e.ownerDocument.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };
  // A short name of an element for an error: its tag and three telling attributes, on one line
  // (page text must not shape the reply).
  const describe = (n) => {
    const first = ['id', 'role', 'aria-label', 'aria-modal', 'class', 'name', 'title'];
    const rank = (a) => { const i = first.indexOf(a.name); return i < 0 ? first.length : i; };
    const attrs = [...n.attributes].sort((a, b) => rank(a) - rank(b)).slice(0, 3)
      .map(a => a.name + '="' + a.value.replace(/[\s"<>]+/g, ' ').slice(0, 40) + '"').join(' ');
    return '<' + n.tagName.toLowerCase() + (attrs ? ' ' + attrs : '') + '>';
  };
  const CONTROLS = 'a[href], button, input:not([type=hidden]), select, textarea, summary, iframe, ' +
                   '[contenteditable=""], [contenteditable=true], [tabindex]:not([tabindex^="-"])';
  // Whether root holds no focusable control but e, what is inside e, and controls of e's own role.
  const onlyControl = (root, e) => {
    const role = e.getAttribute('role');
    for (const c of root.querySelectorAll(CONTROLS)) {
      if (within(e, c) || (role && c.getAttribute('role') === role) || !c.getClientRects().length) continue;
      return false;
    }
    return true;
  };
  const DIALOG = 'dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true]';
  // What keeps a click at (x, y) from reaching e: null when nothing does (it lands on e, inside it,
  // on one of its labels or on another part of e's own widget), else {by, kind}.
  const cover = (e, x, y) => {
    const hit = hitAt(e, x, y);
    if (!hit || within(e, hit)) return null;
    if (e.labels && [...e.labels].some(l => within(l, hit))) return null;
    let root = hit;
    while (root && !within(root, e)) root = up(root);
    const doc = e.ownerDocument, view = doc.defaultView;
    const page = !root || root === doc.documentElement || root === doc.body;
    let pinned = null, dialog = null;  // the outermost fixed or sticky element, a dialog, between the hit and root
    for (let n = hit; n && n !== root; n = up(n)) {
      const position = view.getComputedStyle(n).position;
      if (position === 'fixed' || position === 'sticky') pinned = n;
      if (!dialog && n.matches(DIALOG)) dialog = n;
    }
    if (!page && !pinned && onlyControl(root, e)) return null;
    if (root === hit) return {by: describe(hit), kind: 'container'};
    const top = pinned || hit;
    if (!dialog && top.querySelector(DIALOG)) dialog = top;
    const box = top.getBoundingClientRect();
    const seen = Math.max(0, Math.min(box.right, view.innerWidth) - Math.max(box.left, 0)) *
                 Math.max(0, Math.min(box.bottom, view.innerHeight) - Math.max(box.top, 0));
    if (dialog || (pinned && seen >= view.innerWidth * view.innerHeight / 2)) return {by: describe(dialog && !pinned ? dialog : top), kind: 'dialog'};
    if (pinned) return {by: describe(pinned), kind: 'pinned'};
    return {by: describe(hit), kind: 'other'};
  };
  // The select of an option shown as a drop-down (not a list box): its options are drawn by the
  // browser's own popup, so a click on one is a choice of it.
  const dropdownOf = (e) => {
    if (e.tagName !== 'OPTION') return null;
    const select = e.closest('select');
    return select && !select.multiple && select.size <= 1 ? select : null;
  };
  // An element's role and name, as the page agent gives them (a snapshot was taken), else from its
  // tag and text; bounded, for a reply that quotes them as page text.
  const label = (n) => {
    const agent = n.ownerDocument.defaultView.__webhand;
    try { if (agent && agent.label) return agent.label(n); } catch (error) {}
    const text = (n.getAttribute('aria-label') || n.innerText || n.value || '').trim().replace(/\s+/g, ' ').slice(0, 100);
    return {role: n.getAttribute('role') || n.tagName.toLowerCase(), name: text};
  };
  return {within, point, shown, disabled, reveal, centre, hitAt, cover, dropdownOf, label};
})()
