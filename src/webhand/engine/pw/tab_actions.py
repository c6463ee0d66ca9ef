"""What a tab does for the action tools: history, keys, scrolling, waiting, and the origin policy.

A mixin of ``PlaywrightTab`` (tab.py), kept apart so that each file stays short. It expects
``self.page``, ``self._policy`` (an ``OriginPolicy`` or None) and ``self._tracker`` (the tab's
``RequestTracker``), which ``PlaywrightTab.__init__`` sets up with ``_start_tracking``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.driver import NavigationResult, SettleCaps, WaitCondition
from webhand.engine.page_scripts import SCROLL
from webhand.engine.policy import before_navigation, navigation_refusal
from webhand.engine.pw import waits
from webhand.engine.pw.errors import navigation_error, translate, translated
from webhand.engine.pw.settle import PlaywrightActionWatch, RequestTracker, document_loaded
from webhand.errors import ActionTimeout, InvalidArgument, PolicyRefused

if TYPE_CHECKING:
    from webhand.engine.pw.policy import OriginPolicy


class TabActions:
    page: PWPage
    _policy: "OriginPolicy | None"
    _tracker: RequestTracker
    _redirect_guard: "asyncio.Future[None] | None"
    _refusals_before = 0  # the refusal log's count when the current navigation began

    def _start_tracking(self, policy: "OriginPolicy | None") -> None:
        self._policy = policy
        self._tracker = RequestTracker(self.page, policy, self._session)  # type: ignore[attr-defined]  # PlaywrightTab's
        self._redirect_guard = asyncio.ensure_future(policy.guard(self.page)) if policy is not None else None

    # policy ----------------------------------------------------------------------------------
    async def _before_navigation(self, url: str) -> None:
        self._refusals_before = before_navigation(self._policy, url, self._tracker.refusals)
        if self._redirect_guard is not None:
            await self._redirect_guard  # installed before this tab's first navigation can redirect

    def _refused(self, url: str, error: Exception) -> PolicyRefused | None:
        """The policy refusal behind a failed navigation (a refused redirect), if that is what it was."""
        return navigation_refusal(self._policy, url, str(error), self._tracker.refusals, self._refusals_before)

    # history ---------------------------------------------------------------------------------
    async def _history(self, step: str, timeout: float) -> NavigationResult | None:
        """Back, forward (by the history list over CDP) or reload; None when there is no entry that way.

        Playwright's go_back waits for a fresh "load", which a page restored from the
        back/forward cache never fires; so we wait for the main frame to commit, then for the
        document to be complete (see ``document_loaded``).
        """
        url, ms, status = self.page.url, timeout * 1000, None
        try:
            if step == "reload":
                response = await self.page.reload(wait_until="commit", timeout=ms)
                status = response.status if response else None
            else:
                session = await self._session()  # type: ignore[attr-defined]
                history = await session.send("Page.getNavigationHistory")
                index = history["currentIndex"] + (-1 if step == "back" else 1)
                if not 0 <= index < len(history["entries"]):
                    return None
                async with self.page.expect_event("framenavigated", lambda frame: frame == self.page.main_frame, timeout=ms):
                    await session.send("Page.navigateToHistoryEntry", {"entryId": history["entries"][index]["id"]})
            await document_loaded(self.page, ms)
        except PWError as error:
            raise self._refused(url, error) or navigation_error(error, f"going {step} from {url}", timeout) from None
        title = ""
        try:
            title = await self.page.title()
        except PWError:
            pass
        return NavigationResult(self.page.url, status, title)

    async def go_back(self, *, timeout: float) -> NavigationResult | None:
        return await self._history("back", timeout)

    async def go_forward(self, *, timeout: float) -> NavigationResult | None:
        return await self._history("forward", timeout)

    async def reload(self, *, timeout: float) -> NavigationResult:
        result = await self._history("reload", timeout)
        assert result is not None
        return result

    # keys and scrolling ----------------------------------------------------------------------
    async def press(self, key: str, *, timeout: float) -> None:
        try:
            await asyncio.wait_for(self.page.keyboard.press(key), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"Pressing {key} did not finish within {timeout:g} s.",
                                "The page may be busy: call browser_snapshot.") from None
        except PWError as error:
            raise unknown_key(key, error) or translate(error, f"Pressing {key}", timeout) from None

    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str:
        async with translated("Scrolling the page", timeout):
            left, top, width, height = await asyncio.wait_for(self.page.evaluate(SCROLL, [x, y]), timeout)
        return f"The page is scrolled to x={left}, y={top} (page size {width}x{height})."

    # waiting ---------------------------------------------------------------------------------
    def watch(self, caps: SettleCaps) -> PlaywrightActionWatch:
        return PlaywrightActionWatch(self._tracker, caps)

    async def wait_for(self, condition: WaitCondition, *, timeout: float) -> str:
        return await waits.wait_for(self.page, self._tracker, condition, timeout)


def unknown_key(key: str, error: Exception) -> InvalidArgument | None:
    if "unknown key" in str(error).lower():
        return InvalidArgument(f"{key!r} is not a key name.",
                               "Use names like Enter, Tab, Escape, ArrowDown, a, or chords like Control+A.")
    return None

