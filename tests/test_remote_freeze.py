"""A pool endpoint that stops answering without closing its connection: its browser frozen
(SIGSTOP on its process group) or its network cut silently (a loopback proxy that stops
forwarding and closes nothing). The pool must find it within ``2 × (health_interval + timeout)``
plus a second, the calls running there must end within their own timeout saying that endpoint
stopped answering (never blaming the page), and the sessions on the other endpoint must not notice.

The calm endpoints are shared by the module; the faulty one is started per test and ended by its
pid. Timing bounds are asserted because the issue asks for them (issue 31); they are the bounds the
design promises, with a margin for a loaded CI machine where stated."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from helpers import settings_for_tests
from remote_engines import DebuggingChrome, PlaywrightServer, SilentProxy, StandIn
from webhand import Webhand
from webhand.session.manager import make_driver
from webhand.session.placing import endpoint_name

HEALTH_INTERVAL = 1.0
ENDPOINT_TIMEOUT = 2.0
#: What the design promises: two failed checks in a row, each at most an interval plus its cap, and a second.
DETECTION_BOUND = 2 * (HEALTH_INTERVAL + ENDPOINT_TIMEOUT) + 1
CALL_TIMEOUT = 10.0
#: A reply is due at the call's own timeout; this much more covers building the reply on a loaded machine.
REPLY_MARGIN = 1.5
#: A check given up at its cap returns then; this much more covers a loaded machine's event loop.
CAP_MARGIN = 1.0
#: What the page-blaming replies say; a frozen endpoint's reply must say none of it.
PAGE_BLAME = ("stopped responding", "did not finish within", "The page in tab", "may be hung")

SETUPS = [
    pytest.param("cdp", "cdp", "freeze", id="cdp-driver-cdp-endpoint-frozen"),
    pytest.param("cdp", "cdp", "cut", id="cdp-driver-cdp-endpoint-cut"),
    pytest.param("playwright", "cdp", "freeze", id="playwright-driver-cdp-endpoint-frozen"),
    pytest.param("playwright", "playwright", "freeze", id="playwright-driver-browser-server-frozen"),
    pytest.param("playwright", "playwright", "cut", id="playwright-driver-browser-server-cut"),
]


@pytest.fixture(scope="module")
def calm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, StandIn]]:
    """One endpoint of each kind that never fails, shared by every case."""
    folder = tmp_path_factory.mktemp("calm-endpoints")
    started: dict[str, StandIn] = {}
    try:
        started["cdp"] = DebuggingChrome(folder / "profile")
        started["playwright"] = PlaywrightServer(folder)
        yield started
    finally:
        for engine in started.values():
            engine.kill()


def url_of(engine: StandIn, kind: str, port: int | None = None) -> str:
    """The endpoint's URL (CDP: the browser's own ws:// URL, so that a proxy stays in the path),
    through ``port`` when given."""
    url = engine.ws_url if kind == "cdp" else engine.url  # type: ignore[union-attr]
    if port is None:
        return url
    own = url.split("/")[2]
    return url.replace(own, f"127.0.0.1:{port}", 1)


def start_faulty(kind: str, folder: Path) -> StandIn:
    return DebuggingChrome(folder / "profile") if kind == "cdp" else PlaywrightServer(folder)


async def until_drained(wh: Webhand, name: str, since: float) -> float:
    """Seconds from ``since`` until the pool counts endpoint ``name`` unhealthy (polled, capped)."""
    while True:
        row = next(r for r in wh.sessions.pool.status() if r["endpoint"] == name)
        if not row["healthy"]:
            return time.monotonic() - since
        assert time.monotonic() - since < DETECTION_BOUND + 20, f"endpoint {name} was never drained"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize(("driver_name", "kind", "fault"), SETUPS)
async def test_an_endpoint_that_stops_answering_is_drained_in_time_and_named(
        driver_name, kind, fault, calm, tmp_path, tmp_path_factory, site):
    faulty = start_faulty(kind, tmp_path)
    processes = faulty.processes()
    proxy = SilentProxy(int(url_of(faulty, kind).split("/")[2].split(":")[1])) if fault == "cut" else None
    try:
        endpoints = [
            {"name": "east", "kind": kind, "url": url_of(faulty, kind, proxy.port if proxy else None),
             "timeout": ENDPOINT_TIMEOUT, "retries": 0, "capacity": 4},
            # The calm endpoint's own cap is generous: a healthy browser on a loaded machine must
            # never be drained by this test.
            {"name": "west", "kind": kind, "url": url_of(calm[kind], kind), "timeout": 10, "retries": 0,
             "capacity": 4}]
        settings = settings_for_tests(tmp_path_factory, driver=driver_name, timeout=CALL_TIMEOUT,
                                      pool={"endpoints": endpoints, "health_interval": HEALTH_INTERVAL})
        async with Webhand(settings) as wh:
            contexts = [wh.conversation(f"s{i}") for i in range(4)]
            # Placed before any await, in turn: the pool alternates east and west.
            replies = await asyncio.gather(*(c.call("browser_navigate", {"url": site.url(f"set-cookie?kept{i}=yes")})
                                             for i, c in enumerate(contexts)))
            assert all(not r.is_error for r in replies), [r.text for r in replies if r.is_error]
            on_east = [c for c in contexts if endpoint_name(wh.sessions.find(c.conversation_id)) == "east"]
            on_west = [c for c in contexts if c not in on_east]
            assert len(on_east) == len(on_west) == 2

            began = time.monotonic()
            if proxy is not None:
                proxy.cut()
            else:
                faulty.freeze()

            async def timed(context) -> tuple[float, str, bool]:
                started = time.monotonic()
                reply = await context.call("browser_navigate", {"url": site.url("login.html")})
                return time.monotonic() - started, reply.text, reply.is_error

            async def others_keep_working() -> None:
                while not drained.done():  # the other endpoint's sessions, all through the fault
                    for context in on_west:
                        reply = await context.call("browser_snapshot", {})
                        assert not reply.is_error and "Cookie set" in reply.text, reply.text

            drained = asyncio.ensure_future(until_drained(wh, "east", began))
            replies, _ = await asyncio.gather(asyncio.gather(*(timed(c) for c in on_east)), others_keep_working())
            detection = await drained
            print(f"{driver_name} driver, {kind} endpoint, {fault}: drained after {detection:.2f} s; "
                  f"calls there ended after {', '.join(f'{took:.2f}' for took, _, _ in replies)} s")
            assert detection <= DETECTION_BOUND

            for took, text, is_error in replies:
                assert took <= CALL_TIMEOUT + REPLY_MARGIN, (took, text)
                assert is_error and "endpoint 'east'" in text and "stopped answering" in text, text
                assert not any(blame in text for blame in PAGE_BLAME), text
            # Placed afresh on the next call, told once (by the call that failed); the others never
            # noticed: their storage intact, nothing told.
            again = await asyncio.gather(*(c.call("browser_navigate", {"url": site.url("login.html")})
                                           for c in on_east))
            kept = await asyncio.gather(*(c.call("browser_cookies", {"action": "list"}) for c in on_west))
            for context, reply in zip(on_east, again):
                assert not reply.is_error and "east" not in reply.text, reply.text
                assert endpoint_name(wh.sessions.find(context.conversation_id)) == "west"
            for context, reply in zip(on_west, kept):
                assert not reply.is_error and f"kept{contexts.index(context)}" in reply.text, reply.text
                assert "east" not in reply.text and "lost" not in reply.text
    finally:
        faulty.thaw()
        faulty.kill()
        if proxy is not None:
            proxy.close()
    left = [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, f"stand-in processes left: {[p.pid for p in left]}"


@pytest.mark.parametrize("driver_name", ["cdp", "playwright"])
async def test_a_health_check_returns_at_its_cap_and_leaves_no_request_behind(driver_name, tmp_path, tmp_path_factory):
    frozen = DebuggingChrome(tmp_path / "profile")
    try:
        engine = make_driver(settings_for_tests(tmp_path_factory, driver=driver_name))
        await engine.start()
        try:
            browser = await engine.connect(frozen.ws_url, kind="cdp", timeout=10)
            assert await browser.ping(5)
            frozen.freeze()
            waiting_before = set(browser.connection.client.pending_requests) if driver_name == "cdp" else set()
            for cap in (0.5, 1.0):  # the second asks behind the first, which never got its answer
                started = time.monotonic()
                assert not await browser.ping(cap)
                assert time.monotonic() - started <= cap + CAP_MARGIN
            if driver_name == "cdp":  # the requests given up on are not kept waiting for an answer
                # The cancellation of the last one lands on a later turn of the loop (the next, unless
                # the loop has other work queued, as on a loaded machine): a few turns, no wall time.
                for _ in range(100):
                    if set(browser.connection.client.pending_requests) <= waiting_before:
                        break
                    await asyncio.sleep(0)
                assert set(browser.connection.client.pending_requests) <= waiting_before
            started = time.monotonic()
            await browser.abandon()
            assert time.monotonic() - started <= 1.0 + CAP_MARGIN
        finally:
            frozen.thaw()
            await engine.stop()
    finally:
        frozen.kill()


@pytest.mark.parametrize("driver_name", ["cdp", "playwright"])
async def test_a_hung_page_on_an_endpoint_that_answers_is_still_the_pages_fault(
        driver_name, calm, tmp_path_factory, site):
    endpoint = {"name": "west", "kind": "cdp", "url": url_of(calm["cdp"], "cdp"), "timeout": ENDPOINT_TIMEOUT,
                "retries": 0}
    settings = settings_for_tests(tmp_path_factory, driver=driver_name, timeout=6,
                                  pool={"endpoints": [endpoint], "health_interval": HEALTH_INTERVAL})
    async with Webhand(settings) as wh:
        tools = wh.conversation("hangs")
        assert not (await tools.call("browser_navigate", {"url": site.url("recovery/form.html")})).is_error
        reply = await tools.call("browser_click", {"selector": "button"})  # its handler never returns
        assert reply.is_error and "stopped responding" in reply.text, reply.text
        assert "endpoint" not in reply.text
        assert [row["healthy"] for row in wh.sessions.pool.status()] == [True]
        after = await tools.call("browser_navigate", {"url": site.url("login.html")})
        assert not after.is_error and "endpoint" not in after.text, after.text
