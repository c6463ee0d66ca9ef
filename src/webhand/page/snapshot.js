// webhand's page agent: installed once per document (in every frame), it walks the DOM into a
// compact accessibility outline and remembers which element each ref was given to.
//
// Why our own walker and not a CSS selector per ref: a ref must resolve to exactly the element it
// was given to. `refOf` maps element -> ref (stable while the element lives), `byRef` maps
// ref -> WeakRef(element). The counter is seeded by Python so that a new document never reuses a
// ref an older document handed out: an old ref fails instead of hitting a look-alike.
() => {
  if (window.__webhand && window.__webhand.version === 1) return;

  const refOf = new WeakMap();
  const byRef = new Map();
  const frameMarkers = new WeakMap();
  let frameSeq = 0;

  const INTERACTIVE = new Set(['button', 'checkbox', 'combobox', 'link', 'listbox', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'searchbox', 'slider', 'spinbutton',
    'switch', 'tab', 'textbox', 'treeitem', 'gridcell']);
  // Shown in interactive mode without a ref: they tell the model where it is and what happened.
  const CONTEXT = new Set(['heading', 'alert', 'status', 'dialog', 'alertdialog', 'log']);
  const LANDMARK = new Set(['banner', 'main', 'navigation', 'contentinfo', 'complementary', 'form', 'region', 'search']);
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'treeitem', 'cell', 'columnheader', 'rowheader', 'gridcell', 'checkbox', 'radio', 'switch',
    'listitem', 'paragraph', 'alert', 'status', 'tooltip', 'legend', 'caption', 'term', 'definition']);
  const SKIP_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE']);
  const INPUT_ROLES = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox', radio: 'radio',
    range: 'slider', number: 'spinbutton', search: 'searchbox', email: 'textbox', tel: 'textbox', text: 'textbox',
    url: 'textbox', password: 'textbox', date: 'textbox', 'datetime-local': 'textbox', month: 'textbox',
    time: 'textbox', week: 'textbox', color: 'button', file: 'button',
  };

  function roleOf(el) {
    const explicit = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (explicit && explicit !== 'none' && explicit !== 'presentation') return explicit;
    const tag = el.tagName;
    switch (tag) {
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
    // Visible-ish text of a subtree, with img alt, bounded so a huge card costs nothing.
    let out = '';
    const walk = (n) => {
      if (out.length > budget) return;
      if (n.nodeType === 3) { out += n.data; return; }
      if (n.nodeType !== 1 || SKIP_TAGS.has(n.tagName)) return;
      if (n.getAttribute('aria-hidden') === 'true') return;
      if (n.tagName === 'IMG') { out += ' ' + (n.getAttribute('alt') || '') + ' '; return; }
      const label = n.getAttribute('aria-label');
      if (label && n !== node) { out += ' ' + label + ' '; return; }
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
    if (tag === 'FIELDSET') { const l = el.querySelector('legend'); if (l) return textOf(l, 200); }
    if (NAME_FROM_CONTENT.has(role) || INTERACTIVE.has(role)) {
      const text = textOf(el, 300);
      if (text) return text;
    }
    return squash(el.getAttribute('title') || '');
  }

  function isVisible(el) {
    if (el.checkVisibility) return el.checkVisibility({ visibilityProperty: true });
    const style = getComputedStyle(el);
    return style.display !== 'none' && style.visibility !== 'hidden';
  }

  function isClickableWithoutRole(el, parentClickable) {
    if (el.hasAttribute('onclick')) return true;
    const tabindex = el.getAttribute('tabindex');
    if (tabindex !== null && Number(tabindex) >= 0) return true;
    if (parentClickable) return false;  // a pointer cursor is inherited: only its first owner counts
    return getComputedStyle(el).cursor === 'pointer';
  }

  function shortUrl(href) {
    try {
      const url = new URL(href, location.href);
      if (url.protocol === 'javascript:') return '';
      const same = url.origin === location.origin;
      return clip(same ? url.pathname + url.search + url.hash : url.href, 80);
    } catch (e) { return ''; }
  }

  function deepActiveElement() {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  }

  function statesOf(el, role, focused) {
    const s = [];
    const aria = (name) => el.getAttribute('aria-' + name);
    if (role === 'heading') {
      const level = aria('level') || (/^H([1-6])$/.exec(el.tagName) || [])[1];
      if (level) s.push('level=' + level);
    }
    if (el.disabled || aria('disabled') === 'true') s.push('disabled');
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
      const checked = el.tagName === 'INPUT' ? (el.indeterminate ? 'mixed' : el.checked) : aria('checked');
      if (checked === true || checked === 'true') s.push('checked');
      else if (checked === 'mixed') s.push('mixed');
    }
    if (aria('expanded')) s.push(aria('expanded') === 'true' ? 'expanded' : 'collapsed');
    if (el.tagName === 'DETAILS' || (el.tagName === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS'))
      s.push((el.tagName === 'DETAILS' ? el : el.parentElement).open ? 'expanded' : 'collapsed');
    if (role === 'option' ? (el.selected || aria('selected') === 'true') : aria('selected') === 'true') s.push('selected');
    if (aria('pressed') === 'true') s.push('pressed');
    if (el.required || aria('required') === 'true') s.push('required');
    if (aria('invalid') === 'true' || (el.matches && el.matches(':user-invalid'))) s.push('invalid');
    if (el.readOnly || aria('readonly') === 'true') s.push('readonly');
    if (el === focused) s.push('focused');
    if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (!['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file'].includes(type) && el.value) {
        s.push(type === 'password' ? 'value=<hidden>' : 'value=' + JSON.stringify(clip(el.value, 100)));
      }
      if (type === 'range' || type === 'number') { if (el.min) s.push('min=' + el.min); if (el.max) s.push('max=' + el.max); }
      if (type === 'file' && el.files && el.files.length) s.push('files=' + Array.from(el.files).map((f) => f.name).join(','));
    } else if (el.tagName === 'SELECT') {
      const chosen = Array.from(el.selectedOptions).map((o) => squash(o.label || o.text));
      if (chosen.length) s.push('value=' + JSON.stringify(clip(chosen.join(', '), 100)));
    } else if (el.isContentEditable && role === 'textbox') {
      const text = textOf(el, 100);
      if (text) s.push('value=' + JSON.stringify(clip(text, 100)));
    } else if (aria('valuenow')) {
      s.push('value=' + aria('valuenow'));
    }
    if (role === 'link') { const u = shortUrl(el.getAttribute('href') || ''); if (u) s.push('url=' + u); }
    return s;
  }

  function refFor(el, state) {
    let ref = refOf.get(el);
    if (!ref) {
      ref = 'e' + state.nextRef++;
      refOf.set(el, ref);
    }
    byRef.set(ref, new WeakRef(el));
    return ref;
  }

  function snapshot(opts) {
    const mode = opts.mode || 'interactive';
    const full = mode === 'full';
    const maxDepth = opts.depth == null ? Infinity : opts.depth;
    const maxRefs = opts.maxRefs == null ? Infinity : opts.maxRefs;
    const state = { nextRef: Math.max(opts.nextRef || 1, 1), refs: 0, omitted: 0, frames: [] };
    const lines = [];
    const prefix = opts.prefix || '';
    const focused = deepActiveElement();
    let root = document.body || document.documentElement;
    if (opts.scope) {
      root = opts.scope.startsWith('ref:') ? resolve(opts.scope.slice(4)) : document.querySelector(opts.scope);
      if (!root || typeof root === 'string') return { error: 'scope', lines: [], nextRef: state.nextRef };
    }

    const emit = (depth, text) => lines.push(' '.repeat(depth) + text);

    // Returns nothing; appends lines. `depth` counts emitted ancestors, not DOM ancestors.
    function visit(node, depth, clickableAbove) {
      if (node.nodeType === 3) {
        if (full) { const t = squash(node.data); if (t) emit(depth, JSON.stringify(clip(t, 200))); }
        return;
      }
      if (node.nodeType !== 1 || SKIP_TAGS.has(node.tagName)) return;
      const el = node;
      if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return;
      if (el.tagName === 'SLOT') { for (const n of el.assignedNodes({ flatten: true })) visit(n, depth, clickableAbove); return; }
      const visible = isVisible(el);
      if (!visible && el.tagName !== 'OPTION') {
        // display:contents elements report invisible but their children render.
        if (getComputedStyle(el).display !== 'contents') return;
      }

      let role = roleOf(el);
      let interactive = INTERACTIVE.has(role);
      let clickable = false;
      if (!interactive && !role) {
        clickable = isClickableWithoutRole(el, clickableAbove);
        if (clickable) role = 'clickable';
      }
      const actionable = interactive || clickable;

      if (role === 'iframe') {
        let marker = frameMarkers.get(el);
        if (!marker) { marker = 'm' + (++frameSeq); frameMarkers.set(el, marker); }
        const name = nameOf(el, role);
        emit(depth, 'iframe' + (name ? ' ' + JSON.stringify(clip(name, 80)) : ''));
        lines.push({ frame: marker, depth: depth + 1 });
        return;
      }

      let shown = false;
      let childDepth = depth;
      if (depth < maxDepth) {
        if (actionable) {
          if (state.refs >= maxRefs) {
            state.omitted++;
          } else {
            state.refs++;
            const name = clip(nameOf(el, role), 100);
            const states = statesOf(el, role, focused);
            emit(depth, role + (name ? ' ' + JSON.stringify(name) : '') + ' [' + prefix + refFor(el, state) + ']' +
              (states.length ? ' ' + states.join(' ') : ''));
            shown = true;
          }
        } else if (role && (full || CONTEXT.has(role))) {
          const name = clip(nameOf(el, role), 150);
          const states = statesOf(el, role, focused);
          const simpleText = full && name && NAME_FROM_CONTENT.has(role) && !el.querySelector('a,button,input,select,textarea,[role],[onclick],[tabindex]');
          if (role === 'heading' && !full) {
            const level = Number((states.find((s) => s.startsWith('level=')) || 'level=2').slice(6));
            emit(depth, '#'.repeat(level) + ' ' + (name || ''));
          } else {
            emit(depth, role + (name ? (simpleText ? ': ' + name : ' ' + JSON.stringify(name)) : '') + (states.length ? ' [' + states.join(' ') + ']' : ''));
          }
          shown = true;
          if (simpleText || (!full && role !== 'dialog' && role !== 'alertdialog')) return;  // its text is its name
        } else if (full && LANDMARK.has(role)) {
          emit(depth, role);
          shown = true;
        }
      } else if (actionable) {
        state.omitted++;
      }
      if (shown && full) childDepth = depth + 1;
      // Children of a control are its content (already its name), except for listboxes/menus
      // and selects whose options a model may want, and containers with their own controls.
      if (actionable && shown && !['listbox', 'combobox', 'menu', 'tree', 'tablist', 'clickable', 'gridcell'].includes(role)
          && !el.querySelector('a[href],button,input,select,textarea,[role],[onclick],[tabindex]')) return;
      if (el.tagName === 'SELECT' && !full) return;  // the chosen value is on its line; options cost tokens
      const kids = el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes;
      for (const child of kids) visit(child, childDepth, clickableAbove || actionable);
    }

    visit(root, 0, false);
    return { lines, nextRef: state.nextRef, refs: state.refs, omitted: state.omitted };
  }

  function resolve(ref) {
    const weak = byRef.get(ref);
    if (!weak) return 'unknown';
    const el = weak.deref();
    if (!el || !el.isConnected) { byRef.delete(ref); return 'removed'; }
    return el;
  }

  function frameMarker(iframe) { return frameMarkers.get(iframe) || null; }

  Object.defineProperty(window, '__webhand', {
    value: Object.freeze({ version: 1, snapshot, resolve, frameMarker, refOf: (el) => refOf.get(el) || null }),
    configurable: true, enumerable: false,
  });
}
