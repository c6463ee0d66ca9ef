// webhand's page agent: installed once per document (in every frame), it walks the DOM into a
// compact outline of what a reader sees and remembers which element each ref was given to.
// Roles and states are in roles.js, accessible names come from the bundled dom-accessibility-api
// (vendor/accname.js); snapshot.py splices the three into one function.
//
// Why our own walker and not a CSS selector per ref: a ref must resolve to exactly the element it
// was given to. `refOf` maps element -> ref (stable while the element lives), `byRef` maps
// ref -> WeakRef(element). The counter is seeded by Python so that a new document never reuses a
// ref an older document handed out: an old ref fails instead of hitting a look-alike.
//
// Modes: `page` (the default) keeps the visible text, folded into one line per rendered block,
// and every control; `interactive` keeps controls and headings only; `full` adds a line for every
// structural role (landmarks, lists, tables, paragraphs). In every mode a grid's rows are lines of
// their own with their cells under them, and the nodes of an SVG diagram are controls (svg.js).
if (window.__webhand && window.__webhand.version === 3) return;

const refOf = new WeakMap();
const byRef = new Map();
const frameMarkers = new WeakMap();
let frameSeq = 0;
// Which document this agent serves: an action's reply says "a new page" only when it changed
// (page/diff.py), not when a page re-rendered every element in place.
// A page that broke `crypto` or `addEventListener` must not break the snapshot: it only costs the
// diff its precision.
const documentId = (() => {
  try { return Array.from(crypto.getRandomValues(new Uint32Array(2)), (n) => n.toString(36)).join('.'); }
  catch (e) { return Math.random().toString(36).slice(2) + '.' + performance.timeOrigin; }
})();
// Where the last real pointer press went (its composed path): focus that landed there is the
// click's own, not news for the diff.
let pressedPath = [];
try { addEventListener('pointerdown', (e) => { if (e.isTrusted) pressedPath = e.composedPath(); }, true); } catch (e) {}
const followedPress = (el) => !!el && el !== document.body
  && pressedPath.some((n) => n === el || (n.tagName === 'LABEL' && n.control === el));
// Controls whose children are choices a model may want (the rest: children are the name).
const DESCEND_INTO = new Set(['listbox', 'menu', 'menubar', 'tree', 'tablist', 'grid', 'radiogroup']);
// Live regions with nothing in them yet say nothing.
const QUIET_WHEN_EMPTY = new Set(['status', 'alert', 'log']);
// Most lines of one <pre> kept: a listing is read, a log of thousands of lines is not.
const PRE_MAX_LINES = 200;
// Text that reads like a label: short, with a letter or digit. An unnamed control takes such text
// beside it as its hint instead of a line of its own; longer text (an instruction) stays a line.
const HINT_MAX = 40;
const LABEL_LIKE = /[\p{L}\p{N}]/u;
const labelLike = (text) => text.length <= HINT_MAX && LABEL_LIKE.test(text);
// A text line made only of punctuation and spaces, such as the dots between a menu's links.
const SEPARATOR_ONLY = /^[\p{P}\p{Z}|]+$/u;

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

// Whether the element has a box a pointer can hit: one of its boxes has an area, or (`content`) the
// boxes of what it holds do (a link of no height around a floated picture is still hit through it).
function hasArea(el, content) {
  for (const r of el.getClientRects()) if (r.width > 0 && r.height > 0) return true;
  if (!content || !el.firstChild) return false;
  const range = document.createRange();
  range.selectNodeContents(el);
  const r = range.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
}

// A file input is given its files, never hit: a page hides it and shows a button of its own.
const isFileInput = (el) => el.tagName === 'INPUT' && (el.type || '').toLowerCase() === 'file';

function forgetCollected() {
  // Refs of elements the page dropped and the garbage collector took can never resolve again.
  for (const [ref, weak] of byRef) if (!weak.deref()) byRef.delete(ref);
}

