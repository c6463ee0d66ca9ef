"""One session's browser context, and the tabs in it."""

from __future__ import annotations

from playwright.async_api import BrowserContext as PWContext
from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.driver import TabEvents
from webhand.engine.pw.errors import translated
from webhand.engine.pw.policy import OriginPolicy
from webhand.engine.pw.tab import PlaywrightTab


class PlaywrightContext:
    def __init__(self, context: PWContext, events: TabEvents, policy: OriginPolicy | None = None) -> None:
        self.context = context
        self.events = events
        self.policy = policy
        self.tabs: list[PlaywrightTab] = []
        self._opened = 0
        context.on("page", self._adopt)

    def _adopt(self, page: PWPage) -> PlaywrightTab:
        """Every page of the context becomes a tab, including those the page opens itself."""
        for tab in self.tabs:
            if tab.page is page:
                return tab
        tab = PlaywrightTab(page, self._opened, self.events, self.policy)
        self._opened += 1
        self.tabs.append(tab)
        page.on("close", lambda _: self.tabs.remove(tab) if tab in self.tabs else None)
        return tab

    async def new_tab(self) -> PlaywrightTab:
        async with translated("Opening a tab"):
            page = await self.context.new_page()
        return self._adopt(page)

    async def close(self) -> None:
        try:
            await self.context.close()
        except PWError:
            pass
