"""Requests with their source and in full, network conditions, and mocks (browser_route)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

from helpers import settings_for_tests
from webhand import Webhand
from webhand.engine.policy import OriginPolicy, RefusalLog, rewrite_refusal

SECRET = "tok-Vq83-secret"


def ok(reply):
    assert not reply.is_error, reply.text
    return reply


def line_of(listing: str, url_part: str) -> str:
    return [line for line in listing.splitlines() if url_part in line][-1]


# -- where the answer came from ------------------------------------------------------------------

async def test_a_request_first_goes_to_the_network_then_a_new_tab_gets_it_from_the_disk_cache(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    ok(await tools.call("browser_click", {"selector": "button"}))
    first = ok(await tools.call("browser_network_requests", {"url_contains": "cacheable/data.js"})).text
    assert line_of(first, "data.js").endswith("/cacheable/data.js (fetch)")
    ok(await tools.call("browser_tabs", {"action": "open", "url": site.url("cache.html")}))
    ok(await tools.call("browser_click", {"selector": "button"}))
    again = ok(await tools.call("browser_network_requests", {"url_contains": "cacheable/data.js"})).text
    assert line_of(again, "data.js").endswith("/cacheable/data.js (fetch, from disk cache)")


async def test_a_script_loaded_again_by_the_same_page_comes_from_the_memory_cache(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    listing = ok(await tools.call("browser_network_requests", {"include_static": True})).text
    assert line_of(listing, "app.js").endswith("/cacheable/app.js (script, from memory cache)")


async def test_a_page_prefetched_by_speculation_rules_is_answered_from_the_prefetch(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("prefetch.html")}))
    ok(await tools.call("browser_wait_for", {"network_idle": True}))  # the prefetch has been fetched
    ok(await tools.call("browser_click", {"selector": "a"}))
    listing = ok(await tools.call("browser_network_requests", {})).text
    assert line_of(listing, "prefetch-target.html").endswith("(document, from prefetch)")


# -- one request in full ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
async def secret_webhand(tmp_path_factory, driver):
    folder = tmp_path_factory.mktemp("request-secrets")
    (folder / "secrets.env").write_text(f"API_KEY={SECRET}\n")
    settings = settings_for_tests(tmp_path_factory, secrets_file=str(folder / "secrets.env"), warm_reserve=False,
                                  driver=driver)
    async with Webhand(settings) as wh:
        yield wh


async def test_a_request_shows_its_headers_and_bodies_with_the_secret_masked(secret_webhand, site):
    tools = secret_webhand.context(f"detail-{uuid.uuid4().hex[:8]}")
    try:
        ok(await tools.call("browser_navigate", {"url": site.url("api_call.html")}))
        ok(await tools.call("browser_type", {"selector": "#key", "text": "<secret>API_KEY</secret>"}))
        ok(await tools.call("browser_click", {"selector": "button"}))
        listing = ok(await tools.call("browser_network_requests", {"url_contains": "/echo"}))
        request_id = listing.data["requests"][-1]["id"]
        detail = ok(await tools.call("browser_network_request", {"id": request_id, "response_body": True}))
    finally:
        await secret_webhand.end_conversation(tools.conversation_id)
    assert SECRET not in detail.text and SECRET not in json.dumps(detail.data)
    assert "  authorization: Bearer <secret>API_KEY</secret>" in detail.text
    assert 'Request body (25 bytes):\n{"key":"<secret>API_KEY</secret>"}' in detail.text
    assert "Response headers:\n  content-length:" in detail.text
    # /echo sends back the request line, the headers and the body
    assert "POST /echo?call=1" in detail.text and "Authorization: Bearer <secret>API_KEY</secret>" in detail.text


async def test_a_response_body_over_the_cap_is_saved_to_a_file_in_the_conversation_folder(tools, site, webhand):
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    listing = ok(await tools.call("browser_network_requests", {"url_contains": "cache.html"}))
    request_id = listing.data["requests"][-1]["id"]
    detail = ok(await tools.call("browser_network_request",
                                 {"id": request_id, "response_body": True, "max_chars": 100}))
    saved = Path(re.search(r"more than the 100-byte reply limit: saved to (\S+)\.\n", detail.text).group(1))
    assert saved.read_text() == (Path(__file__).parent / "pages" / "cache.html").read_text()
    assert saved.is_relative_to(Path(webhand.settings.output_dir))


async def test_a_redirect_response_has_no_body_of_its_own_to_read(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("redirect?to=/cache.html")}))
    # The hop and the page it led to are two requests, each with its own status.
    every = ok(await tools.call("browser_network_requests", {})).text
    assert f"GET 302 {site.url('redirect?to=/cache.html')}" in every and f"GET 200 {site.url('cache.html')}" in every
    listing = ok(await tools.call("browser_network_requests", {"url_contains": "redirect?to="}))
    hop = await tools.call("browser_network_request", {"id": listing.data["requests"][-1]["id"], "response_body": True})
    assert hop.is_error and "redirect" in hop.text and "<title>Cache" not in hop.text


async def test_an_unknown_request_id_says_where_the_ids_come_from(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    reply = await tools.call("browser_network_request", {"id": 999_999_999})
    assert reply.is_error and "Call browser_network_requests" in reply.text


# -- offline and throttling -----------------------------------------------------------------------

async def test_offline_fails_the_page_requests_and_the_reply_states_it(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    off = ok(await tools.call("browser_network_conditions", {"offline": True}))
    assert "Network of this session is now: offline (was: online, no throttling)." in off.text
    clicked = ok(await tools.call("browser_click", {"selector": "button"}))
    assert "ERR_INTERNET_DISCONNECTED" in clicked.text
    back = ok(await tools.call("browser_network_conditions", {"reset": True}))
    assert "now: online, no throttling (was: offline)" in back.text


async def test_offline_holds_for_a_tab_opened_later_in_the_session(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    ok(await tools.call("browser_network_conditions", {"offline": True}))
    opened = await tools.call("browser_tabs", {"action": "open", "url": site.url("cache.html")})
    assert "ERR_INTERNET_DISCONNECTED" in opened.text


async def test_latency_and_throughput_are_kept_and_stated_until_changed(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    set_ = ok(await tools.call("browser_network_conditions", {"latency_ms": 400, "download_kbps": 50}))
    assert "now: online, latency 400 ms, download 50 KB/s" in set_.text
    read = ok(await tools.call("browser_network_conditions", {}))
    assert "Network of this session: online, latency 400 ms, download 50 KB/s (unchanged)." in read.text
    # The added latency is a floor under the time the answer takes (no upper bound is checked).
    waited = ok(await tools.call("browser_eval", {"expression": """(async () => {
        const start = performance.now(); await fetch('/echo?latency=1'); return performance.now() - start; })()"""}))
    assert float(waited.text) >= 400


# -- mocks ----------------------------------------------------------------------------------------

async def test_a_route_answers_with_the_given_status_headers_and_body_and_is_listed(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    reached_before = len(site.received_paths("/echo?item=1"))  # the shared site: other tests ask for it too
    route = ok(await tools.call("browser_route", {"pattern": "**/echo?item=1", "status": 201, "body": '{"mock": true}',
                                                  "content_type": "application/json", "headers": {"X-Mock": "yes"}}))
    assert "Route set: **/echo?item=1 → answered 201 (14-byte body), 0 requests so far." in route.text
    ok(await tools.call("browser_click", {"selector": "button"}))
    assert "status: loaded 201 and 404" in (await tools.call("browser_snapshot", {})).text
    assert len(site.received_paths("/echo?item=1")) == reached_before, "the mocked request reached the server"
    listing = ok(await tools.call("browser_network_requests", {}))
    lines = listing.text.splitlines()
    assert lines[:2] == ["Routes (browser_unroute removes them):",
                         "- **/echo?item=1 → answered 201 (14-byte body), 1 request so far"]
    detail = ok(await tools.call("browser_network_request", {"id": listing.data["requests"][-2]["id"],
                                                             "response_body": True}))
    assert "  x-mock: yes" in detail.text and '{"mock": true}' in detail.text


async def test_a_blocking_route_fails_the_request_until_it_is_removed(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    ok(await tools.call("browser_route", {"pattern": "**/status/404", "action": "block"}))
    blocked = ok(await tools.call("browser_click", {"selector": "button"}))
    assert "/status/404 — net::ERR_BLOCKED_BY_CLIENT" in blocked.text
    removed = ok(await tools.call("browser_unroute", {}))
    assert "Removed 1 route: **/status/404 → blocked, 1 request so far." in removed.text
    assert "No routes left." in removed.text
    again = ok(await tools.call("browser_click", {"selector": "button"}))
    # The server's own 404, no longer blocked: context after the outcome, not a headline (issue 38.5).
    assert "1 request failed, the app may expect that: GET /status/404 404." in again.text, again.text
    assert "ERR_BLOCKED_BY_CLIENT" not in again.text


async def test_unroute_of_an_unknown_pattern_lists_the_routes(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    ok(await tools.call("browser_route", {"pattern": "**/a", "action": "block"}))
    reply = await tools.call("browser_unroute", {"pattern": "**/b"})
    assert reply.is_error and "(routes: **/a)" in reply.text


async def test_a_route_never_opens_an_origin_the_policy_blocks(tmp_path_factory, site, other_site, driver):
    settings = settings_for_tests(tmp_path_factory, blocked_origins=[other_site.origin], warm_reserve=False,
                                  driver=driver)
    async with Webhand(settings) as wh:
        tools = wh.conversation("route-policy")
        ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
        ok(await tools.call("browser_route", {"pattern": f"{other_site.origin}/**", "content_type": "text/html",
                                              "body": "<title>Mocked</title>mocked"}))
        refused = await tools.call("browser_navigate", {"url": other_site.url("cache.html")})
        fetched = ok(await tools.call("browser_eval", {"expression": f"""
            fetch('{other_site.url("echo?mocked=1")}').then(r => r.text(), e => 'failed: ' + e.message)"""}))
    assert refused.is_error and "refused" in refused.text
    assert "failed" in fetched.text and "mocked" not in fetched.text.replace("mocked=1", "")


async def test_a_route_the_page_could_read_across_origins_still_cannot_answer_for_a_blocked_origin(
        tmp_path_factory, site, other_site, driver):
    settings = settings_for_tests(tmp_path_factory, blocked_origins=[other_site.origin], warm_reserve=False,
                                  driver=driver)
    async with Webhand(settings) as wh:
        tools = wh.conversation("route-policy-cors")
        ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
        # With this header the page could read the mock (CORS would not stop it): only the policy can.
        ok(await tools.call("browser_route", {"pattern": f"{other_site.origin}/**", "body": "mocked",
                                              "headers": {"Access-Control-Allow-Origin": "*"}}))
        fetched = ok(await tools.call("browser_eval", {"expression": f"""
            fetch('{other_site.url("echo?cors=1")}').then(r => r.text(), e => 'failed: ' + e.message)"""}))
        listing = ok(await tools.call("browser_network_requests", {}))
    assert fetched.data["result"].startswith("failed")
    assert "ERR_BLOCKED_BY_CLIENT" in line_of(listing.text, "echo?cors=1")
    assert "0 requests so far" in listing.text


async def test_a_route_holds_for_a_tab_opened_later_in_the_session(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    ok(await tools.call("browser_route", {"pattern": "**/echo?item=1", "status": 203, "body": "{}"}))
    ok(await tools.call("browser_tabs", {"action": "open", "url": site.url("network.html")}))
    ok(await tools.call("browser_click", {"selector": "button"}))
    assert "status: loaded 203 and 404" in (await tools.call("browser_snapshot", {})).text


async def test_a_route_answers_a_script_the_page_would_take_from_the_memory_cache(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))  # app.js is now in the memory cache
    ok(await tools.call("browser_route", {"pattern": "**/cacheable/app.js", "content_type": "text/javascript",
                                          "body": "window.cached = 'mock';"}))
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    assert ok(await tools.call("browser_eval", {"expression": "window.cached"})).data["result"] == "mock"


async def test_a_route_answers_a_request_of_a_dedicated_worker(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    ok(await tools.call("browser_route", {"pattern": "**/echo?worker=1", "body": "from the mock"}))
    answered = ok(await tools.call("browser_eval", {"expression": """new Promise(resolve => {
        const code = "fetch('" + location.origin + "/echo?worker=1')" +
                     ".then(r => r.text()).then(postMessage, e => postMessage('failed: ' + e))";
        const worker = new Worker(URL.createObjectURL(new Blob([code], {type: 'text/javascript'})));
        worker.onmessage = event => resolve(event.data); })"""}))
    assert answered.data["result"] == "from the mock"
    listing = ok(await tools.call("browser_network_requests", {}))
    assert "- **/echo?worker=1 → answered 200 (13-byte body), 1 request so far" in listing.text


async def test_a_route_pattern_reads_braces_as_either_and_a_single_star_within_one_path_part(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    ok(await tools.call("browser_route", {"pattern": "**/status/{500,404}", "status": 202}))
    ok(await tools.call("browser_route", {"pattern": "*/echo?item=1", "status": 201}))  # * never crosses a /
    ok(await tools.call("browser_click", {"selector": "button"}))
    assert "status: loaded 200 and 202" in (await tools.call("browser_snapshot", {})).text


async def test_a_route_answers_a_cross_origin_request_that_needs_a_preflight(tools, site, other_site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    ok(await tools.call("browser_route", {"pattern": f"{other_site.origin}/api", "body": "mocked",
                                          "headers": {"Access-Control-Allow-Origin": "*"}}))
    # A custom header makes the browser ask the other origin first (an OPTIONS preflight).
    fetched = ok(await tools.call("browser_eval", {"expression": f"""
        fetch('{other_site.origin}/api', {{headers: {{'X-Custom': '1'}}}})
            .then(r => r.text(), e => 'failed: ' + e)"""}))
    assert fetched.data["result"] == "mocked"


async def test_a_route_header_the_browser_cannot_send_is_refused(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("network.html")}))
    reply = await tools.call("browser_route", {"pattern": "**/x", "headers": {"X-Bad": "a\r\nSet-Cookie: b=c"}})
    assert reply.is_error and "is not a valid HTTP header" in reply.text


async def test_a_binary_response_body_is_saved_to_a_file_as_it_came(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("image.html")}))
    listing = ok(await tools.call("browser_network_requests", {"url_contains": "dot.png", "include_static": True}))
    detail = ok(await tools.call("browser_network_request", {"id": listing.data["requests"][-1]["id"],
                                                             "response_body": True}))
    saved = Path(detail.data["response_body"]["path"])
    assert f"Response body: {saved.stat().st_size:,} bytes of image/png, saved to {saved}." in detail.text
    assert saved.read_bytes() == (Path(__file__).parent / "pages" / "dot.png").read_bytes()


async def test_a_secret_in_a_binary_response_body_is_masked_in_the_saved_file(secret_webhand, site):
    tools = secret_webhand.context(f"binary-{uuid.uuid4().hex[:8]}")
    try:
        ok(await tools.call("browser_navigate", {"url": site.url("api_call.html")}))
        ok(await tools.call("browser_type", {"selector": "#key", "text": "<secret>API_KEY</secret>"}))
        # the server sends the key back inside a binary (octet-stream) answer
        ok(await tools.call("browser_eval", {"expression": """
            fetch('/echo?call=2&type=application/octet-stream', {method: 'POST',
                  body: new Blob(['\\x00', document.getElementById('key').value])}).then(r => r.arrayBuffer())
            .then(b => b.byteLength)"""}))
        listing = ok(await tools.call("browser_network_requests", {"url_contains": "call=2"}))
        detail = ok(await tools.call("browser_network_request", {"id": listing.data["requests"][-1]["id"],
                                                                 "response_body": True}))
    finally:
        await secret_webhand.end_conversation(tools.conversation_id)
    saved = Path(detail.data["response_body"]["path"])
    assert SECRET.encode() not in saved.read_bytes() and b"<secret>API_KEY</secret>" in saved.read_bytes()
    assert "a secret in it was masked" in detail.text


def test_response_sources_are_asked_for_only_when_the_network_tools_are_served(tmp_path_factory, driver):
    settings = settings_for_tests(tmp_path_factory, capabilities=["core"], driver=driver)
    assert Webhand(settings).sessions.driver.response_sources is False
    assert Webhand(settings, capabilities=["core", "network"]).sessions.driver.response_sources is True
    served_all = settings_for_tests(tmp_path_factory, driver=driver)
    assert Webhand(served_all).sessions.driver.response_sources is True  # "all"


# -- rewriting a request and letting it continue ------------------------------------------------

async def _sent_through_the_page(tools) -> str:
    ok(await tools.call("browser_click", {"selector": "#send"}))
    ok(await tools.call("browser_wait_for", {"selector": "#out:not(:empty)"}))
    return (await tools.call("browser_eval", {"expression": "document.getElementById('out').textContent"})).data["result"]


async def test_a_continue_route_changes_url_method_headers_and_body_and_the_server_gets_the_change(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("route/echo.html")}))
    route = ok(await tools.call("browser_route", {
        "pattern": "**/echo?from=page", "action": "continue", "url": site.url("echo?rewritten=1"), "method": "put",
        "headers": {"X-Replace": "new", "X-Added": "yes"}, "body": "rewritten body"}))
    assert (f"Route set: **/echo?from=page → sent on changed (url {site.url('echo?rewritten=1')}; method PUT; "
            "headers x-replace, x-added; 14-byte body), 0 requests so far.") in route.text, route.text
    received = await _sent_through_the_page(tools)
    assert received.startswith("server received: PUT /echo?rewritten=1\n"), received
    headers = {line.split(": ", 1)[0].lower(): line.split(": ", 1)[1] for line in received.splitlines()[1:] if ": " in line}
    assert headers["x-replace"] == "new" and headers["x-added"] == "yes" and headers["x-original"] == "kept", received
    assert received.endswith("rewritten body") and "original body" not in received, received
    assert route.data["routes"][0]["url"] == site.url("echo?rewritten=1")
    assert "1 request so far" in ok(await tools.call("browser_network_requests", {})).text
    # Headers alone: the rest of the request goes as the page sent it.
    ok(await tools.call("browser_route", {"pattern": "**/echo?from=page", "action": "continue",
                                          "headers": {"X-Replace": "only this"}}))
    received = await _sent_through_the_page(tools)
    assert received.startswith("server received: POST /echo?from=page\n") and received.endswith("original body")
    assert "X-Replace: only this" in received or "x-replace: only this" in received, received


#: Rewrites a route may not make: (what it tries, its fields, what the refusal says). {blocked} is an
#: origin the policy blocks; none of them may reach it.
REWRITE_ATTEMPTS = [
    ("a blocked origin", {"url": "{blocked}/echo?leak=1"}, "refused by the blocked_origins rule"),
    ("a blocked origin, scheme in capitals", {"url": "HTTP://{blocked_host}/echo?leak=2"}, "refused by the blocked_origins rule"),
    ("a blocked origin behind user info", {"url": "http://user:pw@{blocked_host}/echo?leak=3"}, "refused by the blocked_origins rule"),
    ("a blocked origin as a hex address", {"url": "http://0x7f000001:{blocked_port}/echo?leak=4"}, "refused by the blocked_origins rule"),
    ("a file", {"url": "file:///etc/passwd"}, "not an absolute http(s) URL"),
    ("script", {"url": "javascript:alert(1)"}, "not an absolute http(s) URL"),
    ("a header split into the URL", {"url": "http://{blocked_host}/\r\nX-Evil: 1"}, "not an absolute http(s) URL"),
    ("a method with a line break", {"method": "GET\r\nX-Evil: 1"}, "not an HTTP method"),
    ("a header with a line break", {"headers": {"X-A": "1\r\nHost: evil"}}, "not a valid HTTP header"),
    ("a rewrite with an answer's status", {"url": "{site}/echo", "status": 404}, "status and content_type do not apply"),
    ("url on a mock", {"action": "fulfill", "url": "{site}/echo"}, "go with action continue"),
]


async def test_a_rewrite_never_reaches_an_origin_the_policy_blocks(tmp_path_factory, site, other_site, driver):
    settings = settings_for_tests(tmp_path_factory, blocked_origins=[other_site.origin], warm_reserve=False,
                                  driver=driver)
    host = other_site.origin.split("://", 1)[1]
    fill = {"blocked": other_site.origin, "blocked_host": host, "blocked_port": host.rsplit(":", 1)[1],
            "site": site.origin}
    async with Webhand(settings) as wh:
        tools = wh.conversation("route-rewrite-policy")
        ok(await tools.call("browser_navigate", {"url": site.url("route/echo.html")}))
        for what, fields, refusal in REWRITE_ATTEMPTS:
            arguments = {"pattern": "**/echo?from=page", "action": "continue",
                         **{k: v.format(**fill) if isinstance(v, str) else v for k, v in fields.items()}}
            reply = await tools.call("browser_route", arguments)
            assert reply.is_error and refusal in reply.text, (what, reply.text)
        received = await _sent_through_the_page(tools)  # no route was set: the page's own request went
    assert received.startswith("server received: POST /echo?from=page"), received
    assert not other_site.received_paths("leak="), other_site.received_paths("leak=")


def test_a_rewritten_request_is_checked_again_as_it_goes_and_the_refusal_names_the_rewrite():
    # The drivers send a rewritten request on without pausing it again: this check is all that stands
    # between a route and a refused origin at that moment (the route's URL was checked when it was set).
    policy = OriginPolicy([], ["http://127.0.0.1:9"], False)
    refusals = RefusalLog()
    reason = rewrite_refusal(policy, refusals, "POST", "http://127.0.0.1:8/a", "http://127.0.0.1:9/b")
    assert reason and reason.startswith("refused by the blocked_origins rule")
    method, url, why = refusals.entries[-1]
    assert (method, url) == ("POST", "http://127.0.0.1:9/b") and why.startswith("a route rewrote http://127.0.0.1:8/a")
    assert rewrite_refusal(policy, refusals, "GET", "http://127.0.0.1:8/a", "http://127.0.0.1:8/c") is None
    assert rewrite_refusal(None, None, "GET", "http://127.0.0.1:8/a", "http://127.0.0.1:9/b") is None  # no policy
