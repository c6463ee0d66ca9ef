// Counts the document's mutations from the start of an action, and starts following its work.
// engine/settle.py: WATCH_DOM.
(typing, trackMs) => {
  let hub = null;
  try { hub = (WORK_HUB)(); } catch (_) {}  // a page that broke it: its work goes unseen
  const old = window.__webhandQuiet;
  try { if (old && old.observer instanceof MutationObserver) old.observer.disconnect(); } catch (_) {}
  const state = {mutations: 0, onMutation: null, onIdle: null, work: new Set(), later: new Set(), links: [], began: performance.now(),
                 until: performance.now() + (trackMs === undefined ? TRACK_MS : trackMs)};
  const own = (r, typed) => typed && (r.target === typed ? r.attributeName === 'value'
    : typed.isContentEditable && r.type !== 'attributes' && typed.contains(r.target));
  state.observer = new MutationObserver(records => {
    const typed = typing ? document.activeElement : null;
    const counted = records.filter(r => !own(r, typed)).length;
    state.mutations += counted;
    if (counted && state.onMutation) state.onMutation();
  });
  state.observe = () => state.observer.observe(document, {subtree: true, childList: true, attributes: true,
                                                          characterData: true});
  state.observe();
  if (hub) hub.state = state;
  try { Object.defineProperty(window, '__webhandQuiet', {value: state, configurable: true, writable: true}); }
  catch (_) {}  // a page that took the name: settling then waits the full window
  return state;
}
