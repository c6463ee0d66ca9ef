"""The tab's ``history`` (engine/driver.py's ``History``) over raw CDP: back, forward and reload.

Back and forward pick the neighbouring entry of the tab's history list (``Page.getNavigationHistory``,
then ``Page.navigateToHistoryEntry``); reload is ``Page.reload``. Then it waits for the main frame to
commit (the tab's request tracker counts commits), then for its document to be complete: a page
restored from the back/forward cache fires no new "load" (``settle.document_loaded``).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from webhand.engine import settle
from webhand.engine.cdp.connection import CdpConnection, guarded
from webhand.engine.driver import NavigationResult
from webhand.engine.settle import PageGone
from webhand.errors import ActionTimeout


class HistoryTab(settle.PageProbe, Protocol):
    """What going through history needs of its tab (tab.py's ``CdpTab``): where it is and its title,
    the commits its request tracker counts, and the HTTP status of the document that loaded."""

    tracker: settle.RequestTracker

    @property
    def url(self) -> str: ...

    async def title(self) -> str: ...

    def main_document_status(self) -> int | None:
        """The HTTP status of the main frame's current document, when its response was seen (taken)."""
        ...


class CdpHistory:
    def __init__(self, connection: CdpConnection, session_id: str, tab: HistoryTab) -> None:
        self._connection = connection
        self._session_id = session_id
        self._tab = tab

    async def go_back(self, *, timeout: float) -> NavigationResult | None:
        return await self._step("back", timeout)

    async def go_forward(self, *, timeout: float) -> NavigationResult | None:
        return await self._step("forward", timeout)

    async def reload(self, *, timeout: float) -> NavigationResult:
        result = await self._step("reload", timeout)
        assert result is not None
        return result

    async def _step(self, step: str, timeout: float) -> NavigationResult | None:
        """Back, forward (by the history list) or reload; None when there is no entry that way.
        Waits for the main frame to commit, then for its document to be complete (a page from the
        back/forward cache fires no new "load")."""
        tab, tracker = self._tab, self._tab.tracker
        url = tab.url
        commits = tracker.commits
        doing = f"Navigation to going {step} from {url}"
        async with guarded(doing, timeout):
            if step == "reload":
                await self._connection.send.Page.reload(session_id=self._session_id)
            else:
                history = await self._connection.send.Page.getNavigationHistory(session_id=self._session_id)
                index = history["currentIndex"] + (-1 if step == "back" else 1)
                if not 0 <= index < len(history["entries"]):
                    return None
                await self._connection.send.Page.navigateToHistoryEntry(params={"entryId": history["entries"][index]["id"]},
                                                                        session_id=self._session_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        # An entry of the same document (a hash route, an app's pushState) commits nothing: its URL moves.
        if not await tracker.until(lambda: tracker.commits > commits or tab.url != url, timeout):
            raise ActionTimeout(f"{doing} did not finish within {timeout:g} s.",
                                "Retry with wait_until='domcontentloaded' or a larger timeout; browser_snapshot shows what loaded.")
        if tracker.commits == commits:
            return NavigationResult(tab.url, None, await tab.title())
        try:
            await settle.document_loaded(tab, max(0.001, deadline - loop.time()))
        except (settle.LoadTimeout, PageGone):
            raise ActionTimeout(f"{doing} did not finish within {timeout:g} s.",
                                "Retry with a larger timeout; browser_snapshot shows what loaded.") from None
        return NavigationResult(tab.url, tab.main_document_status(), await tab.title())
