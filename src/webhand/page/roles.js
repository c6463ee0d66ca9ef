// Accessibility semantics for the page agent: role and states of an element, and its accessible
// name through the bundled dom-accessibility-api (`accname`, W3C accname, tested against the
// web-platform-tests). Plain declarations, spliced into the agent function after snapshot.js
// (see snapshot.py: agent_script); they only read the DOM and never keep state.

const INTERACTIVE = new Set(['button', 'checkbox', 'combobox', 'link', 'listbox', 'menu', 'menuitem',
  'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'searchbox', 'slider', 'spinbutton',
  'switch', 'tab', 'textbox', 'treeitem', 'gridcell', ...['doc-backlink', 'doc-biblioref', 'doc-glossref', 'doc-noteref']]);
// Kinds of link (DPUB-ARIA): Chromium names them from their content, as it does links.
const LINK_ROLES = new Set(['doc-backlink', 'doc-biblioref', 'doc-glossref', 'doc-noteref']);
// Roles that get a line of their own outside `full` mode: where the model is, and what happened.
const CONTEXT = new Set(['alert', 'status', 'log', 'dialog', 'alertdialog', 'group', 'radiogroup']);
// Live regions: their text is the news, shown as `status: text`.
const LIVE = new Set(['alert', 'status', 'log']);
const DIALOGS = new Set(['dialog', 'alertdialog']);
// Roles named by their content (ARIA "name from content"): their text is shown, never a quoted name.
const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox',
  'menuitemradio', 'treeitem', 'cell', 'columnheader', 'rowheader', 'gridcell', 'checkbox', 'radio', 'switch',
  'listitem', 'paragraph', 'alert', 'status', 'log', 'tooltip', 'legend', 'caption', 'term', 'definition', 'clickable']);
// Never text: matched on localName, which keeps SVG's lowercase <style> and <title> out too.
const SKIP_TAGS = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'desc', 'defs']);
const INPUT_ROLES = {
  button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox', radio: 'radio',
  range: 'slider', number: 'spinbutton', search: 'searchbox', email: 'textbox', tel: 'textbox', text: 'textbox',
  url: 'textbox', password: 'textbox', date: 'textbox', 'datetime-local': 'textbox', month: 'textbox',
  time: 'textbox', week: 'textbox', color: 'button', file: 'button',
};
// What can be acted on: a control holding one of these is a container, and the walk goes on inside.
const ACTION_SELECTOR = 'a[href],area[href],button,input:not([type=hidden]),select,textarea,summary,[onclick],' +
  '[tabindex]:not([tabindex="-1"]),[contenteditable=""],[contenteditable=true],' +
  Array.from(INTERACTIVE, (r) => '[role=' + r + ']').join(',');

function roleOf(el) {
  const explicit = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
  if (!explicit || explicit === 'none' || explicit === 'presentation' || explicit === 'generic') return nativeRole(el);
  if (INTERACTIVE.has(explicit)) return explicit;
  // A link or button keeps its own role under a non-widget one (role="region" on a button): a
  // control must never lose its ref to a decorative role. Kinds of link (doc-noteref) are widgets.
  const native = nativeRole(el);
  return INTERACTIVE.has(native) ? native : explicit;
}

