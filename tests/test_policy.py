"""Origin policy: refused navigations, redirects and subresources name the rule; file:// is refused."""

from __future__ import annotations

import json
import socket
import uuid

import pytest

from helpers import settings_for_tests
from webhand import Webhand
from webhand.engine.pw.policy import PlaywrightRequestPolicy as OriginPolicy


def origin(site) -> str:
    return site.url("/").rstrip("/")


@pytest.fixture(scope="module")
async def guarded(tmp_path_factory, other_site, driver):
    """A Webhand that refuses the other local site."""
    settings = settings_for_tests(tmp_path_factory, blocked_origins=[origin(other_site)], warm_reserve=False, driver=driver)
    async with Webhand(settings) as wh:
        yield wh


@pytest.fixture
async def guarded_tools(guarded):
    context = guarded.context(f"policy-{uuid.uuid4().hex[:8]}")
    yield context
    await guarded.end_conversation(context.conversation_id)


async def test_navigation_to_a_blocked_origin_is_refused_naming_the_rule(guarded_tools, other_site):
    reply = await guarded_tools.call("browser_navigate", {"url": other_site.url("actions/target.html")})
    assert reply.is_error
    assert f"refused by the blocked_origins rule '{origin(other_site)}'" in reply.text
    assert reply.data["error"] == "PolicyRefused"


async def test_redirect_to_a_blocked_origin_is_refused(guarded_tools, site, other_site):
    start = site.url(f"redirect?to={other_site.url('actions/target.html')}")
    reply = await guarded_tools.call("browser_navigate", {"url": start})
    assert reply.is_error
    assert f"its redirect to {other_site.url('actions/target.html')} was refused by the blocked_origins rule" in reply.text
    where = await guarded_tools.call("browser_get_url", {})
    assert other_site.url("actions/target.html") not in where.text


async def test_subresource_from_a_blocked_origin_is_refused_and_reported(guarded_tools, site, other_site):
    ok = await guarded_tools.call("browser_navigate", {"url": site.url(f"actions/blocked.html?other={origin(other_site)}")})
    assert not ok.is_error, ok.text
    reply = await guarded_tools.call("browser_click", {"selector": "#fetch"})
    assert not reply.is_error, reply.text
    assert (f"Request failed: GET {other_site.url('actions/target.html')} — "
            f"refused by the blocked_origins rule '{origin(other_site)}'") in reply.text
    shown = await guarded_tools.call("browser_eval", {"expression": "document.querySelector('#out').textContent"})
    assert json.loads(shown.text) == "fetch failed"


async def test_allowed_origins_still_load(guarded_tools, site):
    reply = await guarded_tools.call("browser_navigate", {"url": site.url("actions/nav.html")})
    assert not reply.is_error and "Title: Start" in reply.text


async def test_file_urls_are_refused_by_default(tools, tmp_path):
    page = tmp_path / "local.html"
    page.write_text("<title>Local</title>")
    reply = await tools.call("browser_navigate", {"url": page.as_uri()})
    assert reply.is_error and "file:// URLs are refused (allow_file_urls is off)" in reply.text


@pytest.mark.parametrize("rules, url, refused", [
    (["https://example.com"], "https://example.com/a", None),
    (["https://example.com"], "http://example.com/a", "not in allowed_origins"),
    (["example.com"], "http://example.com:8080/", None),
    (["*.example.com"], "https://api.example.com/", None),
    (["*.example.com"], "https://example.org/", "not in allowed_origins"),
    (["127.0.0.1:8000"], "http://127.0.0.1:8001/", "not in allowed_origins"),
])
def test_allowed_origin_rules(rules, url, refused):
    reason = OriginPolicy(rules, [], False).check(url)
    assert (reason is None) if refused is None else (refused in reason)


def test_blocked_rules_win_over_allowed_ones():
    policy = OriginPolicy(["*.example.com"], ["ads.example.com"], False)
    assert policy.check("https://www.example.com/") is None
    assert "blocked_origins rule 'ads.example.com'" in policy.check("https://ads.example.com/x")
    assert policy.check("data:text/html,hi") is None


