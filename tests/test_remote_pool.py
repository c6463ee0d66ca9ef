"""Remote browsers and the pool, against engines started here: Playwright browser servers (the
package's own driver, our Chromium) and Chromium with --remote-debugging-port, all on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest

from helpers import settings_for_tests
from remote_engines import PlaywrightServer
from webhand import Webhand
from webhand.session.placing import endpoint_name


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[PlaywrightServer]]:
    """Three Playwright servers shared by the tests of this module that do not kill one."""
    folder = tmp_path_factory.mktemp("pw-servers")
    # Started side by side: each start is a Node process launching its Chromium, mostly waiting.
    with ThreadPoolExecutor(3) as starting:
        starts = [starting.submit(PlaywrightServer, folder) for _ in range(3)]
    started = [start.result() for start in starts if start.exception() is None]
    try:
        for start in starts:
            start.result()  # a start that failed fails the fixture, once the others are killed below
        yield started
    finally:
        for server in started:
            server.kill()


async def queued(wh: Webhand, count: int) -> None:
    """Until ``count`` new sessions wait in the pool's queue (polled, capped at 10 s)."""
    deadline = time.monotonic() + 10
    while wh.sessions.pool.waiting != count:
        assert time.monotonic() < deadline, "no session joined the queue"
        await asyncio.sleep(0.02)


def pool_of(servers: list[PlaywrightServer], capacity: int, **pool: object) -> dict[str, object]:
    endpoints = [{"name": f"pw{i}", "kind": "playwright", "url": s.url, "capacity": capacity, "retries": 0,
                  "timeout": 10} for i, s in enumerate(servers, 1)]
    return {"endpoints": endpoints, **pool}


async def test_twenty_sessions_spread_over_three_endpoints_within_capacity(tmp_path_factory, servers, site):
    # Twenty contexts opening at once on a loaded CI machine: a cap that does not cut them short.
    settings = settings_for_tests(tmp_path_factory, timeout=60, pool=pool_of(servers, capacity=7))
    async with Webhand(settings) as wh:
        contexts = [wh.conversation(f"c{i}") for i in range(20)]
        replies = await asyncio.gather(*(c.call("browser_navigate", {"url": site.url(f"login.html?n={i}")})
                                         for i, c in enumerate(contexts)))
        assert all(not r.is_error for r in replies), [r.text for r in replies if r.is_error]
        placed = Counter(endpoint_name(wh.sessions.find(c.conversation_id)) for c in contexts)
        assert sorted(placed) == ["pw1", "pw2", "pw3"]
        assert max(placed.values()) <= 7 and sum(placed.values()) == 20
        assert {row["endpoint"]: row["sessions"] for row in wh.sessions.pool.status()} == placed
        for i, context in enumerate(contexts):  # every session kept its own page
            assert f"n={i}" in (await context.call("browser_tabs", {"action": "list"})).text


async def test_sessions_of_a_killed_endpoint_start_afresh_elsewhere_and_the_others_keep_their_pages(
        tmp_path_factory, tmp_path, servers, site):
    doomed = PlaywrightServer(tmp_path)
    others = servers[:2]
    try:
        settings = settings_for_tests(tmp_path_factory, pool=pool_of([doomed, *others], capacity=4,
                                                                     health_interval=0.5))
        async with Webhand(settings) as wh:
            contexts = [wh.conversation(f"k{i}") for i in range(6)]
            replies = await asyncio.gather(*(c.call("browser_navigate", {"url": site.url(f"login.html?kept={i}")})
                                             for i, c in enumerate(contexts)))
            assert all(not r.is_error for r in replies), [r.text for r in replies if r.is_error]
            on_doomed = [c for c in contexts if endpoint_name(wh.sessions.find(c.conversation_id)) == "pw1"]
            elsewhere = [c for c in contexts if c not in on_doomed]
            assert len(on_doomed) == 2

            doomed.kill()  # the Playwright server we started, by its pid, mid-run
            killed = time.monotonic()
            for context in on_doomed:
                # The first call after the kill may race the dropped connection: it then fails saying
                # the endpoint was lost, and the next call runs fresh. Either way the loss is told once.
                replies = [await context.call("browser_navigate", {"url": site.url("login.html")})]
                if replies[0].is_error:
                    replies.append(await context.call("browser_navigate", {"url": site.url("login.html")}))
                assert not replies[-1].is_error, replies[-1].text
                assert sum("endpoint 'pw1' of this session was lost" in r.text for r in replies) == 1
                assert endpoint_name(wh.sessions.find(context.conversation_id)) in {"pw2", "pw3"}
                again = await context.call("browser_snapshot", {})
                assert "was lost" not in again.text and "Sign in" in again.text
            print(f"recovered {len(on_doomed)} sessions {time.monotonic() - killed:.2f} s after the kill")
            for context in elsewhere:  # nothing lost on the other endpoints
                reply = await context.call("browser_tabs", {"action": "list"})
                assert f"kept={contexts.index(context)}" in reply.text and "lost" not in reply.text
    finally:
        doomed.kill()


