"""Small scripts that run in the page for element and tab actions, the same for every driver."""

from webhand.engine.settle import WATCH_DOM

# What a select offers, and which of the wanted values or labels it lacks.
OPTIONS = """(e, wanted) => {
  if (e.tagName !== 'SELECT') return {not_select: e.tagName.toLowerCase() + (e.type ? ' type=' + e.type : '')};
  const options = [...e.options].map(o => ({value: o.value, label: (o.label || o.textContent || '').trim()}));
  const missing = wanted.filter(w => !options.some(o => o.value === w || o.label === w));
  return {not_select: '', missing, multiple: e.multiple,
          options: options.map(o => o.label === o.value ? JSON.stringify(o.value) : JSON.stringify(o.label) + ' (value ' + JSON.stringify(o.value) + ')')};
}"""

# Can `fill` type into it (then it is focused and its text selected: typing replaces it), or does it
# take its value directly (date, color, range …: then it is set here)? `this` is the element. One
# call: visible, enabled and editable are all a fill needs (no stable box, no pointer), as
# Playwright's fill checks; focusing brings the field into view. It first starts counting the
# document's mutations, so that the reply knows whether typing changed anything but the field.
FILL_PREPARE = """function (value) {
  (""" + WATCH_DOM + """)(true);
  const e = this;
  if (!e.isConnected) return {error: 'removed'};
  const box = e.getBoundingClientRect();
  if (box.width === 0 || box.height === 0 || getComputedStyle(e).visibility !== 'visible') return {wait: 'not visible'};
  const direct = ['color', 'date', 'time', 'datetime-local', 'month', 'range', 'week'];
  if (e.tagName === 'INPUT') {
    const type = (e.type || 'text').toLowerCase();
    if (['checkbox', 'radio', 'file', 'submit', 'button', 'reset', 'image', 'hidden'].includes(type))
      return {error: 'not a text field', detail: 'Input of type "' + type + '" cannot be filled'};
    if (type === 'number' && value.trim() !== '' && isNaN(Number(value))) return {error: 'not a number'};
    if (e.disabled) return {wait: 'not enabled'};
    if (e.readOnly) return {wait: 'not editable'};
    if (direct.includes(type)) {
      e.focus(); e.value = value;
      if (e.value !== value) return {error: 'malformed', detail: 'Malformed value for input of type ' + type};
      e.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
      e.dispatchEvent(new Event('change', {bubbles: true}));
      return {done: true};
    }
    e.focus(); e.select(); return {};
  }
  if (e.tagName === 'TEXTAREA') {
    if (e.disabled) return {wait: 'not enabled'};
    if (e.readOnly) return {wait: 'not editable'};
    e.focus(); e.select(); return {};
  }
  if (e.isContentEditable) {
    e.focus();
    const range = document.createRange(); range.selectNodeContents(e);
    const selection = window.getSelection(); selection.removeAllRanges(); selection.addRange(range);
    return {};
  }
  return {error: 'not a text field'};
}"""

# Selects the options whose value or label is wanted (``this`` is the select); their labels.
SELECT = """function (wanted) {
  const e = this;
  for (const option of e.options) option.selected = wanted.includes(option.value) || wanted.includes((option.label || option.textContent || '').trim());
  e.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  e.dispatchEvent(new Event('change', {bubbles: true}));
  return [...e.selectedOptions].map(o => (o.label || o.textContent || '').trim());
}"""

# Whether a checkbox or radio (native or ARIA) is checked; ``error`` when it is neither.
CHECKED = """function () {
  const e = this;
  if (e.tagName === 'INPUT' && (e.type === 'checkbox' || e.type === 'radio')) return {state: e.checked, radio: e.type === 'radio'};
  const role = (e.getAttribute('role') || '').toLowerCase();
  if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role))
    return {state: e.getAttribute('aria-checked') === 'true', radio: role.includes('radio')};
  return {error: 'not a checkbox'};
}"""

# The kind of form field, so one call can fill fields of different kinds.
KIND = """e => {
  const tag = e.tagName, role = (e.getAttribute('role') || '').toLowerCase();
  if (tag === 'SELECT') return 'select';
  if (tag === 'INPUT') {
    const type = (e.type || 'text').toLowerCase();
    if (type === 'checkbox' || type === 'radio') return type;
    return ['button', 'submit', 'reset', 'image', 'file', 'hidden'].includes(type) ? 'other' : 'text';
  }
  if (tag === 'TEXTAREA' || e.isContentEditable || ['textbox', 'searchbox', 'combobox'].includes(role)) return 'text';
  if (role === 'checkbox' || role === 'switch') return 'checkbox';
  if (role === 'radio') return 'radio';
  return 'other';
}"""

# What a text field holds (value, or an editable element's text), and whether it is a password
# field, whose text a reply never quotes; null for an element that holds no text.
FIELD_TEXT = """e => {
  if (e.isContentEditable) return {text: e.innerText, hidden: false};
  if (typeof e.value === 'string' && (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA'))
    return {text: e.value, hidden: (e.type || '').toLowerCase() === 'password'};
  return null;
}"""

# Hides (``on``) or shows again the text of a field webhand typed a secret into: drawn as dots,
# as a password field's is, in every picture of the page (screenshots, video, the live view), while
# its value stays as typed. A custom property marks the fields so masked (MASKED_FIELDS).
MASK_TEXT = """e => on => {
  const s = e.style;
  if (on) {
    s.setProperty('-webkit-text-security', 'disc', 'important');
    s.setProperty('--webhand-secret', '1');
  } else if (s.getPropertyValue('--webhand-secret')) {
    s.removeProperty('-webkit-text-security');
    s.removeProperty('--webhand-secret');
  }
}"""

# How many fields of a document webhand masked (MASK_TEXT) still hold text.
MASKED_FIELDS = """() => [...document.querySelectorAll('[style*="--webhand-secret"]')]
  .filter(e => (typeof e.value === 'string' ? e.value : e.textContent) !== '').length"""

# One storage operation on window.localStorage / sessionStorage; returns every item afterwards.
WEB_STORAGE = """([area, operation, key, value]) => {
  const store = area === 'session' ? window.sessionStorage : window.localStorage;
  if (operation === 'set') store.setItem(key, value);
  else if (operation === 'delete') store.removeItem(key);
  else if (operation === 'clear') store.clear();
  const items = {};
  for (let i = 0; i < store.length; i++) { const k = store.key(i); items[k] = store.getItem(k); }
  return items;
}"""

# Scrolls the window by (x, y); returns where it is and the page's size.
SCROLL = """([x, y]) => { window.scrollBy(x, y); const e = document.scrollingElement || document.documentElement;
  return [Math.round(window.scrollX), Math.round(window.scrollY), e.scrollWidth, e.scrollHeight]; }"""


# A selector that finds the element on a fresh load: its id, a unique attribute people choose on
# purpose (test ids, names, labels), else the shortest unique :nth-of-type path from the nearest
# ancestor with an id. Ids that look generated (digits runs, colons) change between loads.
STABLE_SELECTOR = r"""e => {
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
}"""

# The stable selector of the element a ref names, in one round trip ("" when the ref is gone).
SELECTOR_OF_REF = ("r => { const e = window.__webhand && window.__webhand.resolve(r);"
                   " return e instanceof Element ? (" + STABLE_SELECTOR + ")(e) : ''; }")
