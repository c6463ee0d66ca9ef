"""History and location: back, forward, reload, and where the tab is."""

from __future__ import annotations

import json
import socket

from helpers import ok


async def test_back_forward_and_reload(tools, site):
    start, target = site.url("actions/nav.html"), site.url("actions/target.html")
    ok(await tools.call("browser_navigate", {"url": start}))
    ok(await tools.call("browser_click", {"selector": "#go"}))

    back = ok(await tools.call("browser_back", {}))
    assert f"Navigated to {start}" in back and "Title: Start" in back
    forward = ok(await tools.call("browser_forward", {}))
    assert f"Navigated to {target}" in forward and "Title: Target" in forward

    ok(await tools.call("browser_eval", {"expression": "document.title = 'Changed by script'"}))
    reloaded = ok(await tools.call("browser_reload", {}))
    assert f"Reloaded {target} (HTTP 200)" in reloaded and "Title changed to: Target" in reloaded


async def test_back_with_no_history_says_so(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("actions/nav.html")}))
    ok(await tools.call("browser_back", {}))  # to the blank page the tab started on
    reply = ok(await tools.call("browser_back", {}))
    assert "There is no previous page" in reply


async def test_get_url_gives_url_title_and_tabs(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("actions/nav.html")}))
    reply = ok(await tools.call("browser_get_url", {}))
    assert f"URL: {site.url('actions/nav.html')}" in reply and "Title: Start" in reply

    ok(await tools.call("browser_click", {"selector": "#popup"}))
    reply = await tools.call("browser_get_url", {})
    assert "2 tabs are open" in reply.text
    assert f"* tab 0: {site.url('actions/nav.html')} — Start" in reply.text
    assert site.url("actions/target.html") in reply.text
    assert [t["active"] for t in reply.data["tabs"]] == [True, False]
    assert json.dumps(reply.data)  # structured data is JSON-able


async def test_content_fetched_after_load_is_in_the_first_snapshot(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("loading/late_content.html")}))
    page = ok(await tools.call("browser_snapshot", {}))
    assert 'button "The fetched article"' in page


async def test_content_a_page_fetches_as_it_mounts_after_a_frame_is_in_the_first_snapshot(tools, site):
    # The load window ends when the page is idle, not after a fixed time: a mount that runs in the
    # next animation frame, then fetches from a task, is still waited for.
    ok(await tools.call("browser_navigate", {"url": site.url("loading/mount_after_frame.html")}))
    page = ok(await tools.call("browser_snapshot", {}))
    assert 'button "The mounted article"' in page


async def test_content_a_page_fetches_in_its_first_frame_after_load_is_in_the_first_snapshot(tools, site):
    # The load window waits for the page's next animation frame before it asks whether the page is
    # idle: Chromium may run an idle callback before a frame the page requested at "load". Loaded
    # three times: how soon the first frame comes depends on what the tab showed before.
    for number in range(3):
        ok(await tools.call("browser_navigate", {"url": site.url(f"loading/fetch_in_first_frame.html?{number}")}))
        page = ok(await tools.call("browser_snapshot", {}))
        assert 'button "The framed article"' in page


async def test_navigate_does_not_report_the_browsers_own_icon_request(tools, site):
    # The test site has no /favicon.ico (404): the browser's request for it is not the page's.
    reply = ok(await tools.call("browser_navigate", {"url": site.url("actions/nav.html")}))
    assert "favicon" not in reply and "Request failed" not in reply


async def test_navigate_names_a_request_that_never_finishes(tools, site):
    reply = ok(await tools.call("browser_navigate", {"url": site.url("loading/endless_request.html")}))
    assert "Opened " + site.url("loading/endless_request.html") in reply
    assert "Still loading" in reply and site.url("slow?ms=60000") in reply


def _refused_port() -> int:
    """A local port nothing listens on (bound for a moment to find it free, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_navigate_works_right_after_a_refused_navigation(tools, site):
    failed = await tools.call("browser_navigate", {"url": f"http://127.0.0.1:{_refused_port()}/"})
    assert failed.is_error and "ERR_CONNECTION_REFUSED" in failed.text
    reply = ok(await tools.call("browser_navigate", {"url": site.url("actions/nav.html")}))
    assert "Opened " + site.url("actions/nav.html") in reply


async def test_snapshot_works_right_after_a_refused_navigation(tools, site):
    failed = await tools.call("browser_navigate", {"url": f"http://127.0.0.1:{_refused_port()}/"})
    assert failed.is_error and "ERR_CONNECTION_REFUSED" in failed.text
    ok(await tools.call("browser_snapshot", {}))


async def test_navigate_reports_url_title_and_status(tools, site):
    reply = await tools.call("browser_navigate", {"url": site.url("status/404")})
    assert "HTTP 404" in reply.text and "error page" in reply.text
    assert reply.data["status"] == 404


async def test_navigate_to_a_refused_port_says_so(tools):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    reply = await tools.call("browser_navigate", {"url": f"http://127.0.0.1:{port}/"})
    assert reply.is_error and "connection was refused" in reply.text and "browser_navigate" in reply.text


async def test_navigate_to_a_bad_url_is_refused(tools):
    for url in ("ftp://example.org/file", "http://exa mple.com:99999/", ""):
        reply = await tools.call("browser_navigate", {"url": url})
        assert reply.is_error, url
        assert reply.text.startswith("Error: ")
