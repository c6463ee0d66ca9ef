"""The pool: where a new session's browser comes from.

Each endpoint (``config.EndpointSettings``) is local launching, a Playwright browser server
(``playwright run-server`` / ``launch-server``, the official container image) or a browser
speaking CDP (browserless, a cloud provider's ``wss://`` URL, a Chrome started with
``--remote-debugging-port``). A new session goes to the least-loaded healthy endpoint that has
room and carries the labels asked for, and stays there for its life. On a remote endpoint a
session is a browser context in the endpoint's one shared connection; locally it is a browser
of its own, as without a pool.

Health: a remote endpoint is healthy while its connection is up and answers a round trip
(checked every ``health_interval``, each check given up at the endpoint's ``timeout`` whatever the
socket does). When it drops, fails two checks in a row, or does not answer a call's own check
(``check``), the endpoint is drained: it takes no new session, and each of its sessions learns
it through its placement's ``lost`` (a call running on it stops at once; the manager tells each
one, on its next call, that its pages are gone, and places it afresh). It is reconnected every
``health_interval`` until it connects and answers; then it takes sessions again. A browser that
stops answering without closing the connection (a frozen host, a partition that drops packets)
is thus found within ``2 × (health_interval + timeout)``. webhand never kills a remote browser:
closing only disconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from webhand.config import EndpointSettings, PoolSettings
from webhand.engine.capped import answers_within
from webhand.engine.driver import BrowserHandle, Driver
from webhand.errors import BrowserLaunchFailed, ConfigError, PoolFull, WebhandError

log = logging.getLogger("webhand.pool")

#: Health checks an endpoint that is still connected must fail in a row before it is drained.
_FAILED_CHECKS_TO_DRAIN = 2

_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def redacted_url(url: str) -> str:
    """``url`` without what may be a credential: user:password, the query and the fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def expand_headers(headers: dict[str, str], endpoint: str) -> dict[str, str]:
    """Header values with ``${NAME}`` read from the environment, so a key need not sit in a file."""
    def value(match: re.Match[str]) -> str:
        found = os.environ.get(match.group(1))
        if found is None:
            raise ConfigError(f"A header of pool endpoint {endpoint!r} refers to ${{{match.group(1)}}}, which is "
                              "not set.",
                              f"Set the environment variable {match.group(1)} for webhand, or write the value itself.")
        return found

    return {name: _ENV_REFERENCE.sub(value, text) for name, text in headers.items()}


#: Why an endpoint whose connection closed was drained (any other reason: it stopped answering).
DROPPED = "the connection dropped"


@dataclass(frozen=True)
class Loss:
    """Why a session's place went away: ``reason`` in words, ``silent`` when the browser stopped
    answering without closing the connection (rather than the connection dropping)."""

    reason: str
    silent: bool


def _new_future() -> asyncio.Future[Loss]:
    return asyncio.get_running_loop().create_future()


@dataclass(eq=False)
class Placement:
    """One session's place: its endpoint and browser, and how long it waited for them."""

    endpoint: Endpoint
    browser: BrowserHandle
    owns_browser: bool
    waited: float | None  # seconds in the wait queue; None when there was room at once
    loss_reported: bool = False  # a failed call already told the session its endpoint was lost
    #: Resolved when the endpoint is drained with this session on it: a call running there stops.
    lost: asyncio.Future[Loss] = field(default_factory=_new_future)


@dataclass(eq=False)
class Endpoint:
    settings: EndpointSettings
    name: str
    browser: BrowserHandle | None = None  # the shared connection of a remote endpoint
    healthy: bool = False
    last_error: str = "not connected yet"
    placed: set[Placement] = field(default_factory=set)  # sessions on the current connection (or launched here)
    reconnecting: asyncio.Task[None] | None = None
    failed_checks: int = 0  # health checks failed in a row on the current connection

    @property
    def remote(self) -> bool:
        return self.settings.kind != "local"

    def usable(self) -> bool:
        return not self.remote or (self.healthy and self.browser is not None and self.browser.alive)

    def has_room(self) -> bool:
        return len(self.placed) < self.settings.capacity


