"""A real data grid: AG Grid Community, from npm (tests/corpus/package.json pins it), served by
corpus_site.py. It draws each row of runs twice, a selection checkbox in the pinned column's
container and the cells in the centre one, tied only by aria-rowindex, and re-renders the rows
in place when sorted. A model must still tell whose checkbox is whose (issue 38, item 9).
"""

from __future__ import annotations

import re

import pytest

from corpus_site import missing_reason, snapshot_text
from harness import tab_of, wait_for_selector

pytestmark = [pytest.mark.corpus,
              pytest.mark.one_driver("the page agent's walk is the same on every driver; the grid rows of our own "
                                     "page are checked on every driver in test_snapshot.py")]

#: A row as the snapshot shows it: its selection checkbox, then its run's name.
ROW = re.compile(r'^row(?: \[[a-z ]+\])?\n gridcell "[^"\n]*" \[e\d+\]\n  checkbox "[^"\n]*" \[(?P<box>e\d+)\](?P<states>[^\n]*)\n'
                 r' gridcell "(?P<run>run-\d+)" \[e\d+\]\n gridcell "(?P<status>[A-Z]+)"', re.M)


async def test_ag_grid_rows_keep_their_checkbox_and_selecting_one_selects_that_run(tools, webhand, corpus_site):
    if missing_reason("aggrid"):
        pytest.skip(missing_reason("aggrid"))
    reply = await tools.call("browser_navigate", {"url": corpus_site.aggrid()})
    assert not reply.is_error, reply.text
    await wait_for_selector(await tab_of(webhand, tools), ".ag-row", timeout=15)
    shot = await snapshot_text(tools)
    rows = [m["run"] for m in ROW.finditer(shot)]
    assert len(rows) >= 8 and rows == sorted(rows), shot  # every rendered row, its checkbox first, in order

    sort = re.search(r'^ clickable "Status" \[(e\d+)\]', shot, re.M)
    assert sort, shot
    sorted_reply = await tools.call("browser_click", {"ref": sort.group(1)})
    assert not sorted_reply.is_error, sorted_reply.text
    shot = await snapshot_text(tools)
    statuses = [m["status"] for m in ROW.finditer(shot)]
    assert statuses and statuses == sorted(statuses), shot  # the rows in the order shown, after the re-render
    row = next(m for m in ROW.finditer(shot) if m["status"] == "FAILED")
    clicked = await tools.call("browser_click", {"ref": row["box"]})
    assert not clicked.is_error, clicked.text

    shot = await snapshot_text(tools)
    checked = [m["run"] for m in ROW.finditer(shot) if "checked" in m["states"].split()]
    assert checked == [row["run"]], shot
    selected = await tools.call("browser_eval", {"expression": "gridApi.getSelectedRows().map(r => r.run)"})
    assert selected.data["result"] == [row["run"]], selected.text  # the grid's own record agrees
