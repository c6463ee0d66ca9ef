// Resolves once the document went quiet and the work the action scheduled ran, or at the cap.
// engine/settle.py: DOM_QUIET.
([quiet, cap, unchanged, workCap]) => new Promise(resolve => { try {
  let state = window.__webhandQuiet, timer = 0, limit = 0, quietDone = false;
  const known = !!state && state.observer instanceof MutationObserver && typeof state.mutations === 'number'
    && state.work instanceof Set && state.later instanceof Set && typeof state.began === 'number';
  if (!known) state = (WATCH_DOM)(false, 0);
  else state.observe();
  const hub = window.__webhandWork, start = performance.now();
  const native = hub && hub.native || {setTimeout, clearTimeout, requestAnimationFrame};
  const finish = () => {
    state.observer.disconnect(); native.clearTimeout.call(window, timer); native.clearTimeout.call(window, limit);
    state.onMutation = state.onIdle = null;
    resolve({pending: [...state.work].slice(0, 3), more: Math.max(0, state.work.size - 3),
             later: [...state.later].slice(0, 3), mutations: state.mutations,
             downloads: Array.isArray(state.links) ? state.links.filter(e => !e.defaultPrevented).length : 0});
  };
  const later = (fn, ms) => native.setTimeout.call(window, fn, ms);
  // Animations and transitions the action started (a menu's exit animation, whose end removes
  // it) are its work too, when they end within the work cap: each is waited for once; one that
  // was running before the action (a spinner, a carousel) or never ends is not the action's.
  const awaited = new WeakSet();
  const animating = () => {
    const left = workCap - (performance.now() - start);
    let any = false;
    try {
      for (const animation of (left > 0 && document.getAnimations ? document.getAnimations() : [])) {
        if (awaited.has(animation) || animation.playState !== 'running') continue;
        const timing = animation.effect && animation.effect.getComputedTiming();
        const begun = animation.startTime === null ? performance.now() : animation.startTime;
        const rate = Math.abs(animation.playbackRate) || 1;
        if (!timing || !isFinite(timing.endTime) || begun < state.began
            || (timing.endTime - (timing.localTime || 0)) / rate > left) continue;
        awaited.add(animation);
        const token = {kind: 'animation'};
        state.work.add(token);
        const over = () => { if (state.work.delete(token) && !state.work.size && state.onIdle) state.onIdle(); };
        animation.finished.then(over, over);
        any = true;
      }
    } catch (_) {}
    return any;
  };
  const ready = () => { if (quietDone && !state.work.size && !animating()) finish(); };
  const atLimit = () => {
    const left = workCap - (performance.now() - start);
    if (state.work.size && left > 0) limit = later(atLimit, left);
    else finish();
  };
  limit = later(atLimit, cap);
  state.onMutation = () => {
    quietDone = false; native.clearTimeout.call(window, timer);
    timer = later(() => { quietDone = true; ready(); }, quiet);
  };
  state.onIdle = state.onMutation;  // the last pending work ran: a quiet window after it
  state.onMutation();
  if (known && unchanged > 0 && state.mutations === 0) {
    let waits = 2;
    const one = () => { if (--waits === 0 && state.mutations === 0 && !state.work.size) finish(); };
    native.requestAnimationFrame.call(window, () => later(one, 0));
    later(one, unchanged);
  }
} catch (_) { setTimeout(() => resolve(null), quiet); } })