class Pool:
    def __init__(self, settings: PoolSettings, driver: Driver, *, labels: list[str] | None = None) -> None:
        self.settings = settings
        self.driver = driver
        self.labels = set(labels or [])
        names: set[str] = set()
        self.endpoints: list[Endpoint] = []
        for number, config in enumerate(settings.endpoints, 1):
            name = config.label if config.label not in names else f"{config.label} #{number}"
            names.add(name)
            self.endpoints.append(Endpoint(config, name, healthy=config.kind == "local"))
        self._waiting = 0
        self._changed = asyncio.Event()  # set (and replaced) whenever a place may have become free
        self._stopping = asyncio.Event()
        self._health: asyncio.Task[None] | None = None
        self._disconnecting: set[asyncio.Future[None]] = set()  # old connections of lost endpoints

    # -- life ----------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect every remote endpoint once (with its retries); one that fails is retried by the
        health checks, so a pool starts even while some of its endpoints are down."""
        remote = [e for e in self.endpoints if e.remote]
        results = await asyncio.gather(*(self._connect(e) for e in remote), return_exceptions=True)
        for endpoint, result in zip(remote, results):
            if isinstance(result, BaseException):
                self._mark_lost(endpoint, result)
        if remote and self._health is None:
            self._health = asyncio.create_task(self._check_health(), name="webhand-pool-health")

    async def close(self) -> None:
        """Disconnect from every remote endpoint (never kill it)."""
        self._stopping.set()
        tasks = [t for t in [self._health, *(e.reconnecting for e in self.endpoints)] if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, *self._disconnecting, return_exceptions=True)
        for endpoint in self.endpoints:
            browser, endpoint.browser = endpoint.browser, None
            endpoint.healthy = not endpoint.remote
            if browser is not None:
                await browser.close()  # pid is None for a remote browser: this only disconnects

    # -- placing sessions ----------------------------------------------------------------------
    async def place(self) -> Placement:
        """A place for a new session: wait in the bounded queue when every endpoint is full."""
        candidates = [e for e in self.endpoints if self.labels <= set(e.settings.labels)]
        if not candidates:
            raise ConfigError(f"No pool endpoint carries the labels {sorted(self.labels)}.",
                              "Add them to an endpoint's labels, or change pool_labels.")
        started = time.monotonic()
        waited: float | None = None
        endpoint = self._choose(candidates)
        if endpoint is None:
            if self._waiting >= self.settings.queue_size or self.settings.queue_timeout == 0:
                raise self._no_place(candidates, waited=None)
            self._waiting += 1
            try:
                deadline = started + self.settings.queue_timeout
                while (endpoint := self._choose(candidates)) is None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise self._no_place(candidates, waited=time.monotonic() - started)
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), left)
            finally:
                self._waiting -= 1
            waited = time.monotonic() - started
        placement = Placement(endpoint, endpoint.browser, False, waited)  # type: ignore[arg-type]
        endpoint.placed.add(placement)  # taken before any await: no other session can take this place
        if not endpoint.remote:
            try:
                placement.browser = await self.driver.launch()
                placement.owns_browser = True
            except BaseException:
                self.release(placement)
                raise
        return placement

    def release(self, placement: Placement) -> None:
        """The session left (closed, or found dead): its place is free."""
        if placement in placement.endpoint.placed:
            placement.endpoint.placed.discard(placement)
            self._notify()

    def _choose(self, candidates: list[Endpoint]) -> Endpoint | None:
        for endpoint in candidates:
            if endpoint.remote and endpoint.healthy and not endpoint.usable():
                self._mark_lost(endpoint, BrowserLaunchFailed(DROPPED))
        open_ = [e for e in candidates if e.usable() and e.has_room()]
        if not open_:
            return None
        return min(open_, key=lambda e: (len(e.placed) / e.settings.capacity, len(e.placed)))

    def _no_place(self, candidates: list[Endpoint], waited: float | None) -> WebhandError:
        up = [e for e in candidates if e.usable()]
        took = f" after waiting {waited:.1f} s" if waited is not None else ""
        if not up:
            down = "; ".join(f"{e.name}: {e.last_error.rstrip('.')}" for e in candidates)
            if all(e.settings.kind == "extension" for e in candidates):
                return BrowserLaunchFailed(f"The Chrome you run is not connected{took}: {down}.",
                                           "In Chrome, check that webhand's extension is loaded and paired (its popup "
                                           "says so), and share a tab; webhand picks it up on its own within seconds.")
            return BrowserLaunchFailed(f"No browser endpoint is reachable{took}: {down}.",
                                       "Check that the endpoints run and that their URLs and headers are right "
                                       "(`webhand doctor` checks each); webhand reconnects to them on its own.")
        places = sum(e.settings.capacity for e in up)
        if waited is None:
            why = (f"and {self._waiting} new sessions already wait (queue_size {self.settings.queue_size})"
                   if self.settings.queue_size else "and there is no wait queue (queue_size 0)")
            return PoolFull(f"The browser pool is full: all {places} places on {len(up)} reachable endpoints are "
                            f"taken, {why}.", "Close a session (browser_close) and try again, or add pool capacity.")
        return PoolFull(f"The browser pool is full: no place of {places} on {len(up)} reachable endpoints became "
                        f"free after waiting {waited:.1f} s (queue_timeout {self.settings.queue_timeout:g} s).",
                        "Try again later, close a session (browser_close), or add pool capacity.")

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # -- connections and health ----------------------------------------------------------------
    async def _connect(self, endpoint: Endpoint) -> None:
        """One connection, with the endpoint's timeout and retry policy."""
        config = endpoint.settings
        assert config.url is not None or config.kind == "extension"
        headers = expand_headers(config.headers, endpoint.name)
        for attempt in range(config.retries + 1):
            try:
                browser = await self.driver.connect(config.url or "", kind=config.kind, headers=headers,
                                                    timeout=config.timeout)
                # Connecting can succeed where nothing answers (a Playwright server whose browser is
                # frozen): the endpoint takes sessions only once its browser answers a round trip.
                if not await answers_within(browser.ping(config.timeout), config.timeout):
                    self._disconnect(browser, lost=True)
                    raise BrowserLaunchFailed(f"{endpoint.name}: connected, but the browser did not answer within "
                                              f"{config.timeout:g} s")
                break
            except BrowserLaunchFailed as error:
                endpoint.last_error = error.message
                if attempt == config.retries:
                    raise
            # No event tells when a down endpoint is back: wait the configured delay (or for shutdown).
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), config.retry_delay)
            if self._stopping.is_set():
                raise BrowserLaunchFailed(f"{endpoint.name}: webhand is shutting down")
        endpoint.browser, endpoint.healthy, endpoint.last_error, endpoint.failed_checks = browser, True, "", 0
        browser.on_disconnected(lambda: self._mark_lost(endpoint, BrowserLaunchFailed(DROPPED), browser))
        log.info("pool endpoint %s connected", endpoint.name)
        self._notify()

    def _mark_lost(self, endpoint: Endpoint, error: BaseException, browser: BrowserHandle | None = None) -> None:
        """Drain ``endpoint``: no new sessions; the ones on it learn of the loss on their next call
        (their browser is no longer alive) and are placed afresh. Reconnect in the background."""
        if browser is not None and browser is not endpoint.browser:
            return  # an older connection, already replaced
        if endpoint.healthy:
            log.warning("pool endpoint %s lost (%s); %d session(s) on it will start afresh", endpoint.name,
                        error, len(endpoint.placed))
        endpoint.healthy = False
        endpoint.last_error = getattr(error, "message", None) or str(error) or type(error).__name__
        loss = Loss(endpoint.last_error, silent=endpoint.last_error != DROPPED)
        for placement in endpoint.placed:
            if not placement.lost.done():
                placement.lost.set_result(loss)
        endpoint.placed.clear()
        old, endpoint.browser = endpoint.browser, None
        if old is not None:
            self._disconnect(old, lost=True)
        if not self._stopping.is_set() and (endpoint.reconnecting is None or endpoint.reconnecting.done()):
            endpoint.reconnecting = asyncio.create_task(self._reconnect(endpoint), name="webhand-pool-reconnect")
        self._notify()

    def _disconnect(self, browser: BrowserHandle, *, lost: bool) -> None:
        """Close a connection in the background (only disconnects: a remote browser is never killed);
        ``close`` waits for what is still under way. A ``lost`` one is dropped without asking its
        browser anything: it may never answer."""
        closing = asyncio.ensure_future(browser.abandon() if lost else browser.close())
        self._disconnecting.add(closing)
        closing.add_done_callback(self._disconnecting.discard)

    async def check(self, placement: Placement, timeout: float) -> bool:
        """A call on ``placement`` got no answer: whether its endpoint's browser still answers a
        round trip within ``timeout`` (capped at the endpoint's own). When it does not, the
        endpoint is drained at once, without waiting for the health checks."""
        endpoint, browser = placement.endpoint, placement.browser
        if placement.lost.done():
            return False
        if not endpoint.remote:
            return True
        cap = min(timeout, endpoint.settings.timeout)
        if await answers_within(browser.ping(cap), cap):
            return True
        if browser is endpoint.browser and endpoint.healthy:
            self._mark_lost(endpoint, BrowserLaunchFailed(f"its browser did not answer within {cap:g} s while a "
                                                          "call waited for it"), browser)
        return False

    async def _reconnect(self, endpoint: Endpoint) -> None:
        while not self._stopping.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.settings.health_interval)
            if self._stopping.is_set():
                return
            try:
                await self._connect(endpoint)
                return
            except WebhandError as error:
                endpoint.last_error = error.message

    async def _check_health(self) -> None:
        """Every ``health_interval``: a round trip to each healthy remote endpoint, all at once. One
        that fails two checks in a row is drained like a dropped one: draining loses every session
        on it, so one slow answer on a loaded machine must not be enough."""
        while not self._stopping.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.settings.health_interval)
            checked = [(e, e.browser) for e in self.endpoints if e.remote and e.healthy and e.browser is not None]
            # Each check ends at its endpoint's timeout whatever the socket does (engine/capped.py).
            answers = await asyncio.gather(*(answers_within(browser.ping(e.settings.timeout), e.settings.timeout)
                                             for e, browser in checked))
            for (endpoint, browser), answered in zip(checked, answers):
                endpoint.failed_checks = 0 if answered is True else endpoint.failed_checks + 1
                if endpoint.failed_checks >= _FAILED_CHECKS_TO_DRAIN:
                    self._mark_lost(endpoint, BrowserLaunchFailed("it did not answer two health checks in a row"),
                                    browser)

    @property
    def waiting(self) -> int:
        """New sessions waiting in the queue for a place."""
        return self._waiting

    def status(self) -> list[dict[str, object]]:
        return [{"endpoint": e.name, "kind": e.settings.kind, "healthy": e.usable(), "sessions": len(e.placed),
                 "capacity": e.settings.capacity, "labels": e.settings.labels,
                 **({"error": e.last_error} if not e.usable() else {})} for e in self.endpoints]
