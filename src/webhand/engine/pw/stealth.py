"""``stealth = true`` on Playwright: the disguise (``engine/stealth.py``) as context options and an
init script of the context (which Playwright runs in every page and frame of it)."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Browser as PWBrowser
from playwright.async_api import BrowserContext as PWContext

from webhand.engine.stealth import LANGUAGES, LAUNCH_FLAGS, StealthProfile

__all__ = ["LAUNCH_FLAGS", "PlaywrightStealth"]


class PlaywrightStealth(StealthProfile):
    @classmethod
    async def of(cls, browser: PWBrowser) -> "PlaywrightStealth":
        session = await browser.new_browser_cdp_session()
        try:
            version = await session.send("Browser.getVersion")
        finally:
            await session.detach()
        return cls(version["userAgent"])

    def context_options(self) -> dict[str, Any]:
        """``new_context`` options: the user agent and languages on every request, not only in JavaScript."""
        return {"user_agent": self.user_agent, "locale": LANGUAGES[0], "extra_http_headers": self.headers()}

    async def apply(self, context: PWContext) -> None:
        await self.evasions.apply_stealth_async(context)
