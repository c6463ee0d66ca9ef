"""browser_find on a real long page: Python's built-in types reference, far past the snapshot's ref cap."""

from __future__ import annotations

import re

import pytest

from corpus_site import missing_reason

pytestmark = [pytest.mark.corpus,
              pytest.mark.one_driver("the real-page corpus takes minutes; the snapshot and refs are checked on every"
                                     " driver in test_snapshot.py and test_names.py")]


async def test_a_table_of_contents_link_the_cap_left_out_is_found_and_opens_its_section(tools, corpus_site):
    if missing_reason("pydoc"):
        pytest.skip(missing_reason("pydoc"))
    await tools.call("browser_navigate", {"url": corpus_site.pydoc("library/stdtypes.html")})
    capped = await tools.call("browser_snapshot", {})
    assert "more elements with refs were left out" in capped.text and "browser_find" in capped.text

    found = await tools.call("browser_find", {"query": "link Truth Value Testing"})
    best = found.text.splitlines()[1]
    assert re.match(r'link "Truth Value Testing" \[e\d+\] url=#truth', best), found.text
    clicked = await tools.call("browser_click", {"ref": re.search(r"\[(e\d+)\]", best).group(1)})
    assert not clicked.is_error, clicked.text
    where = await tools.call("browser_eval", {"expression": "location.hash"})
    assert where.data["result"] == "#truth"