function nativeRole(el) {
  switch (el.tagName) {
    case 'A': case 'AREA': return el.hasAttribute('href') ? 'link' : '';
    case 'BUTTON': return 'button';
    case 'INPUT': {
      const type = (el.getAttribute('type') || 'text').toLowerCase();
      if (type === 'hidden') return '';
      if (el.hasAttribute('list') && ['text', 'search', 'email', 'url', 'tel'].includes(type)) return 'combobox';
      return INPUT_ROLES[type] || 'textbox';
    }
    case 'SELECT': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    case 'TEXTAREA': return 'textbox';
    case 'OPTION': return 'option';
    case 'SUMMARY': return 'button';
    case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
    case 'IMG': return el.getAttribute('alt') ? 'img' : '';
    case 'NAV': return 'navigation';
    case 'MAIN': return 'main';
    case 'ASIDE': return 'complementary';
    case 'FORM': return 'form';
    case 'DIALOG': return 'dialog';
    case 'FIELDSET': return 'group';
    case 'UL': case 'OL': return 'list';
    case 'LI': return 'listitem';
    case 'TABLE': return 'table';
    case 'TR': return 'row';
    case 'TD': return 'cell';
    case 'TH': return 'columnheader';
    case 'P': return 'paragraph';
    case 'IFRAME': case 'FRAME': return 'iframe';
    case 'HEADER': return el.closest('article,section,main,aside,nav') ? '' : 'banner';
    case 'FOOTER': return el.closest('article,section,main,aside,nav') ? '' : 'contentinfo';
    case 'SECTION': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : '';
  }
  if (el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable)) return 'textbox';
  return '';
}

// Break hints (<wbr> as an element, zero-width spaces, joiners, soft hyphens: BREAK_HINTS, and
// ANY_BREAK_HINT for a quick test, spliced in from engine/break_hints.py, one rule for Python and the page)
// show no character to a reader, and a model copying a name with one ("/pet\u200b/findByStatus")
// into a URL or a search gets it wrong: they are dropped from every name, value and text line.
const unhinted = (s) => (s && ANY_BREAK_HINT.test(s) ? s.replace(BREAK_HINTS, '') : s || '');
const squash = (s) => unhinted(s).replace(/\s+/g, ' ').trim();
// Cut at a word boundary when there is one in the second half: a cut word reads as another ("wit…").
function clip(s, n) {
  if (s.length <= n) return s;
  let cut = s.slice(0, n - 1);
  const space = /\s/.test(s.charAt(n - 1)) ? cut.length : cut.search(/\s\S*$/);
  if (space > n / 2) cut = cut.slice(0, space).replace(/[\s,;:]+$/, '');
  return cut + '…';
}

function textOf(node, budget) {
  // Rendered-ish text of a subtree (through shadow roots and slots, with img alt), bounded so a
  // huge card costs nothing.
  let out = '';
  const walk = (n) => {
    if (out.length > budget) return;
    if (n.nodeType === 3) { out += n.data; return; }
    if (n.nodeType !== 1 || SKIP_TAGS.has(n.localName)) return;
    if (n.getAttribute('aria-hidden') === 'true' || n.hidden) return;
    if (n.tagName === 'IMG') { out += ' ' + (n.getAttribute('alt') || '') + ' '; return; }
    const label = n.getAttribute('aria-label');
    if (label && n !== node) { out += ' ' + label + ' '; return; }
    if (n.tagName === 'SLOT') {
      const assigned = n.assignedNodes({ flatten: true });
      if (assigned.length) { assigned.forEach(walk); return; }
    }
    const root = n.shadowRoot || n;
    for (let c = root.firstChild; c; c = c.nextSibling) walk(c);
    if (/^(DIV|P|LI|TR|BR|H[1-6]|text)$/.test(n.tagName)) out += ' ';  // `text`: an SVG <text> is placed apart
  };
  walk(node);
  return squash(out);
}

// Chromium's name sources beyond accname: CSS generated content counts, an unlabelled field is
// named by its placeholder, and words are kept apart where Chromium sees a break that accname's
// `display` test misses: a replaced element such as an inline <svg> or <img> (an atomic box).
// accname sees them through a style that says so. Not a <wbr>: Chromium puts a space there
// ("/pet /{id}"), but it is a break hint, not a word break (see BREAK_HINTS).
const ATOMIC = new Set(['svg', 'img', 'canvas', 'video', 'audio', 'object', 'embed']);
const atomicStyle = (style) => ({ getPropertyValue: (p) => (p === 'display' ? 'inline-block' : style.getPropertyValue(p)) });
const NAME_OPTIONS = {
  computedStyleSupportsPseudoElements: true,
  getComputedStyle: (el, pseudo) => {
    const style = getComputedStyle(el, pseudo);
    return !pseudo && ATOMIC.has(el.localName) && style.display === 'inline' ? atomicStyle(style) : style;
  },
};

