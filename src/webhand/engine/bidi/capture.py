"""The tab's ``capture`` (engine/driver.py's ``Capture``) on Firefox: the page rendered to a PNG
(``browsingContext.captureScreenshot``, of the viewport or the whole document) or a PDF
(``browsingContext.print``). The dashboard's live pictures are screen_capture.py's."""

from __future__ import annotations

import base64

from webhand.engine.bidi.connection import BidiConnection, guarded


class BidiCapture:
    def __init__(self, connection: BidiConnection, context_id: str) -> None:
        self._connection = connection
        self._context_id = context_id

    async def screenshot(self, *, full_page: bool, timeout: float) -> bytes:
        async with guarded("Taking a screenshot", timeout):
            shot = await self._connection.send("browsingContext.captureScreenshot", {
                "context": self._context_id, "origin": "document" if full_page else "viewport",
                "format": {"type": "image/png"}})
        return base64.b64decode(shot["data"])

    async def pdf(self, *, timeout: float) -> bytes:
        async with guarded("Printing to PDF", timeout):
            printed = await self._connection.send("browsingContext.print", {"context": self._context_id})
        return base64.b64decode(printed["data"])
