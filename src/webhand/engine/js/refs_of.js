// The refs the page agent (main world) gives each element handed over from an isolated world
// (engine/isolated_world.py); null for one it has none for.
function (...elements) {
  const agent = window.__webhand;
  const refs = [];  // a plain loop: the page may have replaced Array.prototype.map in this world
  for (let i = 0; i < elements.length; i++) refs.push(agent && agent.refOf ? agent.refOf(elements[i]) : null);
  return refs;
}
