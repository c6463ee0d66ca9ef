// Makes any page value JSON-able: DOM nodes become a short tag, cycles and functions are named.
// engine/console_javascript.py: SERIALIZE.
function () {
  const stack = new Set();
  const walk = (v, depth) => {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) {
      if (typeof v === 'bigint') return v.toString() + 'n';
      if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
      if (typeof v === 'symbol') return v.toString();
      return v === undefined ? null : v;
    }
    if (typeof v === 'function') return '[function ' + (v.name || 'anonymous') + ']';
    if (typeof Element !== 'undefined' && v instanceof Element)
      return '<' + v.tagName.toLowerCase() + (v.id ? '#' + v.id : '') + '> ' + (v.outerHTML || '').slice(0, 300);
    if (typeof Node !== 'undefined' && v instanceof Node) return '[' + v.nodeName + ']';
    if (stack.has(v)) return '[circular]';
    if (depth > 20) return '[too deep]';
    stack.add(v);
    try {
      if (Array.isArray(v) || (typeof NodeList !== 'undefined' && (v instanceof NodeList || v instanceof HTMLCollection)))
        return Array.from(v, x => walk(x, depth + 1));
      if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), walk(x, depth + 1)]));
      if (v instanceof Set) return [...v].map(x => walk(x, depth + 1));
      if (v instanceof Date) return v.toISOString();
      if (v instanceof Error) return v.name + ': ' + v.message;
      if (v instanceof RegExp) return String(v);
      const o = {};
      for (const k of Object.keys(v)) { try { o[k] = walk(v[k], depth + 1); } catch (e) { o[k] = '[unreadable]'; } }
      return o;
    } finally { stack.delete(v); }
  };
  return walk(this, 0);
}