// Labels per tree root (the document, or a shadow root), mapped to their controls: built once per
// snapshot, because Chromium answers `element.labels` by scanning the whole tree each time.
let labelMaps = null;

function labelsOf(el) {
  if (!('labels' in el)) return undefined;  // not a labelable element
  if (!labelMaps) return el.labels;  // outside a snapshot walk
  const root = el.getRootNode();
  let map = labelMaps.get(root);
  if (!map) {
    map = new Map();
    for (const label of root.querySelectorAll('label')) {
      const control = label.control;
      if (control) map.set(control, (map.get(control) || []).concat(label));
    }
    labelMaps.set(root, map);
  }
  return map.get(el) || [];
}

function nameOf(el, role) {
  // Only controls named by their content: a text field's content is its value, never its name.
  const fromContent = role === 'clickable' || (INTERACTIVE.has(role) && (NAME_FROM_CONTENT.has(role) || LINK_ROLES.has(role)));
  const name = chromiumName(el, role) || (fromContent ? fallbackName(el) : '');
  return saidOnce(name);
}

function chromiumName(el, role) {
  // An element clickable without a role has no accessible name: we show its tooltip or text.
  if (role === 'clickable' && el.namespaceURI === SVG_NS) {
    // A diagram's node is named by its label; a canvas holding nodes is not named by all of theirs.
    const drawn = svgName(el);
    if (drawn || (el.localName === 'svg' && holdsSvgNodes(el))) return drawn;
  }
  if (role === 'clickable') return squash(el.getAttribute('title') || '') || textOf(el, 300);
  let name = '';
  try { name = squash(accname.computeAccessibleName(el, NAME_OPTIONS)); } catch (e) { name = ''; }
  // accname follows the role attribute; Chromium keeps a focusable link's own role under
  // role="presentation" (jQuery UI's tabs) and names kinds of link from content as links.
  if (!name && (LINK_ROLES.has(role) || NAME_FROM_CONTENT.has(role)) && !el.hasAttribute('aria-label')
      && !el.hasAttribute('aria-labelledby')) {
    name = squash(generated(el, '::before') + textOf(el, 300) + generated(el, '::after'));
  }
  if (!name && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA')) {
    name = squash(el.getAttribute('placeholder') || el.getAttribute('aria-placeholder') || '');
  }
  return name;
}

// A control Chromium leaves unnamed (an icon link) is named as the accname rules name it and as a
// sighted reader sees it: the tooltip of an icon inside (`<span title="Choose a Date">`), an image's
// alt, a drawing's <svg><title>, in the order they come; also when the icon is aria-hidden.
function fallbackName(el) {
  for (const inner of el.querySelectorAll('[title], img[alt], svg title')) {
    const shown = inner.localName === 'title' ? inner.parentElement : inner;
    if (!shown || (shown.checkVisibility && !shown.checkVisibility({ visibilityProperty: true }))) continue;
    const text = squash(inner.localName === 'title' ? inner.textContent
      : inner.localName === 'img' ? inner.getAttribute('alt') || inner.getAttribute('title') : inner.getAttribute('title'));
    if (text) return text;
  }
  return '';
}

// A button with no name at all (an icon with nothing to read) is still told apart: by its icon's
// file or class ("icon-trash.svg", `fa-trash`), else by its `name` or `id` when they read as words.
// Shown as a state, never as a name: the page did not give it this name. Buttons and the like only:
// a link shows its address, a field the text beside it (its hint).
const IDENTIFIED = new Set(['button', 'menuitem', 'tab', 'clickable']);
const ICON_CLASS = /^(?:fa|bi|mdi|icon|glyphicon|octicon|codicon|ti|ri|lucide)-([a-z][\w-]*)$/;
const ICON_MODIFIER = /^(?:solid|regular|light|thin|duotone|brands|fw|xs|sm|lg|xl|\dx|spin|pulse|border|inverse|flip-.*|rotate-.*|fill)$/;
const WORDLIKE = /^[A-Za-z][A-Za-z_-]*[A-Za-z]\d{0,3}$/;

