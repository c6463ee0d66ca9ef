// browser_audit_accessibility's call of axe-core (tools/audit.py), run in the isolated world where
// axe is installed (engine/isolated_world.py, engine/bidi/isolated_world.py): the page's scripts
// cannot see it or change what it calls. `opts`: {tags, perRule, maxElements}; `scope`: the element
// a ref names, or null for the whole document. Returns {value: the report as JSON, elements}: the
// elements the reply names (the first `perRule` of each violated rule, worst impact first), which
// the driver turns into refs; each reported node says its index there as `element`.
async (opts, scope) => {
  const axe = window.axe;
  if (axe._running) return { value: JSON.stringify({ busy: true }), elements: [] };
  const known = new Set();
  for (const rule of axe.getRules()) for (const tag of rule.tags) known.add(tag);
  const unknown = opts.tags.filter((tag) => !known.has(tag));
  if (unknown.length) return { value: JSON.stringify({ unknown, known: [...known].sort() }), elements: [] };
  const started = performance.now();
  const result = await axe.run(scope || document, {
    runOnly: { type: 'tag', values: opts.tags }, resultTypes: ['violations', 'incomplete'], elementRef: true,
    iframes: false, selectors: true, ancestry: false, xpath: false, performanceTimer: false,
  });
  const order = { critical: 0, serious: 1, moderate: 2, minor: 3 };
  const rank = (rule) => (rule.impact in order ? order[rule.impact] : 4);
  const elements = [];
  const rules = (list, named) => list.map((rule) => ({
    id: rule.id, impact: rule.impact, tags: rule.tags, description: rule.description, help: rule.help,
    helpUrl: rule.helpUrl,
    nodes: rule.nodes.map((node, index) => {
      const out = { target: node.target, html: node.html, impact: node.impact, failureSummary: node.failureSummary };
      if (named && index < opts.perRule && elements.length < opts.maxElements && node.element) {
        out.element = elements.length;
        elements.push(node.element);
      }
      return out;
    }),
  }));
  const violations = result.violations.slice().sort((a, b) => rank(a) - rank(b) || (a.id < b.id ? -1 : 1));
  return {
    value: JSON.stringify({
      engine: 'axe-core', version: axe.version, url: result.url, timestamp: result.timestamp, tags: opts.tags,
      scope: scope ? 'element' : 'document', ms: Math.round(performance.now() - started),
      elementCount: (scope || document).getElementsByTagName('*').length,
      violations: rules(violations, true), incomplete: rules(result.incomplete, false),
      passes: result.passes.map((rule) => rule.id), inapplicable: result.inapplicable.map((rule) => rule.id),
    }),
    elements,
  };
}