@pytest.mark.parametrize("death", ["the server", "only its browser"])
async def test_a_call_running_when_its_endpoint_dies_says_so_and_the_next_call_runs_elsewhere(
        tmp_path_factory, tmp_path, servers, site, death):
    # When only the browser dies, the server outlives it and closes the connection saying "Browser
    # closed": every call on it fails with that reason one event-loop turn before the browser
    # reports its disconnect; the session must still be told once and start afresh elsewhere.
    doomed = PlaywrightServer(tmp_path)
    try:
        settings = settings_for_tests(tmp_path_factory, pool=pool_of([doomed, servers[0]], capacity=1))
        async with Webhand(settings) as wh:
            tools = wh.conversation("busy")
            assert not (await tools.call("browser_navigate", {"url": site.url("login.html")})).is_error
            assert endpoint_name(wh.sessions.find("busy")) == "pw1"
            running = asyncio.ensure_future(tools.call("browser_navigate", {"url": site.url("slow?ms=8000")}))
            deadline = time.monotonic() + 10
            while not site.received_paths("/slow"):  # the call is under way (polled, capped)
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            if death == "the server":
                doomed.kill()
            else:
                doomed.kill_descendants()
            reply = await running
            assert reply.is_error and "endpoint 'pw1' of this session was lost while the call ran" in reply.text, \
                reply.text
            after = await tools.call("browser_navigate", {"url": site.url("login.html")})
            assert not after.is_error and "lost" not in after.text, after.text
            assert endpoint_name(wh.sessions.find("busy")) == "pw2"
    finally:
        doomed.kill()


async def test_a_lost_endpoint_takes_sessions_again_once_it_answers(tmp_path_factory, tmp_path, site):
    server = PlaywrightServer(tmp_path)
    port = server.port
    pool = pool_of([server], capacity=2, health_interval=0.3, queue_timeout=45)
    settings = settings_for_tests(tmp_path_factory, timeout=60, pool=pool)  # a restart under load takes a while
    try:
        async with Webhand(settings) as wh:
            assert not (await wh.conversation("a").call("browser_navigate", {"url": site.url("login.html")})).is_error
            server.kill()
            server = PlaywrightServer(tmp_path, port=port)  # back on the same address
            # The new session waits in the queue until the health checks have reconnected.
            reply = await wh.conversation("b").call("browser_navigate", {"url": site.url("login.html")})
            assert not reply.is_error, reply.text
            assert [row["healthy"] for row in wh.sessions.pool.status()] == [True]
    finally:
        server.kill()


async def test_a_full_pool_queues_then_times_out_with_a_clear_error(tmp_path_factory, servers, site):
    settings = settings_for_tests(tmp_path_factory, pool=pool_of(servers[:1], capacity=1, queue_size=1,
                                                                queue_timeout=1))
    async with Webhand(settings) as wh:
        assert not (await wh.conversation("first").call("browser_navigate", {"url": site.url("login.html")})).is_error
        waiting = asyncio.ensure_future(wh.conversation("second").call("browser_navigate", {"url": site.url("login.html")}))
        await queued(wh, 1)
        refused = await wh.conversation("third").call("browser_navigate", {"url": site.url("login.html")})
        assert refused.is_error
        assert "pool is full" in refused.text and "already wait (queue_size 1)" in refused.text
        timed_out = await waiting
        assert timed_out.is_error
        assert "pool is full" in timed_out.text and "after waiting 1." in timed_out.text
        assert "Traceback" not in timed_out.text


async def test_a_queued_session_gets_the_place_freed_and_says_how_long_it_waited(tmp_path_factory, servers, site):
    settings = settings_for_tests(tmp_path_factory, pool=pool_of(servers[:1], capacity=1, queue_timeout=30))
    async with Webhand(settings) as wh:
        assert not (await wh.conversation("first").call("browser_navigate", {"url": site.url("login.html")})).is_error
        waiting = asyncio.ensure_future(wh.conversation("second").call("browser_navigate", {"url": site.url("login.html")}))
        await queued(wh, 1)
        await wh.end_conversation("first")
        reply = await waiting
        assert not reply.is_error, reply.text
        assert "waited" in reply.text and "free place in the browser pool" in reply.text


async def test_a_pool_mixes_local_launching_and_a_remote_endpoint(tmp_path_factory, servers, site):
    pool = pool_of(servers[:1], capacity=1)
    pool["endpoints"].append({"name": "here", "kind": "local", "capacity": 1})  # type: ignore[union-attr]
    async with Webhand(settings_for_tests(tmp_path_factory, pool=pool)) as wh:
        for name in ("one", "two"):
            assert not (await wh.conversation(name).call("browser_navigate", {"url": site.url("login.html")})).is_error
        assert {endpoint_name(wh.sessions.find("one")), endpoint_name(wh.sessions.find("two"))} == {"pw1", "here"}
        assert len(wh.sessions.browser_pids()) == 1  # the local one, launched here, owned here


async def test_labels_pin_sessions_to_the_endpoints_that_carry_them(tmp_path_factory, servers, site):
    pool = pool_of(servers, capacity=5)
    pool["endpoints"][2]["labels"] = ["gpu"]  # type: ignore[index]
    async with Webhand(settings_for_tests(tmp_path_factory, pool=pool, pool_labels=["gpu"])) as wh:
        for name in ("a", "b", "c"):
            assert not (await wh.conversation(name).call("browser_navigate", {"url": site.url("login.html")})).is_error
            assert endpoint_name(wh.sessions.find(name)) == "pw3"


async def test_closing_webhand_disconnects_and_leaves_remote_browsers_running(tmp_path_factory, servers, site):
    browsers = [p for server in servers for p in psutil.Process(server.pid).children()]  # each server's Chromium
    async with Webhand(settings_for_tests(tmp_path_factory, pool=pool_of(servers, capacity=2))) as wh:
        for name in ("a", "b", "c"):
            assert not (await wh.conversation(name).call("browser_navigate", {"url": site.url("login.html")})).is_error
        connections = [e.browser for e in wh.sessions.pool.endpoints]
    assert all(not c.alive for c in connections)  # disconnected
    assert all(server.alive() for server in servers)  # not killed: webhand did not start them
    assert browsers and all(browser.is_running() for browser in browsers)