function snapshot(opts) {
  if (byRef.size > 5000) forgetCollected();
  const mode = opts.mode || 'page';
  const withText = mode !== 'interactive';
  const full = mode === 'full';
  const maxDepth = opts.depth == null ? Infinity : opts.depth;
  const maxRefs = opts.maxRefs == null ? Infinity : opts.maxRefs;
  const state = { nextRef: Math.max(opts.nextRef || 1, 1), refs: 0, omitted: 0 };
  const positions = {};  // ref -> [x, y] of each SVG node, inside its drawing: a move is a change (page/diff.py)
  const records = opts.records ? [] : null;
  const lines = [];  // strings, and {frame, depth} slots where a child frame's lines go
  const prefix = opts.prefix || '';
  const focused = deepActiveElement();
  let root = document.body || document.documentElement;
  if (opts.scope) {
    try {
      root = opts.scope.startsWith('ref:') ? resolve(opts.scope.slice(4)) : document.querySelector(opts.scope);
    } catch (e) { return { error: 'selector', message: String(e.message || e) }; }
    if (!root || typeof root === 'string') return { error: 'scope' };
  }

  // The text of the block being walked, not yet a line: inline pieces join into one line, and a
  // block boundary, a control or a heading ends it.
  let pieces = [];
  let piecesDepth = 0;
  let linePrefix = '';       // '## ' or 'paragraph: ': put before the next text line (its element's)
  let lastText = -1;         // index of the last line if it is a short text line (a hint candidate)
  let block = null;          // the innermost block element being walked: where a text line comes from
  let lastTextBlock = null;  // the block the last text line came from
  let awaitingHint = -1;     // index of an unnamed checkbox/radio line that takes the text after it
  let textOn = 0;            // > 0 inside a heading or live region: its text is read in every mode
  let textOff = 0;           // > 0 inside a label whose text is its control's name
  let clippedAway = 0;       // > 0 inside a box of no area that clips its content: nothing there can be hit
  let pre = null;            // inside a <pre>: {lines} kept so far (its line breaks are the text's own)
  let rowCells = 0;          // > 0 inside a grid row of text only: its cells join into the row's line
  const grids = [];          // the grids being walked, each with the rows (by aria-rowindex) it holds

  const push = (depth, text) => {
    lines.push(' '.repeat(depth) + text);
    lastText = -1;
    awaitingHint = -1;
  };
  const takeText = () => {
    const text = defuse(squash(pieces.join('')).replace(/^\|\s*|\s*\|$/g, ''));
    pieces = [];
    return text;
  };
  // Ends the current text line. `boundary`: a block ends here, so a control waiting for the text
  // after it (a checkbox's label) must not take the next block's text.
  const flush = (boundary) => {
    let text = pieces.length ? takeText() : '';
    if (SEPARATOR_ONLY.test(text)) text = '';  // "·" or "|" between links carries nothing
    if (text && awaitingHint >= 0 && !linePrefix && labelLike(text)) {
      lines[awaitingHint] += ' hint=' + JSON.stringify(text);
      awaitingHint = -1;
    } else if (text) {
      const line = linePrefix + text;
      linePrefix = '';
      push(piecesDepth, line);
      if (line === text && labelLike(text)) { lastText = lines.length - 1; lastTextBlock = block; }
    }
    if (boundary) awaitingHint = -1;
  };
  const addText = (depth, text) => {
    if (!pieces.length) piecesDepth = depth;
    pieces.push(text);
  };
  // Text inside a <pre>: each of its line breaks ends a line.
  const addPreText = (depth, text) => {
    const parts = text.split(/\r\n|\r|\n/);
    parts.forEach((part, i) => {
      if (i > 0) { flush(false); if (pre.lines < PRE_MAX_LINES) pre.lines++; }
      if (pre.lines >= PRE_MAX_LINES) { if (i > 0) pre.dropped++; return; }
      addText(depth, part);
    });
  };

  // Appends lines. `depth` counts emitted ancestors, not DOM ancestors. `hiddenAbove`: the parent
  // is visibility:hidden, so its text is too (a child may still be visible by its own style).
  function visit(node, depth, pointerAbove, hiddenAbove) {
    if (node.nodeType === 3) {
      if ((withText || textOn) && !textOff && !hiddenAbove && !clippedAway && depth < maxDepth) {
        if (pre) addPreText(depth, node.data);
        else addText(depth, node.data);
      }
      return;
    }
    if (node.nodeType !== 1 || SKIP_TAGS.has(node.localName)) return;
    const el = node;
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return;
    const visitChildren = (d, pointer, hidden) => {
      for (const child of (el.shadowRoot || el).childNodes) visit(child, d, pointer, hidden);
    };
    if (el.localName === 'slot') {
      const assigned = el.assignedNodes({ flatten: true });
      for (const n of assigned.length ? assigned : el.childNodes) visit(n, depth, pointerAbove, hiddenAbove);
      return;
    }
    if (el.localName === 'br') { flush(false); return; }
    // One computed style per element: the walk is linear in the page and this is its main cost.
    // Ancestors were checked on the way down, so the element's own display is enough.
    const style = getComputedStyle(el);
    const display = style.display;
    if (display === 'none' && el.tagName !== 'OPTION') return;
    if (display === 'contents') { visitChildren(depth, pointerAbove, hiddenAbove); return; }
    if (style.contentVisibility === 'hidden') return;
    const hiddenSelf = style.visibility !== 'visible' && el.tagName !== 'OPTION';
    // Each element of a drawing is placed on its own (a <text> beside another is not one word with it).
    const drawn = el.namespaceURI === SVG_NS && el.localName !== 'svg' && !SVG_INLINE.has(el.localName);
    let role = roleOf(el);
    const cell = rowCells > 0 && CELL_ROLES.has(role);
    const isBlock = !rowCells && (drawn || (!display.startsWith('inline') && display !== 'table-cell'));
    if ((display === 'table-cell' || cell) && pieces.length) pieces.push(' | ');
    // An inline-block (a button, a tag) is a box of its own: its words never run into its neighbours'.
    let atomic = display !== 'inline' && !isBlock;
    if (atomic) addText(depth, ' ');

    const clips = style.overflowX !== 'visible' || style.overflowY !== 'visible';
    // Only what can be seen and hit gets a ref: a control of no area, or one inside a clip of no
    // area, is text at most (an option of a drop-down <select> is chosen, never hit: it keeps its ref).
    // What it holds counts when it does not clip it (a link of no height around a floated picture).
    const hittable = () => (!clippedAway || style.position === 'fixed') && (el.tagName === 'OPTION' || isFileInput(el) || hasArea(el, !clips));
    const interactive = INTERACTIVE.has(role) && !hiddenSelf && hittable();
    const clickable = !role && !hiddenSelf && (isClickableWithoutRole(el, pointerAbove, style) || isSvgNode(el)) && hittable();
    if (clickable) role = 'clickable';
    const actionable = interactive || clickable;
    // Children inherit a pointer cursor from any ancestor that has one (a label, a link): only
    // the element where the pointer starts counts as clickable, never its inner spans.
    const pointerHere = actionable || style.cursor === 'pointer';

    if (role === 'iframe') {
      if (hiddenSelf) return;
      flush(true);
      let marker = frameMarkers.get(el);
      if (!marker) { marker = 'm' + (++frameSeq); frameMarkers.set(el, marker); }
      const name = nameOf(el, role);
      push(depth, 'iframe' + (name ? ' ' + JSON.stringify(clip(name, 80)) : ''));
      lines.push({ frame: marker, depth: depth + 1 });
      return;
    }
    if (el.localName === 'svg' && !actionable) {
      // A drawing: its text is its <title> (the name), unless it holds controls, nodes or <text> to read.
      if (role === 'img' && withText) { flush(true); const name = nameOf(el, role); if (name) push(depth, 'img ' + JSON.stringify(clip(name, 150))); }
      if (!el.querySelector('a,text,[role],[onclick],[tabindex]') && !holdsSvgNodes(el)) return;
    }

    if (depth >= maxDepth) {
      if (actionable) state.omitted++;
      return;
    }
    if (isBlock) flush(true);
    const outerBlock = block;
    if (isBlock) block = el;
    // A box of no area that clips (a folded panel): nothing inside can be seen or hit, but what is
    // fixed to the viewport escapes it.
    const clipsAll = clips && !hasArea(el, false);
    const outerClip = clippedAway;
    if (style.position === 'fixed') clippedAway = 0;
    if (clipsAll) clippedAway++;
    const grid = GRID_ROLES.has(role) ? { rows: [] } : null;  // its rows, put in order when it ends
    if (grid) grids.push(grid);
    try {
      let childDepth = depth;
      let ownPrefix = false;  // this element's line prefix waits for its text: cleared when it leaves
      let nameText = false;   // a named control holding other controls: its text is its name, not said again
      let rowMark = null;     // a grid row: where its lines start, and its aria-rowindex
      if (hiddenSelf) {
        // Invisible itself, but a visible child still shows: fall through to the children.
      } else if (actionable) {
        if (state.refs >= maxRefs) {
          state.omitted++;
          if (!withText) return;
          // Past the cap its text still shows (without a ref, apart from its neighbours' words): the
          // model reads on and is told how to reach it.
          if (!atomic) { atomic = true; addText(depth, ' '); }
        } else {
          const line = controlLine(el, role);
          if (line.hint === null) {
            flush(false);
            push(depth, line.text);
          } else {
            // An unnamed control: the short text just before it (same line, or the line above) is its label.
            // The line above counts only when it is a label, or a sibling block of the control's.
            const before = pieces.length ? squash(pieces.join('')) : '';
            const above = lastText >= 0 && lines.length - 1 === lastText && lastTextBlock
              && (lastTextBlock.tagName === 'LABEL' || lastTextBlock.parentNode === el.parentNode);
            if (before && labelLike(before)) {
              pieces = [];
              push(depth, line.text + ' hint=' + JSON.stringify(defuse(before)));
            } else if (!before && above && line.hint === 'before') {
              const label = lines.pop().trim();
              push(depth, line.text + ' hint=' + JSON.stringify(label));
            } else {
              flush(false);
              push(depth, line.text);
              if (line.hint === 'after') awaitingHint = lines.length - 1;
            }
          }
          if (records) records.push(record(el, role, line.name, prefix + line.ref));
          const canvas = el.localName === 'svg' && holdsSvgNodes(el);
          if (el.namespaceURI === SVG_NS && !canvas) positions[prefix + line.ref] = svgPosition(el);
          // Its content is its name, unless it holds choices or other controls that need refs.
          if (!DESCEND_INTO.has(role) && !(full && el.tagName === 'SELECT') && !el.querySelector(ACTION_SELECTOR) && !canvas) return;
          if (el.tagName === 'SELECT' && !full && role !== 'listbox') return;
          childDepth = depth + 1;
          // Its text is its name, already on its line: inside, only the controls it holds are listed.
          if (NAME_FROM_CONTENT.has(role) && line.name && !canvas) nameText = true;
        }
      } else if (role === 'row' && isGridRow(el)) {
        // A row of a grid is a line of its own in every mode, its cells under it (or on it, when they
        // are text only); in `interactive` mode, where the cells' text is left out, it is named by it.
        flush(true);
        const states = statesOf(el, role, focused, '');
        const text = withText ? '' : clip(textOf(el, 300), 100);
        const head = 'row' + (text ? ' ' + JSON.stringify(defuse(text)) : '') +
          (states.length ? ' [' + states.join(' ') + ']' : '');
        if (!el.querySelector(ACTION_SELECTOR)) {
          if (!withText) return;  // nothing to act on, and its text is left out
          linePrefix = head + ': ';
          ownPrefix = true;
          rowCells++;
        } else {
          push(depth, head);
          childDepth = depth + 1;
        }
        rowMark = { index: Number(el.getAttribute('aria-rowindex')) || null, start: lines.length - (ownPrefix ? 0 : 1) };
      } else if (role === 'heading') {
        const level = Number(el.getAttribute('aria-level') || (/^H([1-6])$/.exec(el.tagName) || [])[1] || 2);
        flush(true);
        linePrefix = '#'.repeat(Math.min(Math.max(level, 1), 6)) + ' ';
        ownPrefix = true;
      } else if (role && role !== 'img' && (CONTEXT.has(role) || full)) {
        // A role worth a line: a dialog, a named group, a live region; in `full`, every structural role.
        const hasControls = !!el.querySelector(ACTION_SELECTOR);
        if (QUIET_WHEN_EMPTY.has(role) && !hasControls && !squash(el.textContent)) return;
        if (!hasControls && (LIVE.has(role) || (full && NAME_FROM_CONTENT.has(role)))) {
          flush(true);  // only text inside: one line, `status: text`
          linePrefix = role + ': ';
          ownPrefix = true;
        } else {
          const name = NAME_FROM_CONTENT.has(role) ? '' : clip(nameOf(el, role), 150);
          if (name || full || DIALOGS.has(role) || LIVE.has(role)) {
            flush(true);
            const states = statesOf(el, role, focused, name);
            push(depth, role + (name ? ' ' + JSON.stringify(defuse(name)) : '') + (states.length ? ' [' + states.join(' ') + ']' : ''));
            childDepth = depth + 1;
          }
        }
      } else if (role === 'img' && withText) {
        const name = nameOf(el, role);
        if (name) { flush(false); push(depth, 'img ' + JSON.stringify(defuse(clip(name, 150)))); }
      }
      // Headings and live regions are read even in `interactive` mode: they say where the model is
      // and what happened.
      if (ownPrefix) textOn++;

      // A label's text is already the name of its control: say it once, on the control's line. Only
      // when the control shows; a styled checkbox hides its input and the label is what a reader sees.
      const muted = nameText || (el.tagName === 'LABEL' && el.control && isRendered(el.control));
      if (muted) textOff++;
      if (el.tagName === 'DETAILS' && !el.open) {
        // A closed <details> shows only its summary (the rest is not rendered).
        const summary = Array.from(el.children).find((c) => c.tagName === 'SUMMARY');
        if (summary) visit(summary, childDepth, pointerHere, hiddenSelf);
      } else if (el.tagName === 'PRE' && !pre) {
        // Code and poems keep their line breaks (each line folded as any other, up to PRE_MAX_LINES).
        flush(true);
        pre = { lines: 0, dropped: 0 };
        try { visitChildren(childDepth, pointerHere, hiddenSelf); flush(false); } finally {
          if (pre.dropped) push(childDepth, '… ' + pre.dropped + ' more lines');
          pre = null;
        }
      } else if (el.tagName === 'FIELDSET' && childDepth > depth) {
        // The legend is the group's name: skip it among the children.
        for (const child of el.childNodes) {
          if (child.tagName !== 'LEGEND') visit(child, childDepth, pointerHere, hiddenSelf);
        }
      } else {
        visitChildren(childDepth, pointerHere, hiddenSelf);
      }
      if (isBlock || childDepth > depth || ownPrefix) flush(true);
      else if (atomic) addText(depth, ' ');
      if (ownPrefix) { linePrefix = ''; textOn--; }
      if (muted) textOff--;
      if (rowMark) {
        if (ownPrefix) rowCells--;
        const owner = grids[grids.length - 1];
        if (owner && lines.length > rowMark.start) owner.rows.push({ index: rowMark.index, start: rowMark.start, end: lines.length });
      }
    } finally {
      block = outerBlock;  // also on the early returns above
      clippedAway = outerClip;
      if (grid) { grids.pop(); orderRows(lines, grid.rows); }
    }
  }

  // One control's line: `role "name" [ref] states`. `hint` says where an unnamed control's label
  // text is likely to be (null: it has a name, or is a kind that takes none).
  function controlLine(el, role) {
    const name = clip(nameOf(el, role), 100);
    const ref = refFor(el, state);
    state.refs++;
    const states = statesOf(el, role, focused, name);
    const text = role + (name ? ' ' + JSON.stringify(defuse(name)) : '') + ' [' + prefix + ref + ']' +
      (states.length ? ' ' + states.join(' ') : '');
    const hint = name || !withText ? null : (role === 'checkbox' || role === 'radio' || role === 'switch') ? 'after' : 'before';
    return { text, name, ref, hint };
  }

  labelMaps = new Map();
  svgNodeCache = new Map();
  here = currentPlace();
  try {
    visit(root, 0, false, false);
  } finally {
    labelMaps = null;
    svgNodeCache = null;
    here = null;
  }
  flush(true);
  return { lines, nextRef: state.nextRef, refs: state.refs, omitted: state.omitted, records, positions,
    document: documentId, focusFollowedPress: followedPress(focused) };
}

function resolve(ref) {
  const weak = byRef.get(ref);
  if (!weak) return 'unknown';
  const el = weak.deref();
  // Not forgotten here: asking must not change the answer (the history asks before each action).
  if (!el || !el.isConnected) return 'removed';
  return el;
}

function viewport() {
  return { scroll_x: window.scrollX, scroll_y: window.scrollY, width: window.innerWidth,
    height: window.innerHeight, device_scale: window.devicePixelRatio };
}

function frameMarker(iframe) { return frameMarkers.get(iframe) || null; }

Object.defineProperty(window, '__webhand', {
  value: Object.freeze({ version: 3, snapshot, resolve, frameMarker, viewport, refOf: (el) => refOf.get(el) || null,
    // An element's role and name as its snapshot line gives them: what a click's reply names.
    label: (el) => { const role = roleOf(el) || el.tagName.toLowerCase(); return { role, name: clip(nameOf(el, role), 100) }; } }),
  configurable: true, enumerable: false,
});
