"""The tab's ``history`` (engine/driver.py's ``History``) through Playwright: back, forward and reload.

Playwright's ``go_back`` waits for a fresh "load", which a page restored from the back/forward
cache never fires; so back and forward pick the neighbouring entry of the history list over the
tab's CDP session, wait for the main frame to commit, then for the document to be complete
(settle.py's ``document_loaded``). Reload is Playwright's, to the commit, then the same wait.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.driver import NavigationResult
from webhand.engine.pw.errors import navigation_error
from webhand.engine.pw.settle import document_loaded
from webhand.errors import PolicyRefused


class PlaywrightHistory:
    def __init__(self, page: PWPage, session: Callable[[], Awaitable[CDPSession]],
                 refused: Callable[[str, Exception], PolicyRefused | None]) -> None:
        self._page = page
        self._session = session  # the tab's CDP session
        self._refused = refused  # the origin policy's refusal behind a failed navigation (the tab's)

    async def go_back(self, *, timeout: float) -> NavigationResult | None:
        return await self._step("back", timeout)

    async def go_forward(self, *, timeout: float) -> NavigationResult | None:
        return await self._step("forward", timeout)

    async def reload(self, *, timeout: float) -> NavigationResult:
        result = await self._step("reload", timeout)
        assert result is not None
        return result

    async def _step(self, step: str, timeout: float) -> NavigationResult | None:
        """Back, forward (by the history list over CDP) or reload; None when there is no entry that way."""
        page = self._page
        url, ms, status = page.url, timeout * 1000, None
        try:
            if step == "reload":
                response = await page.reload(wait_until="commit", timeout=ms)
                status = response.status if response else None
            else:
                session = await self._session()
                history = await session.send("Page.getNavigationHistory")
                index = history["currentIndex"] + (-1 if step == "back" else 1)
                if not 0 <= index < len(history["entries"]):
                    return None
                async with page.expect_event("framenavigated", lambda frame: frame == page.main_frame, timeout=ms):
                    await session.send("Page.navigateToHistoryEntry", {"entryId": history["entries"][index]["id"]})
            await document_loaded(page, ms)
        except PWError as error:
            raise self._refused(url, error) or navigation_error(error, f"going {step} from {url}", timeout) from None
        title = ""
        try:
            title = await page.title()
        except PWError:
            pass
        return NavigationResult(page.url, status, title)
