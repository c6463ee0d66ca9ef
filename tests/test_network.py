"""browser_network_requests: the requests a page made, with their outcome."""

from __future__ import annotations

import re


async def test_requests_are_listed_with_status_and_kind(tools, site):
    await tools.call("browser_navigate", {"url": site.url("network.html")})
    clicked = await tools.call("browser_click", {"selector": "button"})
    # the page's own request answered 404: context at the reply's end, not a headline
    assert clicked.text.splitlines()[-1] == "1 request failed, the app may expect that: GET /status/404 404.", clicked.text
    assert 'status: loaded 200 and 404' in (await tools.call("browser_snapshot", {})).text
    reply = await tools.call("browser_network_requests", {})
    # each line starts with the request's #id, which browser_network_request takes
    lines = [re.sub(r"^#\d+ ", "", line) for line in reply.text.splitlines()]
    assert all(re.match(r"#\d+ ", line) for line in reply.text.splitlines())
    assert lines[0].startswith("GET 200 ") and lines[0].endswith("/network.html (document)")
    assert any(line.startswith("GET 200 ") and "/echo?item=1 (fetch)" in line for line in lines)
    assert any(line.startswith("GET 404 ") and "/status/404 (fetch)" in line for line in lines)
    assert not any("network-style.css" in line for line in lines), "static files are hidden by default"


async def test_filters_failed_only_url_and_static(tools, site):
    await tools.call("browser_navigate", {"url": site.url("network.html")})
    await tools.call("browser_click", {"selector": "button"})
    failed = (await tools.call("browser_network_requests", {"failed_only": True, "include_static": True})).text
    assert "/status/404" in failed and "network-style.css" in failed  # the stylesheet does not exist: 404
    assert "/echo" not in failed
    only = await tools.call("browser_network_requests", {"url_contains": "echo"})
    assert only.data["requests"][0]["status"] == 200 and len(only.data["requests"]) == 1
    none = await tools.call("browser_network_requests", {"url_contains": "nothing-like-this"})
    assert none.text.startswith("No matching requests.")


async def test_a_long_list_is_capped_by_whole_requests_with_the_file_for_the_rest(tools, site):
    """Issue 38 item 14: the list was cut at 1,024 bytes, mid-line, after 3 of 17 requests."""
    await tools.call("browser_navigate", {"url": site.url("network.html")})
    await tools.call("browser_eval", {"expression": "Promise.all(Array.from({length: 40}, (_, i) => "
                                                    "fetch('/echo?item=' + i)))"})
    await tools.call("browser_wait_for", {"network_idle": True})  # the browser's events about them may come later
    reply = await tools.call("browser_network_requests", {})
    head, *listed = reply.text.splitlines()
    counted = re.match(r"(\d+) requests; the (\d+) older ones are only in (\S+), the newest 25 follow", head)
    assert counted and int(counted[1]) - int(counted[2]) == 25, reply.text
    assert len(listed) == 25 and all(re.match(r"#\d+ GET 200 .*/echo\?item=\d+ \(fetch\)$", line) for line in listed)
    with open(counted[3], encoding="utf-8") as file:
        saved = file.read().splitlines()
    assert len(saved) == int(counted[1]) and saved[-25:] == listed and saved[0].endswith("/network.html (document)")
