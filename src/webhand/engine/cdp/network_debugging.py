"""The network part of the debugging tools on raw CDP, for a whole context: requests in full
(browser_network_request, from each tab's ``CdpNetworkLog``: ``CdpContext.requests_in_full``), network emulation
(browser_network_conditions) and mocks (browser_route / browser_unroute).

Both emulation and routes hold for every session of the context: each page, out-of-process frame
and worker session gets them as it is set up (``session_setup``, before it runs), and the sessions
already running get them when they change. While a route is set the HTTP cache is off, as with
Playwright: an answer from the cache would never be paused, so the route would not see it.

A mixin of ``CdpContext`` (context.py); it expects ``self.connection``, ``self.policy`` and ``self.tabs``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded
from webhand.engine.cdp.interception import Interception
from webhand.engine.driver import NetworkConditions, RouteRule
from webhand.engine.network import emulation_params

if TYPE_CHECKING:
    from webhand.engine.cdp.policy import CdpPolicy
    from webhand.engine.cdp.tab import CdpTab

#: Longest a change of emulation or routes waits for the browser's sessions to take it.
_APPLY_SECONDS = 30.0


class ContextNetworkMixin:
    connection: CdpConnection
    policy: CdpPolicy | None
    tabs: list[CdpTab]

    def _start_network(self) -> None:
        self.network_conditions = NetworkConditions()
        self.interception = Interception(self.connection, self.policy, self)
        self._workers: set[str] = set()  # worker sessions: pages and frames are the tabs' own

    @property
    def routes(self) -> list[RouteRule]:
        return self.interception.routes

    def session_setup(self, session_id: str, *, worker: bool = False, routed: bool = True) -> list[Awaitable[Any]]:
        """Commands that give a session being set up (paused) the context's interception and network
        emulation; sent in order with the session's others, before it is let run. A worker's emulation
        may fail (not every worker has every domain): that never stops it from running. ``routed``
        False (a service worker): the routes do not see its requests, as with Playwright."""
        others: list[Awaitable[Any]] = []
        if self.network_conditions != NetworkConditions():
            others.append(self.connection.send.Network.emulateNetworkConditions(
                params=emulation_params(self.network_conditions), session_id=session_id))  # type: ignore[arg-type]
        if self.routes and not worker:
            others.append(self.connection.send.Network.setCacheDisabled(params={"cacheDisabled": True},
                                                                        session_id=session_id))
        if worker:
            self._workers.add(session_id)
            others = [_may_fail(command) for command in [*self._worker_network(session_id, bool(others)), *others]]
        # Interception first, and never optional: a worker whose Fetch fails is not let run.
        return self.interception.setup(session_id, routed=routed) + others

    def _worker_network(self, session_id: str, needed: bool) -> list[Awaitable[Any]]:
        """A worker's emulation holds only once its Network domain is on; no body is kept for it
        (nothing reads a worker's bodies). Off until then: its events are not needed."""
        if not needed or session_id not in self._workers:
            return []
        return [self.connection.send.Network.enable(params={"maxTotalBufferSize": 0, "maxResourceBufferSize": 0,
                                                            "maxPostDataSize": 0}, session_id=session_id)]

    def _sessions(self, *, tabs_only: bool = False) -> list[str]:
        # A tab's sessions include its dedicated workers' (workers.py); the context's own workers are here.
        pages = [session for tab in self.tabs if not tab.closed for session in tab._sessions]
        return pages if tabs_only else list(dict.fromkeys(pages + sorted(self._workers)))

    async def _each_session(self, doing: str, command: Any, *, tabs_only: bool = False) -> None:
        """``command(session_id)`` on every session of the context; a session gone meanwhile is skipped
        (and a worker's forgotten)."""
        async def one(session: str) -> None:
            if not await _sent(command(session)):
                self._workers.discard(session)

        async with guarded(doing, _APPLY_SECONDS):
            await asyncio.gather(*(one(session) for session in self._sessions(tabs_only=tabs_only)))

    # network emulation -------------------------------------------------------------------------
    async def set_network_conditions(self, conditions: NetworkConditions) -> None:
        self.network_conditions = conditions  # first: a session set up meanwhile takes it from here
        params = emulation_params(conditions)

        async def emulate(session: str) -> None:
            for command in self._worker_network(session, True):
                await command
            await self.connection.send.Network.emulateNetworkConditions(params=params, session_id=session)  # type: ignore[arg-type]

        await self._each_session("Changing the network conditions", emulate)

    # mocks -------------------------------------------------------------------------------------
    async def add_route(self, rule: RouteRule) -> None:
        first = not self.routes
        self.interception.add(rule)
        if first:
            await self._routes_changed(f"Adding the route {rule.pattern}")

    async def remove_routes(self, pattern: str | None) -> list[RouteRule]:
        removed = [r for r in self.routes if pattern is None or r.pattern == pattern]
        self.interception.routes = [r for r in self.routes if r not in removed]
        if removed and not self.routes:
            await self._routes_changed("Removing the routes")
        return removed

    async def _routes_changed(self, doing: str) -> None:
        """The first route came or the last went: the sessions' interception and HTTP cache follow."""
        send, patterns = self.connection.send, self.interception.patterns
        await self._each_session(doing, lambda session: send.Network.setCacheDisabled(
            params={"cacheDisabled": bool(self.routes)}, session_id=session), tabs_only=True)
        await self._each_session(doing, lambda session: send.Fetch.disable(session_id=session)
                                 if patterns(session) is None
                                 else send.Fetch.enable(params={"patterns": patterns(session)}, session_id=session))  # type: ignore[typeddict-item]


async def _sent(command: Awaitable[Any]) -> bool:
    """Whether the browser took ``command``; False when its session is gone."""
    try:
        await command
        return True
    except PROTOCOL_ERRORS:
        return False


async def _may_fail(command: Awaitable[Any]) -> None:
    await _sent(command)
