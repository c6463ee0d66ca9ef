// Accessibility semantics for the page agent: role, accessible name and states of an element.
// Plain function declarations, spliced into the agent function after snapshot.js (see
// snapshot.py: agent_script); they only read the DOM and never keep state.

const INTERACTIVE = new Set(['button', 'checkbox', 'combobox', 'link', 'listbox', 'menu', 'menuitem',
  'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'searchbox', 'slider', 'spinbutton',
  'switch', 'tab', 'textbox', 'treeitem', 'gridcell']);
// Shown in interactive mode without a ref, when named: they tell the model where it is and what happened.
const CONTEXT = new Set(['heading', 'alert', 'status', 'dialog', 'alertdialog', 'log', 'group', 'radiogroup']);
// Context roles whose content is more than their name: the walk goes on inside them.
const CONTAINERS = new Set(['dialog', 'alertdialog', 'group', 'radiogroup']);
const LANDMARK = new Set(['banner', 'main', 'navigation', 'contentinfo', 'complementary', 'form', 'region', 'search']);
const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox',
  'menuitemradio', 'treeitem', 'cell', 'columnheader', 'rowheader', 'gridcell', 'checkbox', 'radio', 'switch',
  'listitem', 'paragraph', 'alert', 'status', 'tooltip', 'legend', 'caption', 'term', 'definition', 'clickable']);
const SKIP_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE']);
const INPUT_ROLES = {
  button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox', radio: 'radio',
  range: 'slider', number: 'spinbutton', search: 'searchbox', email: 'textbox', tel: 'textbox', text: 'textbox',
  url: 'textbox', password: 'textbox', date: 'textbox', 'datetime-local': 'textbox', month: 'textbox',
  time: 'textbox', week: 'textbox', color: 'button', file: 'button',
};
// A control with one of these inside is a container too: the walk must reach the inner controls.
const CONTROL_SELECTOR = 'a[href],button,input,select,textarea,[role],[onclick],[tabindex]';

function roleOf(el) {
  const explicit = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
  if (!explicit || explicit === 'none' || explicit === 'presentation' || explicit === 'generic') return nativeRole(el);
  if (INTERACTIVE.has(explicit)) return explicit;
  // A link or button keeps its own role under a non-widget one (role="doc-noteref" on a link is
  // still a link to click): a control must never lose its ref to a decorative role.
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

const squash = (s) => (s || '').replace(/\s+/g, ' ').trim();
const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

function textOf(node, budget) {
  // Rendered-ish text of a subtree (through shadow roots and slots, with img alt), bounded so a
  // huge card costs nothing.
  let out = '';
  const walk = (n) => {
    if (out.length > budget) return;
    if (n.nodeType === 3) { out += n.data; return; }
    if (n.nodeType !== 1 || SKIP_TAGS.has(n.tagName)) return;
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
    if (/^(DIV|P|LI|TR|BR|H[1-6])$/.test(n.tagName)) out += ' ';
  };
  walk(node);
  return squash(out);
}

function nameOf(el, role) {
  const labelledBy = el.getAttribute('aria-labelledby');
  if (labelledBy) {
    const root = el.getRootNode();
    const text = labelledBy.split(/\s+/).map((id) => {
      const target = root.getElementById ? root.getElementById(id) : document.getElementById(id);
      return target ? textOf(target, 200) : '';
    }).join(' ');
    if (squash(text)) return squash(text);
  }
  const aria = el.getAttribute('aria-label');
  if (aria && squash(aria)) return squash(aria);
  const tag = el.tagName;
  if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (['button', 'submit', 'reset'].includes(type)) return el.value || (type === 'reset' ? 'Reset' : type === 'submit' ? 'Submit' : '');
    if (type === 'image') return el.getAttribute('alt') || 'Submit';
    const labels = el.labels ? Array.from(el.labels).map((l) => textOf(l, 200)).filter(Boolean) : [];
    if (labels.length) return squash(labels.join(' '));
    return squash(el.getAttribute('title') || el.getAttribute('placeholder') || '');
  }
  if (tag === 'IMG') return squash(el.getAttribute('alt') || el.getAttribute('title') || '');
  if (tag === 'IFRAME') return squash(el.getAttribute('title') || el.getAttribute('name') || '');
  if (tag === 'FIELDSET') { const legend = el.querySelector(':scope > legend'); if (legend) return textOf(legend, 200); }
  // An element clickable without a role is named by its tooltip first (an icon's "×" says less).
  if (role === 'clickable' && el.getAttribute('title')) return squash(el.getAttribute('title'));
  if (NAME_FROM_CONTENT.has(role) || INTERACTIVE.has(role)) {
    const text = textOf(el, 300);
    if (text) return text;
  }
  return squash(el.getAttribute('title') || '');
}

function isClickableWithoutRole(el, pointerAbove, style) {
  if (el.tagName === 'LABEL' && el.control) return false;  // clicking it clicks its control, which has a ref
  if (el.hasAttribute('onclick') || typeof el.onclick === 'function') return true;
  const tabindex = el.getAttribute('tabindex');
  if (tabindex !== null && Number(tabindex) >= 0) return true;
  // A pointer cursor is inherited: only its first owner counts. On the page itself it means nothing.
  if (pointerAbove || el === document.body || el === document.documentElement) return false;
  return style.cursor === 'pointer';
}

function shortUrl(href) {
  try {
    const url = new URL(href, location.href);
    if (url.protocol === 'javascript:') return '';
    if (url.origin !== location.origin) return clip(url.href, 80);
    // As short as it stays unambiguous on this page: "#part", "other.html", "/path", then full.
    // A link to this very page is its fragment; a bare "#" (a link scripts handle) stays "#".
    if (url.pathname === location.pathname && url.search === location.search) return clip(url.hash || '#', 80);
    const folder = location.pathname.slice(0, location.pathname.lastIndexOf('/') + 1);
    const rest = url.pathname.startsWith(folder) && folder !== '/' ? url.pathname.slice(folder.length) : url.pathname;
    return clip((rest || './') + url.search + url.hash, 80);
  } catch (e) { return ''; }
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
      s.push(type === 'password' ? 'value=<hidden>' : 'value=' + JSON.stringify(clip(el.value, 100)));
    } else if (!el.value && el.placeholder && el.placeholder !== name) {
      s.push('placeholder=' + JSON.stringify(clip(el.placeholder, 60)));
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
    s.push('value=' + (aria('valuetext') ? JSON.stringify(clip(aria('valuetext'), 60)) : aria('valuenow')));
  } else if (role === 'combobox') {
    const text = textOf(el, 100);  // a custom combobox shows its current choice as its content
    if (text && text !== name) s.push('value=' + JSON.stringify(clip(text, 100)));
  }
  if (role === 'link') { const u = shortUrl(el.getAttribute('href') || ''); if (u) s.push('url=' + u); }
  return s;
}

