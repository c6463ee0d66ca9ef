"""What the dashboard needs of a tab: thumbnails, a screencast of the viewport, a person's input.

A mixin of ``PlaywrightTab`` (tab.py). The screencast runs on its own CDP session, so its frame
events and acknowledgements never queue behind the agent's calls on the tab's main session.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.driver import InputEvent, ScreencastFrame
from webhand.engine.live_input import input_command
from webhand.engine.pw.errors import translated
from webhand.errors import ActionTimeout

class PlaywrightScreencast:
    def __init__(self, session: CDPSession) -> None:
        self._session = session
        self._stopped = False

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        try:
            await asyncio.wait_for(self._session.send("Page.stopScreencast"), 2)
            await asyncio.wait_for(self._session.detach(), 2)
        except (PWError, asyncio.TimeoutError):
            pass  # the page closed first: nothing is streaming any more


class TabLive:
    page: PWPage
    _session: Callable[[], Awaitable[CDPSession]]  # the tab's own CDP session (tab.py)

    async def thumbnail(self, *, width: int, timeout: float) -> bytes:
        size = self.page.viewport_size or {"width": 1280, "height": 720}
        scale = min(1.0, width / max(1, size["width"]))
        async with translated("Taking a thumbnail", timeout):
            session = await self._session()
            shot = await asyncio.wait_for(session.send("Page.captureScreenshot", {
                "format": "jpeg", "quality": 50,
                "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": scale}}), timeout)
        return base64.b64decode(shot["data"])

    async def start_screencast(self, on_frame: Callable[[ScreencastFrame], None], *, max_width: int,
                               max_height: int, quality: int) -> PlaywrightScreencast:
        async with translated("Starting the live view"):
            session = await self.page.context.new_cdp_session(self.page)

            def frame(params: dict[str, Any]) -> None:
                # Acknowledge at once: the browser sends the next frame only after the ack.
                asyncio.ensure_future(_ack(session, params["sessionId"]))
                meta = params.get("metadata", {})
                on_frame(ScreencastFrame(base64.b64decode(params["data"]), meta.get("timestamp") or time.time(),
                                         round(meta.get("deviceWidth", 0)), round(meta.get("deviceHeight", 0))))

            session.on("Page.screencastFrame", frame)
            await session.send("Page.startScreencast", {"format": "jpeg", "quality": quality,
                                                        "maxWidth": max_width, "maxHeight": max_height})
        return PlaywrightScreencast(session)

    async def dispatch_input(self, event: InputEvent, *, timeout: float) -> None:
        method, params = input_command(event)
        try:
            async with translated("Sending input to the page", timeout):
                await asyncio.wait_for((await self._session()).send(method, params), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"The page did not take the input within {timeout:g} s.",
                                "It may be busy or hung; try again.") from None


async def _ack(session: CDPSession, frame_id: int) -> None:
    try:
        await session.send("Page.screencastFrameAck", {"sessionId": frame_id})
    except PWError:
        pass  # stopped or closed meanwhile
