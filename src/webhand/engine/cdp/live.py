"""What the dashboard needs of a CDP tab: thumbnails, a screencast of the viewport, a person's input.

A mixin of ``CdpTab`` (tab.py). The screencast runs on a second session attached to the same page,
so its frame events and acknowledgements never queue behind the agent's calls on the tab's session.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable
from typing import Any

from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded
from webhand.engine.driver import InputEvent, ScreencastFrame
from webhand.engine.live_input import input_command
from webhand.errors import ActionTimeout


class CdpScreencast:
    def __init__(self, connection: CdpConnection, session_id: str) -> None:
        self._connection = connection
        self._session = session_id
        self._stopped = False

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        try:
            await asyncio.wait_for(self._connection.send.Page.stopScreencast(session_id=self._session), 2)
            await asyncio.wait_for(self._connection.send.Target.detachFromTarget(params={"sessionId": self._session}), 2)
        except (TimeoutError, *PROTOCOL_ERRORS):
            pass  # the page closed first: nothing is streaming any more
        self._connection.forget_session(self._session)


class TabLiveMixin:
    connection: CdpConnection
    session_id: str
    target_id: str

    async def thumbnail(self, *, width: int, timeout: float) -> bytes:
        async with guarded("Taking a thumbnail", timeout):
            metrics = await self.connection.send.Page.getLayoutMetrics(session_id=self.session_id)
            view = metrics["cssLayoutViewport"]
            scale = min(1.0, width / max(1, view["clientWidth"]))
            shot = await self.connection.send.Page.captureScreenshot(params={
                "format": "jpeg", "quality": 50, "clip": {"x": view["pageX"], "y": view["pageY"],
                                                          "width": view["clientWidth"], "height": view["clientHeight"],
                                                          "scale": scale}}, session_id=self.session_id)
        return base64.b64decode(shot["data"])

    async def start_screencast(self, on_frame: Callable[[ScreencastFrame], None], *, max_width: int,
                               max_height: int, quality: int) -> CdpScreencast:
        send = self.connection.send
        async with guarded("Starting the live view", 30):
            attached = await send.Target.attachToTarget(params={"targetId": self.target_id, "flatten": True})
            session = attached["sessionId"]

            def frame(params: dict[str, Any]) -> None:
                # Acknowledge at once: the browser sends the next frame only after the ack.
                asyncio.ensure_future(_ack(self.connection, session, params["sessionId"]))
                meta = params.get("metadata", {})
                on_frame(ScreencastFrame(base64.b64decode(params["data"]), meta.get("timestamp") or time.time(),
                                         round(meta.get("deviceWidth", 0)), round(meta.get("deviceHeight", 0))))

            self.connection.on("Page.screencastFrame", session, frame)
            await send.Page.startScreencast(params={"format": "jpeg", "quality": quality, "maxWidth": max_width,
                                                    "maxHeight": max_height}, session_id=session)
        return CdpScreencast(self.connection, session)

    async def dispatch_input(self, event: InputEvent, *, timeout: float) -> None:
        method, params = input_command(event)
        try:
            async with guarded("Sending input to the page", timeout):
                await self.connection.client.send_raw(method, params, session_id=self.session_id)
        except ActionTimeout:
            raise ActionTimeout(f"The page did not take the input within {timeout:g} s.",
                                "It may be busy or hung; try again.") from None


async def _ack(connection: CdpConnection, session: str, frame_id: int) -> None:
    try:
        await connection.send.Page.screencastFrameAck(params={"sessionId": frame_id}, session_id=session)
    except PROTOCOL_ERRORS:
        pass  # stopped or closed meanwhile
