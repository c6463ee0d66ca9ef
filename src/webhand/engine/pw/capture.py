"""The tab's ``capture`` (engine/driver.py's ``Capture``): the page rendered to a PNG or a PDF by
Playwright's ``page.screenshot`` and ``page.pdf``; its errors told in webhand's words (errors.py)."""

from __future__ import annotations

import asyncio

from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.pw.errors import translate, translated
from webhand.errors import ActionTimeout


class PageCapture:
    def __init__(self, page: PWPage) -> None:
        self._page = page

    async def screenshot(self, *, full_page: bool, timeout: float) -> bytes:
        async with translated("Taking a screenshot", timeout):
            return await self._page.screenshot(full_page=full_page, type="png", timeout=timeout * 1000)

    async def pdf(self, *, timeout: float) -> bytes:
        try:
            return await asyncio.wait_for(self._page.pdf(print_background=True), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"Printing the page to PDF did not finish within {timeout:g} s.",
                                "Retry with a larger timeout, or take a screenshot instead.") from None
        except PWError as error:
            raise translate(error, "Printing the page to PDF", timeout) from None
