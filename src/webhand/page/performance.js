// browser_performance: the page's navigation timing and web vitals, as the web-vitals library
// defines them, from the entries the browser buffered. The first call also starts an observer of
// every interaction (16 ms and up), since the browser buffers only those of 104 ms and more;
// later calls on the same document see them all.
(() => {
  const state = window.__webhandVitals || (window.__webhandVitals = { events: [] });
  const take = (type, options = {}) => {
    try {
      const observer = new PerformanceObserver(() => {});
      observer.observe({ type, buffered: true, ...options });
      const records = observer.takeRecords();  // the buffered entries are there synchronously
      observer.disconnect();
      return records;
    } catch (error) {
      return [];  // a type this browser does not know
    }
  };
  if (!state.observer) {
    try {
      state.observer = new PerformanceObserver(list => state.events.push(...list.getEntries()));
      state.observer.observe({ type: 'event', buffered: true, durationThreshold: 16 });
    } catch (error) { /* no Event Timing */ }
  }
  const round = value => (value == null ? null : Math.round(value * 10) / 10);
  const nav = performance.getEntriesByType('navigation')[0];
  const navigation = nav ? {
    type: nav.type, ttfb_ms: round(nav.responseStart - nav.startTime),
    dom_content_loaded_ms: round(nav.domContentLoadedEventEnd), load_ms: round(nav.loadEventEnd || null),
    transfer_bytes: nav.transferSize, redirects: nav.redirectCount,
  } : null;
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  const lcpEntries = take('largest-contentful-paint');
  const lcp = lcpEntries[lcpEntries.length - 1];
  // CLS: the largest session window of shifts (at most 1 s apart, 5 s long) without recent input.
  let cls = 0, windowValue = 0, windowStart = 0, last = 0;
  for (const shift of take('layout-shift')) {
    if (shift.hadRecentInput) continue;
    if (windowValue && shift.startTime - last < 1000 && shift.startTime - windowStart < 5000) windowValue += shift.value;
    else { windowValue = shift.value; windowStart = shift.startTime; }
    last = shift.startTime;
    cls = Math.max(cls, windowValue);
  }
  // INP: the longest interaction (one per interactionId), or the 98th percentile past 50 of them.
  const longest = new Map();
  for (const entry of [...take('event', { durationThreshold: 16 }), ...take('first-input'), ...state.events]) {
    if (!entry.interactionId) continue;
    longest.set(entry.interactionId, Math.max(longest.get(entry.interactionId) || 0, entry.duration));
  }
  const durations = [...longest.values()].sort((a, b) => b - a);
  const inp = durations.length ? durations[Math.min(durations.length - 1, Math.floor(durations.length / 50))] : null;
  return {
    url: location.href, navigation,
    fcp_ms: round(fcp && fcp.startTime),
    lcp_ms: round(lcp && lcp.startTime), lcp_element: lcp && lcp.element ? lcp.element.tagName.toLowerCase() : null,
    cls: Math.round(cls * 10000) / 10000, inp_ms: round(inp), interactions: durations.length,
  };
})()
