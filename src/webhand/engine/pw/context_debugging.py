"""What a context does for the debugging tools: console messages from every source, network
emulation and mocks (routes). Requests in full: ``PlaywrightContext.requests_in_full``.

A mixin of ``PlaywrightContext`` (context.py); it expects ``self.context``, ``self.events``,
``self.policy`` and ``self.tabs``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from playwright.async_api import BrowserContext as PWContext
from playwright.async_api import Error as PWError
from playwright.async_api import Route

from webhand.engine.driver import ConsoleEntry, NetworkConditions, RouteRule, TabEvents
from webhand.engine.pw.errors import translated
from webhand.engine.pw.shared_workers import SharedWorkerConsole

if TYPE_CHECKING:
    from webhand.engine.pw.policy import OriginPolicy
    from webhand.engine.pw.tab import PlaywrightTab


class ContextDebugging:
    context: PWContext
    events: TabEvents
    policy: "OriginPolicy | None"
    tabs: "list[PlaywrightTab]"

    def _start_debugging(self) -> None:
        self.network_conditions = NetworkConditions()
        self.routes: list[RouteRule] = []
        self._route_handlers: dict[str, Any] = {}
        self._shared_workers: SharedWorkerConsole | None = None
        # Heard here rather than per page: the context knows a service worker's message (no page)
        # and a dedicated worker's (a page and a worker) from the page's own.
        self.context.on("console", self._on_console)

    def _on_console(self, message: Any) -> None:
        if not self.events.console:
            return
        location = message.location or {}
        where = f"{location.get('url', '')}:{location.get('lineNumber', 0) + 1}" if location.get("url") else ""
        tab = next((t for t in self.tabs if message.page is not None and t.page is message.page), None)
        source = ("worker" if message.page is not None else "sw") if message.worker is not None else ""
        entry = ConsoleEntry(message.type, message.text, where, tab.index if tab else -1, source)
        if tab is not None and not source:
            tab.devtools.tag_console(entry, message.timestamp)  # an iframe's? CDP tells (devtools.py)
        self.events.console(entry)

    async def _hear_shared_workers(self, tab: "PlaywrightTab") -> None:
        """Start hearing the context's shared workers, once; the context's CDP id comes from a tab."""
        try:
            info = await (await tab._session()).send("Target.getTargetInfo")
        except PWError:
            return
        if self._shared_workers is None:
            self._shared_workers = SharedWorkerConsole(self.context, info["targetInfo"]["browserContextId"],
                                                       lambda entry: self.events.console and self.events.console(entry))
            await self._shared_workers.start()

    # network emulation -----------------------------------------------------------------------
    async def set_network_conditions(self, conditions: NetworkConditions) -> None:
        async with translated("Changing the network conditions"):
            # Playwright's offline switch also reaches the service workers and the tabs opened later;
            # latency and throughput are set on each tab's own session after it (the last word counts).
            await self.context.set_offline(conditions.offline)
            self.network_conditions = conditions
            await asyncio.gather(*(tab.devtools.emulate(conditions) for tab in self.tabs if not tab.closed))

    # mocks -----------------------------------------------------------------------------------
    async def add_route(self, rule: RouteRule) -> None:
        if rule.pattern in self._route_handlers:
            await self.remove_routes(rule.pattern)

        async def answer(route: Route) -> None:
            try:
                if self.policy is not None and self.policy.active and self.policy.check(route.request.url):
                    await route.fallback()  # the policy's own route refuses it and logs why: a mock never opens a way
                    return
                rule.hits += 1
                if rule.action == "block":
                    await route.abort("blockedbyclient")
                else:
                    await route.fulfill(status=rule.status, headers=rule.headers, body=rule.body)
            except PWError:
                pass  # the page or the request went away meanwhile

        async with translated(f"Adding the route {rule.pattern}"):
            await self.context.route(rule.pattern, answer)
        self._route_handlers[rule.pattern] = answer
        self.routes.append(rule)

    async def remove_routes(self, pattern: str | None) -> list[RouteRule]:
        removed = [r for r in self.routes if pattern is None or r.pattern == pattern]
        for rule in removed:
            handler = self._route_handlers.pop(rule.pattern)
            async with translated(f"Removing the route {rule.pattern}"):
                await self.context.unroute(rule.pattern, handler)
            self.routes.remove(rule)
        return removed
