"""browser_find: reaching any element of any page size by what it is and what it says."""

from __future__ import annotations

import re


async def test_find_reaches_a_button_the_snapshot_cap_left_out_and_its_ref_is_the_snapshots(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/big.html?n=10000")})
    capped = await tools.call("browser_snapshot", {})
    assert "browser_find" in capped.text  # the capped snapshot says how to reach the rest

    found = await tools.call("browser_find", {"query": "button Open 1999"})
    assert not found.is_error, found.text
    best = found.text.splitlines()[1]
    assert re.fullmatch(r'button "Open 1999" \[e\d+\]', best), found.text
    ref = re.search(r"\[(e\d+)\]", best).group(1)
    scoped = (await tools.call("browser_snapshot", {"scope": ".row:nth-child(2000)"})).text
    assert f'button "Open 1999" [{ref}]' in scoped  # the same element, the same ref
    assert len(found.text) < 2000  # small whatever the page size


async def test_find_ranks_the_role_asked_for_first_and_searches_frames(tools, site, other_site):
    await tools.call("browser_navigate", {"url": site.url(f"snapshot/frames.html?other={other_site.port}")})
    found = await tools.call("browser_find", {"query": "the pay button"})
    assert re.match(r'button "Pay" \[f\d+e\d+\]', found.text.splitlines()[1]), found.text
    assert "in: ## Cross-origin frame" in found.text


async def test_find_with_no_match_says_so_and_what_to_do(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/login.html")})
    found = await tools.call("browser_find", {"query": "zebra crossing"})
    assert not found.is_error
    assert "Nothing on the page matches 'zebra crossing'" in found.text and "browser_snapshot" in found.text