function identity(el) {
  for (const inner of [el, ...el.querySelectorAll('img[src], use, [class]')]) {
    if (inner.localName === 'img') {
      // The file name as written (a %-escaped name does not read as words, and decoding may throw).
      const file = (inner.getAttribute('src') || '').split(/[?#]/)[0].split('/').pop();
      if (/^[\w-]{3,40}\.\w+$/.test(file)) return 'icon=' + JSON.stringify(file);
    } else if (inner.localName === 'use') {
      const ref = (inner.getAttribute('href') || inner.getAttribute('xlink:href') || '').split('#')[1] || '';
      if (WORDLIKE.test(ref)) return 'icon=' + JSON.stringify(ref);
    }
    for (const token of inner.classList || []) {
      const icon = ICON_CLASS.exec(token);
      if (icon && !ICON_MODIFIER.test(icon[1])) return 'icon=' + JSON.stringify(token);
    }
  }
  for (const key of ['name', 'id']) {
    const value = el.getAttribute(key) || '';
    if (WORDLIKE.test(value) && value.length <= 40) return key + '=' + JSON.stringify(value);
  }
  return '';
}

// A name that is one phrase said twice ("Python 3 (ipykernel) Python 3 (ipykernel)": an icon's alt
// and the label beside it) is said once. Only a phrase of two words or more: "Bora Bora" stays.
function saidOnce(name) {
  const half = (name.length - 1) / 2;
  const phrase = name.slice(0, half);
  return Number.isInteger(half) && name.charAt(half) === ' ' && phrase.includes(' ') && name.slice(half + 1) === phrase
    ? phrase : name;
}

// The text a CSS ::before/::after rule adds (`content: "["`), which Chromium counts in names.
function generated(el, pseudo) {
  const content = getComputedStyle(el, pseudo).content;
  return /^".*"$/.test(content) ? JSON.parse(content) : '';
}

// Page text must not pose as a ref: `[e12]` in a name, a value or a text line would point the
// model (and the diff, which matches lines by ref) at a real element. It is shown as `(e12)`.
const defuse = (s) => s.replace(/\[((?:f\d+)?e\d+)\]/g, '($1)');

function isClickableWithoutRole(el, pointerAbove, style) {
  if (el.tagName === 'LABEL' && el.control && isRendered(el.control)) return false;  // its control has the ref
  if (!isClickableAlone(el, pointerAbove, style)) return false;
  // A clickable wrapper around controls (a card, a row, a whole page) would only repeat them:
  // the controls inside carry the refs.
  return !el.querySelector(ACTION_SELECTOR);
}

function isClickableAlone(el, pointerAbove, style) {
  if (el.hasAttribute('onclick') || typeof el.onclick === 'function') return true;
  const tabindex = el.getAttribute('tabindex');
  if (tabindex !== null && Number(tabindex) >= 0) return true;
  // A pointer cursor is inherited: only its first owner counts. On the page itself it means nothing.
  if (pointerAbove || el === document.body || el === document.documentElement) return false;
  return style.cursor === 'pointer';
}

// Where the page is, read once per snapshot: `location` is slow to ask once per link.
let here = null;

function currentPlace() {
  if (here) return here;
  const { href, origin, pathname, search } = location;
  return { href, origin, pathname, search, folder: pathname.slice(0, pathname.lastIndexOf('/') + 1) };
}

function shortUrl(href) {
  try {
    // A bare "#" is a link scripts handle: it goes nowhere, and says so.
    if (href.trim() === '#') return '#';
    const place = currentPlace();
    const url = new URL(href, place.href);
    if (url.protocol === 'javascript:') return '';
    if (url.origin !== place.origin) return clip(url.href, 80);
    // As short as it stays unambiguous on this page: "#part", "other.html", "/path", then full.
    // A link to a part of this very page is its fragment; a link to the page itself (a menu's
    // current entry) is its address, never "#", which would read as a link to nowhere.
    if (url.pathname === place.pathname && url.search === place.search && url.hash) return clip(url.hash, 80);
    const folder = place.folder;
    const rest = url.pathname.startsWith(folder) && folder !== '/' ? url.pathname.slice(folder.length) : url.pathname;
    return clip((rest || url.pathname) + url.search + url.hash, 80);
  } catch (e) { return ''; }
}

function isRendered(el) {
  const style = getComputedStyle(el);
  return style.display !== 'none' && style.visibility === 'visible' && !el.closest('[aria-hidden=true]');
}

function deepActiveElement() {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

const NO_TEXT_VALUE = ['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color'];

function statesOf(el, role, focused, name) {
  const s = [];
  const aria = (key) => el.getAttribute('aria-' + key);
  const tag = el.tagName;
  if (role === 'heading') {
    const level = aria('level') || (/^H([1-6])$/.exec(tag) || [])[1];
    if (level) s.push('level=' + level);
  }
  if (el.disabled || aria('disabled') === 'true') s.push('disabled');
  if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role)) {
    const checked = tag === 'INPUT' ? (el.indeterminate ? 'mixed' : el.checked) : aria('checked');
    if (checked === true || checked === 'true') s.push('checked');
    else if (checked === 'mixed') s.push('mixed');
  }
  // Only "expanded" is said: a collapsed control reads as a plain one, which costs no tokens.
  if (aria('expanded') === 'true') s.push('expanded');
  else if (tag === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS' && el.parentElement.open)
    s.push('expanded');
  if (role === 'option' ? (el.selected || aria('selected') === 'true') : aria('selected') === 'true') s.push('selected');
  if (aria('pressed') === 'true') s.push('pressed');
  if (aria('current') && aria('current') !== 'false') s.push('current');
  if (el.required || aria('required') === 'true') s.push('required');
  if (aria('invalid') === 'true' || (el.matches && el.matches(':user-invalid'))) s.push('invalid');
  if (el.readOnly || aria('readonly') === 'true') s.push('readonly');
  if (el === focused) s.push('focused');
  if (tag === 'INPUT' || tag === 'TEXTAREA') {
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (!NO_TEXT_VALUE.includes(type) && el.value) {
      // A password's value never leaves the page: the model only learns that it is filled.
      s.push(type === 'password' ? 'value=<hidden>' : 'value=' + JSON.stringify(clip(unhinted(el.value), 100)));
    } else if (!el.value && squash(el.placeholder) && squash(el.placeholder) !== name) {
      s.push('placeholder=' + JSON.stringify(clip(squash(el.placeholder), 60)));
    }
    // A slider's range is needed to move it; a number field takes typed text and says invalid if out of range.
    if (type === 'range') s.push('value=' + el.value + ' (' + (el.min || '0') + '..' + (el.max || '100') + ')');
    if (type === 'file' && el.files && el.files.length) s.push('files=' + Array.from(el.files).map((f) => f.name).join(','));
  } else if (tag === 'SELECT') {
    const chosen = Array.from(el.selectedOptions).map((o) => squash(o.label || o.text));
    if (chosen.length) s.push('value=' + JSON.stringify(clip(chosen.join(', '), 100)));
  } else if (el.isContentEditable && role === 'textbox') {
    const text = textOf(el, 100);
    if (text) s.push('value=' + JSON.stringify(clip(text, 100)));
  } else if (aria('valuenow')) {
    s.push('value=' + (aria('valuetext') ? JSON.stringify(clip(squash(aria('valuetext')), 60)) : aria('valuenow')));
  } else if (role === 'combobox') {
    const text = textOf(el, 100);  // a custom combobox shows its current choice as its content
    if (text && text !== name) s.push('value=' + JSON.stringify(clip(text, 100)));
  }
  if (role === 'link') { const u = shortUrl(el.getAttribute('href') || ''); if (u) s.push('url=' + u); }
  if (!name && IDENTIFIED.has(role)) { const id = identity(el); if (id) s.push(id); }
  return s;
}

