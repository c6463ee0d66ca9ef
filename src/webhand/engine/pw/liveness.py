"""Is a tab's page still alive: its crash, a hang test, stopping a stalled navigation, and ending
the page from the browser side.

The tab owns one (``PlaywrightTab.liveness``). The session decides what to do with a crashed or
hung page (``session/recovery.py``); this is only how to tell and how to end it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.pw.errors import translated
from webhand.engine.pw.settle import PlaywrightRequestTracker
from webhand.engine.settle import answer_or_held_navigation

#: How long ending a tab waits for the browser to confirm that it closed (it goes on in the background).
#: Short: the reply to the call that found the page hung must come within that call's timeout plus
#: one second, and nothing waits on the confirmation (the next call opens a fresh tab either way).
_END_CAP_SECONDS = 0.1


class PageLiveness:
    def __init__(self, page: PWPage, tracker: PlaywrightRequestTracker,
                 session: Callable[[], Awaitable[CDPSession]]) -> None:
        self._page = page
        self._tracker = tracker  # the tab's requests in flight (settle.py)
        self._session = session  # the tab's own CDP session (tab.py)
        self.crashed = False  # the renderer crashed or was killed
        self.ended = False  # end() was called: the tab counts as closed from then on
        page.on("crash", self._on_crash)

    def _on_crash(self, _: Any) -> None:
        self.crashed = True

    async def ping(self) -> str | None:
        """Evaluating ``0`` needs the renderer's main thread, which a script that never ends holds.
        Any answer counts, an error too. While the main frame waits for a server's response, the
        browser holds every message to the page until the navigation commits: that silence says
        nothing about the page, so the navigation's URL is returned instead."""
        tracker = self._tracker
        try:
            answer = asyncio.ensure_future((await self._session()).send("Runtime.evaluate", {"expression": "0"}))
        except PWError:
            return None  # the tab is closing: not hung
        return await answer_or_held_navigation(answer, tracker)

    async def stop_loading(self) -> None:
        """``Page.stopLoading`` is handled by the browser process, so it gets through while the
        browser holds the page's other messages; the held ones then reach the page."""
        async with translated("Stopping the navigation"):
            await (await self._session()).send("Page.stopLoading")

    async def end(self) -> None:
        """Playwright closes a page without ``run_before_unload`` by ``Target.closeTarget`` on the
        browser's own CDP session: handled by the browser process, so it works on a hung page, never
        waits for unload handlers, and Chromium ends the renderer that no tab uses any more. The tab
        counts as closed at once; the browser's confirmation is awaited only briefly."""
        if self._page.is_closed() or self.ended:
            return
        self.ended = True
        closing = asyncio.ensure_future(self._page.close(run_before_unload=False))
        closing.add_done_callback(lambda done: done.cancelled() or done.exception())  # gone either way
        await asyncio.wait({closing}, timeout=_END_CAP_SECONDS)
