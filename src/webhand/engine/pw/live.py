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
from webhand.engine.pw.errors import translated
from webhand.errors import ActionTimeout, InvalidArgument

_MOUSE_KINDS = {"mousePressed", "mouseReleased", "mouseMoved", "mouseWheel"}
_KEY_KINDS = {"keyDown", "keyUp"}


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
        if event.kind in _MOUSE_KINDS:
            method, params = "Input.dispatchMouseEvent", {
                "type": event.kind, "x": event.x, "y": event.y, "button": event.button,
                "clickCount": event.click_count, "modifiers": event.modifiers,
                "deltaX": event.delta_x, "deltaY": event.delta_y}
        elif event.kind in _KEY_KINDS:
            # A key that types (a letter) carries its text on keyDown; CDP then fires keypress and input.
            method, params = "Input.dispatchKeyEvent", {
                "type": "keyDown" if event.kind == "keyDown" and event.text else
                        ("rawKeyDown" if event.kind == "keyDown" else "keyUp"),
                "key": event.key, "code": event.code, "text": event.text if event.kind == "keyDown" else "",
                "modifiers": event.modifiers, "windowsVirtualKeyCode": _virtual_key(event.key)}
        elif event.kind == "text":
            method, params = "Input.insertText", {"text": event.text}
        else:
            raise InvalidArgument(f"Unknown input event {event.kind!r}.",
                                  "Send mousePressed, mouseReleased, mouseMoved, mouseWheel, keyDown, keyUp or text.")
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


#: Windows virtual key codes of the named keys a person presses most (Chromium needs them to act on
#: Enter, Backspace, arrows); a printable character's code is its upper-case letter or digit.
_NAMED_KEYS = {"Backspace": 8, "Tab": 9, "Enter": 13, "Shift": 16, "Control": 17, "Alt": 18, "Escape": 27,
               " ": 32, "PageUp": 33, "PageDown": 34, "End": 35, "Home": 36, "ArrowLeft": 37, "ArrowUp": 38,
               "ArrowRight": 39, "ArrowDown": 40, "Delete": 46, "Meta": 91}


def _virtual_key(key: str) -> int:
    if key in _NAMED_KEYS:
        return _NAMED_KEYS[key]
    if len(key) == 1 and key.isalnum():
        return ord(key.upper())
    return 0
