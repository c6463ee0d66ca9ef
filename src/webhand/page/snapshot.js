// webhand's page agent: installed once per document (in every frame), it walks the DOM into a
// compact accessibility outline and remembers which element each ref was given to.
// Role, name and state rules are in roles.js; snapshot.py splices both into one function.
//
// Why our own walker and not a CSS selector per ref: a ref must resolve to exactly the element it
// was given to. `refOf` maps element -> ref (stable while the element lives), `byRef` maps
// ref -> WeakRef(element). The counter is seeded by Python so that a new document never reuses a
// ref an older document handed out: an old ref fails instead of hitting a look-alike.
if (window.__webhand && window.__webhand.version === 2) return;

const refOf = new WeakMap();
const byRef = new Map();
const frameMarkers = new WeakMap();
let frameSeq = 0;
// Controls whose children are choices a model may want (the rest: children are the name).
const DESCEND_INTO = new Set(['listbox', 'menu', 'menubar', 'tree', 'tablist', 'grid']);
// Live regions with nothing in them yet say nothing.
const QUIET_WHEN_EMPTY = new Set(['status', 'alert', 'log']);

function refFor(el, state) {
  let ref = refOf.get(el);
  if (!ref) {
    ref = 'e' + state.nextRef++;
    refOf.set(el, ref);
  }
  if (!byRef.has(ref)) byRef.set(ref, new WeakRef(el));
  return ref;
}

function record(el, role, name, ref) {
  // One element for browser_state: what a program needs to decide and act, no layout.
  const attributes = {};
  for (const a of el.attributes) {
    if (a.name === 'style' || a.name.startsWith('on')) continue;
    if (a.name === 'value' && (el.type || '').toLowerCase() === 'password') continue;
    attributes[a.name] = clip(a.value, 200);
  }
  const valued = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
  return {
    ref, role, name, tag: el.tagName.toLowerCase(), type: el.tagName === 'INPUT' ? (el.type || 'text') : null,
    attributes, has_value: valued ? el.value !== '' : el.isContentEditable ? squash(el.textContent) !== '' : false,
    checked: 'checked' in el && (el.type === 'checkbox' || el.type === 'radio') ? el.checked
      : el.getAttribute('aria-checked') === null ? null : el.getAttribute('aria-checked') === 'true',
    disabled: !!el.disabled || el.getAttribute('aria-disabled') === 'true',
    required: !!el.required || el.getAttribute('aria-required') === 'true',
    read_only: !!el.readOnly || el.getAttribute('aria-readonly') === 'true',
  };
}

function forgetCollected() {
  // Refs of elements the page dropped and the garbage collector took can never resolve again.
  for (const [ref, weak] of byRef) if (!weak.deref()) byRef.delete(ref);
}