async def test_a_new_tab_cannot_load_a_blocked_origin(guarded_tools, site, other_site):
    ok = await guarded_tools.call("browser_navigate", {"url": site.url(f"actions/blocked.html?other={origin(other_site)}")})
    assert not ok.is_error, ok.text
    reply = await guarded_tools.call("browser_click", {"selector": "#popup"})
    assert not reply.is_error, reply.text
    tabs = (await guarded_tools.call("browser_get_url", {})).data["tabs"]
    assert len(tabs) == 2
    assert tabs[1]["title"] != "Target"  # the other site's page never loaded
    assert (f"Request failed: GET {other_site.url('actions/target.html')} — "
            f"refused by the blocked_origins rule '{origin(other_site)}'") in reply.text


# ---------------------------------------------------------------------------------------------
# Channels the browser cannot route: the policy proxy refuses them (engine/policy_proxy.py)

CHANNELS = "origins/channels.html"


def marked(site, scheme: str = "http") -> tuple[str, str]:
    """A URL on ``site`` that no other test asks for, and its marker."""
    marker = f"mark-{uuid.uuid4().hex[:12]}"
    return f"{scheme}://127.0.0.1:{site.port}/{marker}?q=secret", marker


async def test_a_websocket_to_a_blocked_origin_never_connects_and_is_named(guarded_tools, site, other_site):
    target, marker = marked(other_site, "ws")
    ok = await guarded_tools.call("browser_navigate", {"url": site.url(f"{CHANNELS}?to={target}")})
    assert not ok.is_error, ok.text
    reply = await guarded_tools.call("browser_click", {"selector": "#ws-button"})
    assert f"Request failed: WebSocket {target} — refused by the blocked_origins rule '{origin(other_site)}'" in reply.text
    await guarded_tools.call("browser_wait_for", {"text": "ws failed"})
    assert other_site.received_paths(marker) == []


async def test_a_shared_worker_cannot_fetch_a_blocked_origin(guarded_tools, site, other_site):
    target, marker = marked(other_site)
    await guarded_tools.call("browser_navigate", {"url": site.url(CHANNELS)})
    reply = await guarded_tools.call("browser_eval", {"expression": f"await channels.sharedWorker('fetch', {target!r})"})
    assert not reply.is_error, reply.text
    assert other_site.received_paths(marker) == []


@pytest.mark.parametrize("kind", ["fetch", "ws"])
async def test_a_service_worker_cannot_reach_a_blocked_origin(guarded_tools, site, other_site, kind):
    target, marker = marked(other_site, "ws" if kind == "ws" else "http")
    await guarded_tools.call("browser_navigate", {"url": site.url(CHANNELS)})
    reply = await guarded_tools.call("browser_eval", {"expression": f"await channels.serviceWorker({kind!r}, {target!r})"})
    assert reply.data["result"] == "failed", reply.text  # the worker ran, and its attempt failed
    assert other_site.received_paths(marker) == []


async def test_a_host_name_that_resolves_to_a_blocked_address_is_refused(guarded_tools, other_site):
    name = socket.gethostname()
    try:
        resolves_to_loopback = socket.gethostbyname(name) == "127.0.0.1" and "localhost" not in name
    except OSError:
        resolves_to_loopback = False
    if not resolves_to_loopback:
        pytest.skip("this machine's host name does not resolve to 127.0.0.1")
    marker = f"mark-{uuid.uuid4().hex[:12]}"
    reply = await guarded_tools.call("browser_navigate", {"url": f"http://{name}:{other_site.port}/{marker}"})
    assert reply.is_error and reply.data["error"] == "PolicyRefused", reply.text
    assert f"({name} resolves to 127.0.0.1)" in reply.text
    assert other_site.received_paths(marker) == []


async def test_allowed_traffic_passes_the_policy_proxy_intact(guarded_tools, site):
    await guarded_tools.call("browser_navigate", {"url": site.url(CHANNELS)})
    reply = await guarded_tools.call("browser_eval", {"expression": """await fetch('/echo?x=1', {method: 'POST',
        body: 'a=1&b=' + 'x'.repeat(100000), headers: {'Content-Type': 'application/x-www-form-urlencoded'}}).then(r => r.text())"""})
    echoed = reply.data["result"]
    assert echoed.startswith("POST /echo?x=1\n") and echoed.endswith("a=1&b=" + "x" * 100000)
    assert "Connection: close" in echoed  # it went through the proxy, which sends one request per connection
    assert "Proxy-Connection" not in echoed
    # A WebSocket to an allowed origin is tunneled: its handshake reaches the server, query and all.
    target, marker = marked(site, "ws")
    await guarded_tools.call("browser_eval", {"expression": f"await channels.ws({target!r})"})
    assert site.received_paths(marker) == [target.split(str(site.port), 1)[1]]
