// Grid rows for the page agent: a row keeps its cells under it, in the order of the grid, even when a
// virtualised grid renders its rows out of order or splits one row across containers (a pinned
// column's checkboxes in one, the names in another, each row there with the same aria-rowindex).
// Plain declarations, spliced into the agent function after roles.js (see snapshot.py: agent_script).

// Roles whose rows are put in order by aria-rowindex when they end.
const GRID_ROLES = new Set(['grid', 'treegrid', 'table']);
// A cell of a row of text only: its text joins the row's line, after a ` | `.
const CELL_ROLES = new Set(['cell', 'gridcell', 'columnheader', 'rowheader']);

// A row that is a grid's: an ARIA row (role=row, or a <tr> of a grid or treegrid), or one a
// virtualised table numbers (aria-rowindex). A plain table's rows are lines of cells already.
function isGridRow(el) {
  return el.hasAttribute('role') || el.hasAttribute('aria-rowindex') || !!el.closest('[role=grid],[role=treegrid]');
}

const indentOf = (line) => (typeof line === 'string' ? line.length - line.trimStart().length : line.depth);

function shifted(line, by) {
  if (typeof line !== 'string') return { frame: line.frame, depth: line.depth + by };
  return by >= 0 ? ' '.repeat(by) + line : line.slice(Math.min(-by, indentOf(line)));
}

// `rows`: {index (aria-rowindex or null), start, end} in page order, each a run of `lines`. When
// their indexes repeat or go backwards, the runs are put in index order and runs of one index are
// merged into the first: its `row` line, then every cell line of the others under it. Lines between
// runs move with the run before them.
function orderRows(lines, rows) {
  const numbered = rows.filter((r) => r.index !== null);
  if (numbered.length < 2 || numbered.length !== rows.length) return;
  const inOrder = numbered.every((r, i) => i === 0 || r.index > numbered[i - 1].index);
  if (inOrder) return;
  const start = rows[0].start;
  const end = lines.length;
  const byIndex = new Map();
  rows.forEach((row, i) => {
    const until = i + 1 < rows.length ? rows[i + 1].start : end;
    const run = lines.slice(row.start, until);
    const merged = byIndex.get(row.index);
    if (!merged) { byIndex.set(row.index, run); return; }
    mergeRow(merged, run, row.end - row.start);
  });
  const ordered = Array.from(byIndex.keys()).sort((a, b) => a - b).flatMap((index) => byIndex.get(index));
  lines.splice(start, end - start, ...ordered);
}

// Appends a second run of one row to the first: its cells under the first run's `row` line.
function mergeRow(first, run, rowLines) {
  const TEXT_ROW = /^(\s*)row(?: "(?:[^"\\]|\\.)*")?(?: \[[^\]]*\])?: /;
  // In interactive mode a row is named by its text: the merged row by the text of both runs.
  const NAMED = /^(\s*row) ("(?:[^"\\]|\\.)*")(.*)$/;
  const names = [NAMED.exec(first[0]), NAMED.exec(run[0])];
  if (names[1] && !TEXT_ROW.test(run[0])) {
    const name = names.filter(Boolean).map((m) => JSON.parse(m[2])).join(' ');
    const [, lead, , rest] = names[0] || /^(\s*row)()(.*)$/.exec(first[0]);
    first[0] = lead + ' ' + JSON.stringify(clip(name, 100)) + rest;
  }
  const depth = indentOf(first[0]);
  const head = TEXT_ROW.exec(first[0]);
  if (head) {  // `row: a | b` becomes `row` with its text under it
    const text = first[0].slice(head[0].length);
    first[0] = first[0].slice(0, head[0].length - 2);
    first.splice(1, 0, ' '.repeat(depth + 1) + text);
  }
  const own = TEXT_ROW.exec(run[0]);
  const cells = own ? [' '.repeat(indentOf(run[0]) + 1) + run[0].slice(own[0].length)].concat(run.slice(1))
    : run.slice(1);
  const by = depth - indentOf(run[0]);
  // Cells after the row's own lines (those between runs stay after them).
  const rowPart = cells.slice(0, Math.max(rowLines - 1 + (own ? 1 : 0), 0)).map((line) => shifted(line, by));
  const after = cells.slice(rowPart.length).map((line) => shifted(line, by));
  let at = first.findIndex((line, i) => i > 0 && indentOf(line) <= depth);
  if (at < 0) at = first.length;
  first.splice(at, 0, ...rowPart);
  first.push(...after);
}
