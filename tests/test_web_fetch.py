"""web_fetch: plain HTTP with caps and the origin policy, and the browser when the page needs it."""

from __future__ import annotations

import asyncio
import os
import uuid
from urllib.parse import quote

import psutil
import pytest

from helpers import Site, _Handler, converting_workers, ok, settings_for_tests
from webhand import Webhand


class _BrowsersOnly(_Handler):
    """Serves /fetch/doc.html to browsers only, the way some sites answer plain clients with a 403."""

    def do_GET(self) -> None:
        agent = self.headers.get("User-Agent", "")
        if self.path.startswith("/only-browsers") and "Chrome/" not in agent and "Firefox/" not in agent:
            self._send(403, b"<title>Forbidden</title><h1>Plain clients are not served here</h1>")
            return
        if self.path.startswith("/only-browsers"):
            self.path = "/fetch/doc.html"
        super().do_GET()


@pytest.fixture(scope="module")
def picky_site():
    server = Site(_BrowsersOnly)
    yield server
    server.close()


@pytest.fixture(scope="module")
async def limited(tmp_path_factory, other_site):
    """A Webhand with a small fetch cap and other_site blocked; web_fetch alone starts no browser."""
    settings = settings_for_tests(tmp_path_factory, fetch_max_bytes=2048, warm_reserve=False,
                                  blocked_origins=[other_site.origin])
    async with Webhand(settings) as webhand:
        yield webhand


async def test_a_documentation_page_is_read_without_a_browser_with_title_and_links(webhand, tools, site):
    reply = ok(await tools.call("web_fetch", {"url": site.url("fetch/doc.html")}))
    assert "without the browser" in reply and "Title: Widgets — User Guide" in reply
    assert "A widget holds at most 40 gadgets" in reply
    assert f"({site.url('fetch/colours.html')})" in reply, "relative links are made absolute against the page"
    assert f"({site.url('fetch/doc.html')}#limits)" in reply
    assert "Home" not in reply.split("Title:", 1)[1], "the menu is not the article"
    assert webhand.sessions.list(tools.conversation_id) == [], "no browser was started"


async def test_a_403_to_plain_clients_falls_back_to_the_browser(tools, picky_site):
    reply = ok(await tools.call("web_fetch", {"url": picky_site.url("only-browsers")}))
    assert "Fell back to the browser: the server answered HTTP 403" in reply
    assert "A widget holds at most 40 gadgets" in reply


async def test_an_empty_shell_filled_by_scripts_falls_back_to_the_browser(tools, site):
    reply = ok(await tools.call("web_fetch", {"url": site.url("fetch/shell.html")}))
    assert "Fell back to the browser: the page's HTML is an empty shell" in reply
    assert "This text exists only after the page's JavaScript ran" in reply


async def test_a_challenge_page_falls_back_to_the_browser(tools, site):
    reply = ok(await tools.call("web_fetch", {"url": site.url("fetch/challenge.html")}))
    assert "Fell back to the browser: the page is a bot challenge" in reply and "Past the check" in reply


async def test_without_fallback_the_reply_says_the_page_needed_the_browser(webhand, tools, site):
    reply = ok(await tools.call("web_fetch", {"url": site.url("fetch/shell.html"), "fallback": False}))
    assert "Not opened in the browser (fallback=false)" in reply and "Fell back" not in reply
    assert webhand.sessions.list(tools.conversation_id) == []


async def test_a_redirect_to_a_blocked_origin_is_refused_before_it_is_requested(limited, site, other_site):
    tools = limited.conversation(f"fetch-{uuid.uuid4().hex[:8]}")
    target = other_site.url(f"fetch/doc.html?hop={uuid.uuid4().hex}")
    reply = await tools.call("web_fetch", {"url": site.url(f"redirect?to={target}")})
    assert reply.is_error and "refused by the blocked_origins rule" in reply.text and "a redirect from" in reply.text
    assert not other_site.received_paths(target.rsplit("hop=", 1)[1]), "the blocked origin never saw the request"
    direct = await tools.call("web_fetch", {"url": other_site.url("fetch/doc.html")})
    assert direct.is_error and "blocked_origins" in direct.text


async def test_a_body_past_the_size_cap_is_cut(limited, site):
    tools = limited.conversation(f"fetch-{uuid.uuid4().hex[:8]}")
    long_page = "<title>Long</title><p>" + "All work and no play. " * 400 + "</p>"  # 8.8 kB
    reply = ok(await tools.call("web_fetch", {"url": site.url(f"slow?ms=0&body={quote(long_page)}")}))
    assert "2,048 bytes, cut at fetch_max_bytes" in reply


async def test_a_slow_server_is_given_up_on_at_the_timeout(limited, site):
    tools = limited.conversation(f"fetch-{uuid.uuid4().hex[:8]}")
    reply = await tools.call("web_fetch", {"url": site.url("slow?ms=4000"), "timeout": "1s"})
    assert reply.is_error and "did not finish within 1 s" in reply.text


async def test_a_url_that_is_not_http_is_refused(limited):
    tools = limited.conversation(f"fetch-{uuid.uuid4().hex[:8]}")
    reply = await tools.call("web_fetch", {"url": "file:///etc/passwd"})
    assert reply.is_error and "http:// and https:// URLs only" in reply.text


async def test_a_redirect_to_a_url_no_client_can_open_is_a_failed_fetch(limited, site):
    tools = limited.conversation(f"fetch-{uuid.uuid4().hex[:8]}")
    for location in ("http://127.0.0.1:99999/", "http://[::1", "http://a%00b/"):
        reply = await tools.call("web_fetch", {"url": site.url(f"redirect?to={quote(location)}")})
        assert reply.is_error and "Error: " in reply.text and "unexpected" not in reply.text, reply.text


async def test_a_closed_webhand_leaves_no_converting_worker(tmp_path_factory, site):
    """Conversions run in a worker process, and one is kept started ahead; closing ends it too."""
    settings = settings_for_tests(tmp_path_factory, warm_reserve=False)
    async with Webhand(settings) as webhand:
        for _ in range(2):  # the second conversion leaves a spare started ahead
            ok(await webhand.conversation(f"worker-{uuid.uuid4().hex[:6]}").call("web_fetch",
                                                                          {"url": site.url("fetch/doc.html")}))
        # The spare is started as the second conversion ends; on a loaded machine give it a moment to show.
        spare = converting_workers(os.getpid())
        for _ in range(50):
            if spare:
                break
            await asyncio.sleep(0.1)
            spare = converting_workers(os.getpid())
        assert spare, "no worker was kept started ahead: this test no longer tests anything"
    left = psutil.wait_procs(converting_workers(os.getpid()), timeout=10)[1]
    assert not left, f"converting workers left after close: {[p.pid for p in left]}"
