"""The tab's ``history`` (engine/driver.py's ``History``) on Firefox: back, forward and reload.

Back and forward are ``browsingContext.traverseHistory``, which Firefox answers before the entry's
document commits: the navigation's start is waited for (a tab event), then, since a page restored
from the back/forward cache sends ``navigationStarted`` and nothing after it (Firefox 153), for the
document at the new URL to draw a frame, then for its load. Reload is ``browsingContext.reload``,
which waits for the load itself.

The tab (tab.py's ``BidiTab``) hears the navigation events, so it is what tells where it is: its
``HistoryTab`` side.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from webhand.engine import settle
from webhand.engine.bidi.connection import BidiConnection, guarded
from webhand.engine.driver import NavigationResult
from webhand.errors import ActionTimeout, WebhandError


class HistoryTab(Protocol):
    """What going through history needs of its tab: the navigations it has seen start (and the
    last one's URL), the URL it is at, its title and load, a script run in the page, the HTTP
    status of a navigation's document."""

    connection: BidiConnection
    context_id: str
    tracker: settle.RequestTracker

    @property
    def url(self) -> str: ...

    @property
    def navigations_started(self) -> int: ...

    @property
    def started_url(self) -> str:
        """The URL of the last navigation that started."""
        ...

    def arrived(self, url: str) -> None:
        """The tab is at ``url`` now (a history entry's document drew a frame there)."""
        ...

    def document_status(self, navigation: str) -> int | None:
        """The HTTP status of ``navigation``'s document, when its response was seen (taken)."""
        ...

    async def title(self) -> str: ...

    async def wait_for_load(self, *, timeout: float) -> None: ...

    async def call(self, function: str, args: list[Any], *, doing: str, timeout: float, this: Any = None,
                   sandbox: bool = True, context: str | None = None) -> Any: ...


class BidiHistory:
    def __init__(self, tab: HistoryTab) -> None:
        self._tab = tab

    async def go_back(self, *, timeout: float) -> NavigationResult | None:
        return await self._traverse(-1, timeout)

    async def go_forward(self, *, timeout: float) -> NavigationResult | None:
        return await self._traverse(1, timeout)

    async def reload(self, *, timeout: float) -> NavigationResult:
        tab = self._tab
        async with guarded("Reloading", timeout):
            result = await tab.connection.send("browsingContext.reload", {"context": tab.context_id, "wait": "complete"})
        status = tab.document_status(result.get("navigation") or "")
        return NavigationResult(url=result.get("url", tab.url), status=status, title=await tab.title())

    async def _traverse(self, delta: int, timeout: float) -> NavigationResult | None:
        """Back or forward; None when the history has no entry that way."""
        tab = self._tab
        started, url_before = tab.navigations_started, tab.url
        try:
            async with guarded("Going through history", timeout):
                await tab.connection.send("browsingContext.traverseHistory", {"context": tab.context_id, "delta": delta})
        except WebhandError as error:
            if "no such history entry" in str(error):
                return None
            raise
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        going = f"Going {'back' if delta < 0 else 'forward'}"
        if not await tab.tracker.until(lambda: tab.navigations_started > started or tab.url != url_before, timeout):
            raise ActionTimeout(f"{going} did not start within {timeout:g} s.", "Take a browser_snapshot to see the page.")
        if tab.navigations_started == started:
            # An entry of the same document (a hash route, an app's pushState): it moved, nothing loads.
            return NavigationResult(url=tab.url, status=None, title=await tab.title())
        while True:
            try:
                href = await tab.call("() => new Promise(r => requestAnimationFrame(() => r(location.href)))", [],
                                      doing=going, timeout=max(0.1, deadline - loop.time()), sandbox=False)
            except ActionTimeout:
                raise
            except WebhandError:
                href = None  # the old document went away mid-call
            if href == tab.started_url:
                break
            if loop.time() >= deadline:
                raise ActionTimeout(f"{going} did not finish within {timeout:g} s.", "Take a browser_snapshot to see the page.")
        tab.arrived(tab.started_url)
        await tab.wait_for_load(timeout=max(0.1, deadline - loop.time()))
        return NavigationResult(url=tab.url, status=None, title=await tab.title())
