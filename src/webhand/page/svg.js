// Drawings for the page agent: the nodes of a diagram drawn in SVG (a flow editor's boxes, a
// graph's vertices) are what a person clicks, drags and opens, so each is a control with a ref,
// named by its label. Plain declarations, spliced into the agent function after roles.js (see
// snapshot.py: agent_script); they only read the DOM and keep nothing past one snapshot.
//
// A page attaches its pointer handlers with addEventListener, which a script cannot see, so a node
// is known by what it looks like: a group (<g>) that draws a shape and carries its own label (a
// <text> not inside another such group, or a <title>). Groups with a handler attribute, a tabindex,
// a role or a pointer cursor are controls already (roles.js, snapshot.js). A tick of a chart's axis
// draws a <line>, not a shape, and stays text.

const SVG_NS = 'http://www.w3.org/2000/svg';
// What draws an area a pointer can land on.
const SVG_SHAPES = new Set(['rect', 'circle', 'ellipse', 'polygon', 'path', 'image', 'use', 'foreignObject']);
// Runs of text inside a <text>: part of its line, not lines of their own.
const SVG_INLINE = new Set(['tspan', 'textPath']);
// Most groups of one drawing looked at for nodes: a chart of thousands of marks costs no more.
const SVG_GROUPS_CHECKED = 2000;
// A drawing smaller than this (CSS pixels, either side) is an icon: its titled groups are no nodes.
const SVG_ICON_MAX = 64;

// Per snapshot: element -> whether it is a node (groups), or holds one (<svg>).
let svgNodeCache = null;

function cached(el, compute) {
  if (!svgNodeCache) return compute();
  let known = svgNodeCache.get(el);
  if (known === undefined) { known = compute(); svgNodeCache.set(el, known); }
  return known;
}

// A shape with no fill (an edge's path, an outline) draws a line, not an area to land on.
const drawsShape = (g) => Array.from(g.children).some((c) => SVG_SHAPES.has(c.localName)
  && (c.localName === 'image' || c.localName === 'use' || c.localName === 'foreignObject' || getComputedStyle(c).fill !== 'none'));

// The group's own label: its <title>, else the <text> it holds outside other shape-drawing groups.
function svgLabel(g) {
  for (const c of g.children) if (c.localName === 'title' && squash(c.textContent)) return squash(c.textContent);
  const parts = [];
  const walk = (el) => {
    for (const c of el.children) {
      if (c.localName === 'text') parts.push(c.textContent);
      else if (c.localName === 'g' && !drawsShape(c)) walk(c);
      else if (c.localName === 'a') walk(c);
    }
  };
  walk(g);
  return squash(parts.join(' '));
}

function isSvgNode(el) {
  if (el.localName !== 'g' || el.namespaceURI !== SVG_NS) return false;
  return cached(el, () => !isIcon(el.ownerSVGElement) && drawsShape(el) && !!svgLabel(el));
}

function isIcon(svg) {
  if (!svg) return true;
  const box = svg.getBoundingClientRect();  // read once per group at most (isSvgNode is cached)
  return box.width < SVG_ICON_MAX || box.height < SVG_ICON_MAX;
}

// Whether a drawing holds nodes: then it is walked (and, when it is clickable itself, a canvas
// that holds controls, not a control named by all their labels run together).
function holdsSvgNodes(svg) {
  return cached(svg, () => {
    if (isIcon(svg)) return false;
    const groups = svg.getElementsByTagNameNS(SVG_NS, 'g');
    for (let i = 0; i < groups.length && i < SVG_GROUPS_CHECKED; i++) if (isSvgNode(groups[i])) return true;
    return false;
  });
}

// A drawn control's name: its label; a canvas's only its own <title> or aria-label, never its nodes' text.
function svgName(el) {
  if (el.localName === 'g') return svgLabel(el);
  if (el.localName === 'svg' && holdsSvgNodes(el)) {
    const title = Array.from(el.children).find((c) => c.localName === 'title');
    return squash(el.getAttribute('aria-label') || (title ? title.textContent : ''));
  }
  return '';
}

// Where a node is in its drawing: the centre of its box, from the drawing's corner, in CSS pixels.
// Page scrolling moves neither; the page moving the node does.
function svgPosition(el) {
  const box = el.getBoundingClientRect();
  const owner = el.ownerSVGElement ? el.ownerSVGElement.getBoundingClientRect() : { left: 0, top: 0 };
  return [Math.round(box.left + box.width / 2 - owner.left), Math.round(box.top + box.height / 2 - owner.top)];
}
