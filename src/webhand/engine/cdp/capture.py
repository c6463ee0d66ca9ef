"""The tab's ``capture`` (engine/driver.py's ``Capture``): the page rendered to a PNG or a PDF.

Both are one command on the page's CDP session (``Page.captureScreenshot``, ``Page.printToPDF``);
a full-page screenshot first asks the page's layout size (``Page.getLayoutMetrics``) and captures
beyond the viewport.
"""

from __future__ import annotations

import base64
from typing import Any

from webhand.engine.cdp.connection import CdpConnection, guarded
from webhand.errors import ActionTimeout


class PageCapture:
    def __init__(self, connection: CdpConnection, session_id: str) -> None:
        self._connection = connection
        self._session_id = session_id

    async def screenshot(self, *, full_page: bool, timeout: float) -> bytes:
        async with guarded("Taking a screenshot", timeout):
            params: dict[str, Any] = {"format": "png"}
            if full_page:
                metrics = await self._connection.send.Page.getLayoutMetrics(session_id=self._session_id)
                size = metrics["cssContentSize"]
                params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": size["width"],
                                                                "height": size["height"], "scale": 1})
            shot = await self._connection.send.Page.captureScreenshot(params=params, session_id=self._session_id)  # type: ignore[arg-type]
        return base64.b64decode(shot["data"])

    async def pdf(self, *, timeout: float) -> bytes:
        try:
            async with guarded("Printing the page to PDF", timeout):
                printed = await self._connection.send.Page.printToPDF(params={"printBackground": True},
                                                                      session_id=self._session_id)
        except ActionTimeout:
            raise ActionTimeout(f"Printing the page to PDF did not finish within {timeout:g} s.",
                                "Retry with a larger timeout, or take a screenshot instead.") from None
        return base64.b64decode(printed["data"])
