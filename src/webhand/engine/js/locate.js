// Finds a Target (tools/flows/format.py) in this document, each way on its own: the refs each finds.
// engine/page_scripts.py: LOCATE; describe.js writes the ways this reads, with the same rules.
(target, describe) => {
  const W = window.__webhand;
  const squash = (s) => String(s || '').replace(/\s+/g, ' ').trim();
  const LIMIT = 20000;
  // A step that names its element by ref looks only at elements the snapshot gave one (a full
  // snapshot runs first); a coordinate step's element (a canvas) may have none.
  const all = Array.from(document.querySelectorAll('*')).filter((e) => target.any_element || W.refOf(e)).slice(0, LIMIT);
  const described = new Map();
  const about = (e) => { if (!described.has(e)) described.set(e, describe(e, null)); return described.get(e); };
  const roleOf = (e) => W.label(e).role;
  const within = (e) => {
    const have = about(e).ancestors;
    return (target.ancestors || []).every((a) => have.some((h) => h.role === a.role && h.name === a.name));
  };
  const ways = [];
  const add = (way, found) => ways.push({ way, count: found.length, found: found.slice(0, 5).map((e) => {
    const d = about(e);
    const b = e.getBoundingClientRect();
    return { ref: W.refOf(e), role: d.role, name: d.name, label: d.label,
      box: { x: b.left, y: b.top, width: b.width, height: b.height, scroll_x: scrollX, scroll_y: scrollY } };
  }) });
  if (target.role && target.name) {
    add('role+name', all.filter((e) => roleOf(e) === target.role && squash(W.label(e).name) === target.name && within(e)));
  }
  if (target.label) {
    add('label', all.filter((e) => (target.role ? roleOf(e) === target.role : !!roleOf(e))
      && about(e).label === target.label));
  }
  if (target.placeholder) {
    add('placeholder', all.filter((e) => squash(e.getAttribute('placeholder')) === target.placeholder));
  }
  for (const [key, value] of Object.entries(target.attributes || {})) {
    add(key, all.filter((e) => e.getAttribute(key) === value));
  }
  if (target.text && target.role) {
    add('text', all.filter((e) => roleOf(e) === target.role && about(e).text === target.text));
  }
  if (target.css) {
    let found = [];
    try { found = Array.from(document.querySelectorAll(target.css)); } catch (_) { found = []; }
    add('css', found);
  }
  return ways;
}
