// The page's own scheduling (short timers, animation frames, WebSocket sends), followed from the start of an action.
// engine/settle.py: WORK_HUB; SHORT_MS and SOCKET_QUIET_MS are its numbers.
() => {
  const known = window.__webhandWork;
  if (known && known.ours && known.ours.has(window.setTimeout) && known.ours.has(window.requestAnimationFrame))
    return known;
  const hub = known && known.ours ? known : {
    state: null, current: null, ours: new WeakSet(), ids: new Map(), frames: new Map(),
    native: {setTimeout: window.setTimeout, clearTimeout: window.clearTimeout,
             requestAnimationFrame: window.requestAnimationFrame}};
  const UNTRACKED = hub.untracked || (hub.untracked = {});
  const SHORT = SHORT_MS, SOCKET_QUIET = SOCKET_QUIET_MS, FRAME_DEPTH = 3, TIMER_DEPTH = 20;
  // Who scheduled this: the live watch when the page's own code runs at the top of a task (an
  // event handler, a response, a message), the callback's own watch inside a followed callback.
  const owner = () => {
    const c = hub.current, s = hub.state;
    if (c === UNTRACKED) return null;
    const w = c ? c.state : s;
    return w && w === s && performance.now() < w.until ? w : null;
  };
  // A token says what the work is in fields only (kind, a delay, a host): webhand words the reply
  // from them (``describe_work``), never from text the page could set.
  const add = (w, what) => { const token = what; w.work.add(token); return token; };
  const done = (w, token) => { if (w.work.delete(token) && !w.work.size && w.onIdle) w.onIdle(); };
  const host = url => { try { return new URL(String(url), location.href).host; } catch (_) { return ''; } };
  const run = (context, fn, self, args) => {
    const saved = hub.current; hub.current = context;
    try { return Reflect.apply(fn, self, args); } finally { hub.current = saved; }
  };
  const wrap = (name, handler) => {
    const original = window[name];
    if (typeof original !== 'function' || hub.ours.has(original)) return;
    const proxy = new Proxy(original, {apply: (target, self, args) => handler(target, self, args)});
    hub.ours.add(proxy);
    try { window[name] = proxy; } catch (_) {}
  };
  // The same for a method of a prototype (WebSocket.prototype.send): the property keeps its
  // descriptor, only its function becomes the Proxy.
  function method(proto, name, handler) {
    const found = proto && Object.getOwnPropertyDescriptor(proto, name);
    if (!found || typeof found.value !== 'function' || hub.ours.has(found.value)) return;
    const proxy = new Proxy(found.value, {apply: handler});
    hub.ours.add(proxy);
    try { Object.defineProperty(proto, name, {...found, value: proxy}); } catch (_) {}
  }
  const timer = repeat => (target, self, args) => {
    const fn = args[0], delay = Number(args[1]) || 0;
    if (typeof fn !== 'function') return Reflect.apply(target, self, args);
    const c = hub.current, w = owner(), depth = (c && c !== UNTRACKED ? c.depth : 0) + 1;
    const followed = w && delay <= SHORT && depth <= TIMER_DEPTH;
    let token = followed ? add(w, {kind: repeat ? 'interval' : 'timer', ms: delay}) : null, id;
    // A longer timer is not waited for, but it is known: the reply names it as still scheduled.
    let later = w && !followed && depth <= TIMER_DEPTH ? {kind: repeat ? 'interval' : 'timer', ms: delay} : null;
    if (later) w.later.add(later);
    const context = followed ? {state: w, depth} : UNTRACKED;
    const call = function (...rest) {
      try { return run(context, fn, this, rest); }
      finally {
        if (token) { hub.ids.delete(id); const t = token; token = null; done(w, t); }
        if (later && !repeat) { hub.ids.delete(id); w.later.delete(later); later = null; }
        if (repeat) context.state && (context.state = null);
      }
    };
    id = Reflect.apply(target, self, [call, ...args.slice(1)]);
    if (token) hub.ids.set(id, () => { const t = token; token = null; if (t) done(w, t); });
    if (later) hub.ids.set(id, () => { if (later) w.later.delete(later); later = null; });
    return id;
  };
  wrap('setTimeout', timer(false));
  wrap('setInterval', timer(true));
  const clear = (target, self, args) => {
    const release = hub.ids.get(args[0]);
    if (release) { hub.ids.delete(args[0]); release(); }
    return Reflect.apply(target, self, args);
  };
  wrap('clearTimeout', clear);
  wrap('clearInterval', clear);
  wrap('requestAnimationFrame', (target, self, args) => {
    const fn = args[0];
    if (typeof fn !== 'function') return Reflect.apply(target, self, args);
    const c = hub.current, w = owner(), depth = (c && c !== UNTRACKED ? c.depth : 0) + 1;
    const followed = w && depth <= FRAME_DEPTH;
    let token = followed ? add(w, {kind: 'frame'}) : null, id;
    const context = followed ? {state: w, depth} : UNTRACKED;
    id = Reflect.apply(target, self, [function (...rest) {
      try { return run(context, fn, this, rest); }
      finally { if (token) { hub.frames.delete(id); const t = token; token = null; done(w, t); } }
    }]);
    if (token) hub.frames.set(id, () => { const t = token; token = null; if (t) done(w, t); });
    return id;
  });
  wrap('cancelAnimationFrame', (target, self, args) => {
    const release = hub.frames.get(args[0]);
    if (release) { hub.frames.delete(args[0]); release(); }
    return Reflect.apply(target, self, args);
  });
  method(window.WebSocket && window.WebSocket.prototype, 'send', (target, self, args) => {
    const result = Reflect.apply(target, self, args);
    const w = owner();
    if (w && self instanceof window.WebSocket) awaitAnswer(w, self, {kind: 'socket', host: host(self.url)});
    return result;
  });
  // A worker started, or sent a message, by the action: its answer (the first message back, or an
  // error) is the action's pending work, as a WebSocket's is (a code editor's language worker).
  const Worker_ = window.Worker;
  if (typeof Worker_ === 'function' && !hub.ours.has(Worker_)) {
    const proxy = new Proxy(Worker_, {construct: (target, args, newTarget) => {
      const worker = Reflect.construct(target, args, newTarget);
      const w = owner();
      if (w) awaitAnswer(w, worker, {kind: 'worker', host: host(args[0])});
      return worker;
    }});
    hub.ours.add(proxy);
    try { window.Worker = proxy; } catch (_) {}
    method(Worker_.prototype, 'postMessage', (target, self, args) => {
      const result = Reflect.apply(target, self, args);
      const w = owner();
      if (w && self instanceof Worker_) awaitAnswer(w, self, {kind: 'worker', host: ''});
      return result;
    });
  }
  // A link that downloads (a download attribute, to this origin or a blob: or data: URL) is followed
  // without a navigation: the page's network events show no request, and the browser tells of the
  // download only once the server answered. A click on one during a settling is kept, to be counted
  // once its dispatch is over and the page had its chance to prevent it (dom_quiet.js).
  if (!hub.downloadLinks) {
    hub.downloadLinks = true;
    const downloading = node => {
      if (!node || (node.localName !== 'a' && node.localName !== 'area') || !node.hasAttribute('download')
          || typeof node.href !== 'string' || !node.href) return false;
      const url = new URL(node.href, location.href);
      return url.origin === location.origin || url.protocol === 'blob:' || url.protocol === 'data:';
    };
    const keep = event => {
      const w = owner();
      if (w && Array.isArray(w.links) && w.links.length < 10 && !w.links.includes(event)) w.links.push(event);
    };
    window.addEventListener('click', event => {
      try {
        if (downloading(event.composedPath().find(n => n && (n.localName === 'a' || n.localName === 'area')))) keep(event);
      } catch (_) {}
    }, true);
    // A link the page never put in the document (an export's `a.click()`, FileSaver's dispatched
    // click): its click never reaches the window, so it is heard on the link itself.
    const detached = self => { try { return !self.isConnected && downloading(self); } catch (_) { return false; } };
    method(window.HTMLElement && window.HTMLElement.prototype, 'click', (target, self, args) => {
      if (!owner() || !detached(self)) return Reflect.apply(target, self, args);
      const heard = event => keep(event);
      self.addEventListener('click', heard, {capture: true, once: true});
      try { return Reflect.apply(target, self, args); } finally { self.removeEventListener('click', heard, true); }
    });
    method(window.EventTarget && window.EventTarget.prototype, 'dispatchEvent', (target, self, args) => {
      const result = Reflect.apply(target, self, args);
      try { if (args[0] instanceof Event && args[0].type === 'click' && owner() && detached(self)) keep(args[0]); }
      catch (_) {}
      return result;
    });
  }
  if (!known) {
    try { Object.defineProperty(window, '__webhandWork', {value: hub, configurable: true, writable: true}); }
    catch (_) {}
  }
  return hub;
  // Waits for the answer to a message sent on (or a worker started as) ``self``: an answer often
  // comes in several messages (a data app: "run started", then its output a script's run later),
  // so it is over once ``self`` has been quiet SOCKET_QUIET ms after a message, or closed, or failed.
  function awaitAnswer(w, self, what) {
    let token = add(w, what), quiet = 0;
    const over = () => {
      if (!token) return;
      const t = token; token = null;
      hub.native.clearTimeout.call(window, quiet);
      for (const kind of ['message', 'close', 'error']) self.removeEventListener(kind, heard);
      done(w, t);
    };
    const heard = (event) => {
      hub.native.clearTimeout.call(window, quiet);
      if (event.type === 'message') quiet = hub.native.setTimeout.call(window, over, SOCKET_QUIET);
      else over();
    };
    for (const kind of ['message', 'close', 'error']) self.addEventListener(kind, heard);
  }
}