function snapshot(opts) {
  if (byRef.size > 5000) forgetCollected();
  const full = opts.mode === 'full';
  const maxDepth = opts.depth == null ? Infinity : opts.depth;
  const maxRefs = opts.maxRefs == null ? Infinity : opts.maxRefs;
  const state = { nextRef: Math.max(opts.nextRef || 1, 1), refs: 0, omitted: 0 };
  const records = opts.records ? [] : null;
  const lines = [];
  const prefix = opts.prefix || '';
  const focused = deepActiveElement();
  let root = document.body || document.documentElement;
  if (opts.scope) {
    try {
      root = opts.scope.startsWith('ref:') ? resolve(opts.scope.slice(4)) : document.querySelector(opts.scope);
    } catch (e) { return { error: 'selector', message: String(e.message || e) }; }
    if (!root || typeof root === 'string') return { error: 'scope' };
  }
  const emit = (depth, text) => lines.push(' '.repeat(depth) + text);

  // Appends lines. `depth` counts emitted ancestors, not DOM ancestors. `hiddenAbove`: the parent
  // is visibility:hidden, so its text is too (a child may still be visible by its own style).
  function visit(node, depth, pointerAbove, hiddenAbove) {
    if (node.nodeType === 3) {
      if (!full || hiddenAbove) return;
      const t = squash(node.data);
      if (t) emit(depth, JSON.stringify(clip(t, 200)));
      return;
    }
    if (node.nodeType !== 1 || SKIP_TAGS.has(node.tagName)) return;
    const el = node;
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return;
    const visitChildren = (d, clickable, hidden) => {
      for (const child of (el.shadowRoot || el).childNodes) visit(child, d, clickable, hidden);
    };
    if (el.tagName === 'SLOT') {
      const assigned = el.assignedNodes({ flatten: true });
      for (const n of assigned.length ? assigned : el.childNodes) visit(n, depth, pointerAbove, hiddenAbove);
      return;
    }
    // One computed style per element: the walk is linear in the page and this is its main cost.
    // Ancestors were checked on the way down, so the element's own display is enough.
    const style = getComputedStyle(el);
    if (style.display === 'none' && el.tagName !== 'OPTION') return;
    if (style.display === 'contents') { visitChildren(depth, pointerAbove, hiddenAbove); return; }
    if (style.contentVisibility === 'hidden') return;
    const hiddenSelf = style.visibility !== 'visible' && el.tagName !== 'OPTION';

    let role = roleOf(el);
    const interactive = INTERACTIVE.has(role) && !hiddenSelf;
    const clickable = !role && !hiddenSelf && isClickableWithoutRole(el, pointerAbove, style);
    if (clickable) role = 'clickable';
    const actionable = interactive || clickable;
    // Children inherit a pointer cursor from any ancestor that has one (a label, a link): only
    // the element where the pointer starts counts as clickable, never its inner spans.
    const pointerHere = actionable || style.cursor === 'pointer';

    if (role === 'iframe') {
      if (hiddenSelf) return;
      let marker = frameMarkers.get(el);
      if (!marker) { marker = 'm' + (++frameSeq); frameMarkers.set(el, marker); }
      const name = nameOf(el, role);
      emit(depth, 'iframe' + (name ? ' ' + JSON.stringify(clip(name, 80)) : ''));
      lines.push({ frame: marker, depth: depth + 1 });
      return;
    }
    // In full mode, a label's text is already the name of its control: don't say it twice.
    if (full && el.tagName === 'LABEL' && el.control && nameOf(el.control, roleOf(el.control))
        && Array.from(el.querySelectorAll(CONTROL_SELECTOR)).every((c) => c === el.control)) {
      if (el.contains(el.control)) visit(el.control, depth, pointerAbove, hiddenSelf);
      return;
    }

    let shown = false;
    let childDepth = depth;
    if (hiddenSelf) {
      // Invisible itself, but a visible child still shows: fall through to the children.
    } else if (depth < maxDepth) {
      if (actionable) {
        if (state.refs >= maxRefs) {
          state.omitted++;
        } else {
          state.refs++;
          const name = clip(nameOf(el, role), 100);
          const ref = refFor(el, state);
          const states = statesOf(el, role, focused, name);
          emit(depth, role + (name ? ' ' + JSON.stringify(name) : '') + ' [' + prefix + ref + ']' +
            (states.length ? ' ' + states.join(' ') : ''));
          if (records) records.push(record(el, role, name, prefix + ref));
          shown = true;
        }
      } else if (role && (full || CONTEXT.has(role))) {
        const name = clip(nameOf(el, role), 150);
        const container = CONTAINERS.has(role);
        const mayBeText = full && name && NAME_FROM_CONTENT.has(role);
        // A subtree query per element would make deep pages quadratic: only asked where it decides something.
        const hasControls = mayBeText || !full ? !!el.querySelector(CONTROL_SELECTOR) : true;
        const simpleText = mayBeText && !hasControls;
        if (!name && (QUIET_WHEN_EMPTY.has(role) || (!full && !container && !hasControls))) return;
        const states = statesOf(el, role, focused, name);
        if (role === 'heading' && !full) {
          const level = Number((states.find((s) => s.startsWith('level=')) || 'level=2').slice(6));
          emit(depth, '#'.repeat(level) + ' ' + name);
        } else if (!full && container && !name) {
          // An unnamed group tells nothing: its controls are listed without it.
        } else {
          emit(depth, role + (name ? (simpleText ? ': ' + name : ' ' + JSON.stringify(name)) : '') +
            (states.length ? ' [' + states.join(' ') + ']' : ''));
          shown = true;
        }
        // Its text is its name; but controls inside (a link in a heading) must still get refs.
        if (simpleText || (!full && !container && !hasControls)) return;
        if (shown) childDepth = depth + 1;
      } else if (full && LANDMARK.has(role)) {
        emit(depth, role);
        shown = true;
      }
    } else if (actionable) {
      state.omitted++;
    }
    if (shown && full) childDepth = depth + 1;
    if (actionable && shown && !DESCEND_INTO.has(role) && !(full && el.tagName === 'SELECT')
        && !el.querySelector(CONTROL_SELECTOR)) return;
    if (el.tagName === 'SELECT' && !full) return;  // the chosen value is on its line; options cost tokens
    if (el.tagName === 'DETAILS' && !el.open) {
      // A closed <details> shows only its summary (the rest is not rendered).
      const summary = Array.from(el.children).find((c) => c.tagName === 'SUMMARY');
      if (summary) visit(summary, childDepth, pointerHere, hiddenSelf);
      return;
    }
    if (role === 'group' && el.tagName === 'FIELDSET' && shown) {
      // The legend is the group's name: skip it among the children.
      for (const child of el.childNodes) {
        if (child.tagName !== 'LEGEND') visit(child, childDepth, pointerHere, hiddenSelf);
      }
      return;
    }
    visitChildren(childDepth, pointerHere, hiddenSelf);
  }

  visit(root, 0, false, false);
  return { lines, nextRef: state.nextRef, refs: state.refs, omitted: state.omitted, records };
}

function resolve(ref) {
  const weak = byRef.get(ref);
  if (!weak) return 'unknown';
  const el = weak.deref();
  if (!el || !el.isConnected) { byRef.delete(ref); return 'removed'; }
  return el;
}

function viewport() {
  return { scroll_x: window.scrollX, scroll_y: window.scrollY, width: window.innerWidth,
    height: window.innerHeight, device_scale: window.devicePixelRatio };
}

function frameMarker(iframe) { return frameMarkers.get(iframe) || null; }

Object.defineProperty(window, '__webhand', {
  value: Object.freeze({ version: 2, snapshot, resolve, frameMarker, viewport, refOf: (el) => refOf.get(el) || null }),
  configurable: true, enumerable: false,
});
