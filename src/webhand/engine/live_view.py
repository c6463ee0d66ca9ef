"""What the dashboard needs of a tab, the same on both Chromium drivers (the Firefox driver's is
engine/bidi/screen_capture.py): thumbnails, a screencast of the viewport, a person's input.

The screencast runs on a second CDP session attached to the same page (``CdpChannel.fork``), so its
frame events and acknowledgements never queue behind the agent's calls on the tab's CDP session.
"""

from __future__ import annotations

import asyncio
import base64
import time
from dataclasses import replace
from collections.abc import Awaitable, Callable
from typing import Any

from webhand.engine.channel import CdpChannel, guarded
from webhand.engine.driver import InputEvent, ScreencastFrame
from webhand.errors import ActionTimeout, InvalidArgument

#: Where a thumbnail is taken: the viewport's x, y, width and height in CSS pixels.
Viewport = Callable[[], Awaitable[tuple[float, float, float, float]]]


class LiveView:
    """A Chromium tab's ``live_view`` component (``driver.LiveView``).

    ``viewport``: where the tab's viewport is; None asks the page (``Page.getLayoutMetrics``,
    scrolled position included). Playwright knows the size it set and passes it, saving the round trip.
    """

    def __init__(self, channel: CdpChannel, viewport: Viewport | None = None) -> None:
        self.channel = channel
        self._viewport = viewport or self._layout_viewport

    async def _layout_viewport(self) -> tuple[float, float, float, float]:
        view = (await self.channel.send("Page.getLayoutMetrics"))["cssLayoutViewport"]
        return view["pageX"], view["pageY"], view["clientWidth"], view["clientHeight"]

    async def thumbnail(self, *, width: int, timeout: float) -> bytes:
        async with guarded(self.channel, "Taking a thumbnail", timeout):
            x, y, view_width, view_height = await self._viewport()
            scale = min(1.0, width / max(1, view_width))
            shot = await self.channel.send("Page.captureScreenshot", {
                "format": "jpeg", "quality": 50,
                "clip": {"x": x, "y": y, "width": view_width, "height": view_height, "scale": scale}})
        return base64.b64decode(shot["data"])

    async def start_screencast(self, on_frame: Callable[[ScreencastFrame], None], *, max_width: int,
                               max_height: int, quality: int) -> ChannelScreencast:
        async with guarded(self.channel, "Starting the live view", 30):
            stream = await self.channel.fork()

            def frame(params: dict[str, Any]) -> None:
                # Acknowledge at once: the browser sends the next frame only after the ack.
                asyncio.ensure_future(_ack(stream, params["sessionId"]))
                meta = params.get("metadata", {})
                on_frame(ScreencastFrame(base64.b64decode(params["data"]), meta.get("timestamp") or time.time(),
                                         round(meta.get("deviceWidth", 0)), round(meta.get("deviceHeight", 0))))

            stop_listening = stream.on("Page.screencastFrame", frame)
            await stream.send("Page.startScreencast", {"format": "jpeg", "quality": quality, "maxWidth": max_width,
                                                       "maxHeight": max_height})
        return ChannelScreencast(stream, stop_listening)

    async def dispatch_input(self, event: InputEvent, *, timeout: float) -> None:
        # A click is its presses and releases, each carrying its count (CDP counts none itself).
        events = [replace(event, kind=kind, click_count=count) for count in range(1, event.click_count + 1)
                  for kind in ("mousePressed", "mouseReleased")] if event.kind == "click" else [event]
        try:
            async with guarded(self.channel, "Sending input to the page", timeout):
                for each in events:
                    method, params = input_command(each)
                    await self.channel.send(method, params)
        except ActionTimeout:
            raise ActionTimeout(f"The page did not take the input within {timeout:g} s.",
                                "It may be busy or hung; try again.") from None


class ChannelScreencast:
    """A running screencast (``driver.Screencast``): its own CDP session, ended by ``stop``."""

    def __init__(self, stream: CdpChannel, stop_listening: Callable[[], None]) -> None:
        self._stream = stream
        self._stop_listening = stop_listening
        self._stopped = False

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        page_gone: tuple[type[Exception], ...] = (TimeoutError, *self._stream.errors)
        try:
            await asyncio.wait_for(self._stream.send("Page.stopScreencast"), 2)
            await asyncio.wait_for(self._stream.detach(), 2)
        except page_gone:
            pass  # the page closed first: nothing is streaming any more
        finally:
            self._stop_listening()


async def _ack(stream: CdpChannel, frame_id: int) -> None:
    try:
        await stream.send("Page.screencastFrameAck", {"sessionId": frame_id})
    except stream.errors:
        pass  # stopped or closed meanwhile


# a person's input ------------------------------------------------------------------------------
_MOUSE_KINDS = {"mousePressed", "mouseReleased", "mouseMoved", "mouseWheel"}
_KEY_KINDS = {"keyDown", "keyUp"}


def input_command(event: InputEvent) -> tuple[str, dict[str, Any]]:
    """The CDP method and parameters that send ``event`` to the page."""
    if event.kind in _MOUSE_KINDS:
        return "Input.dispatchMouseEvent", {
            "type": event.kind, "x": event.x, "y": event.y, "button": event.button,
            "clickCount": event.click_count, "modifiers": event.modifiers,
            "deltaX": event.delta_x, "deltaY": event.delta_y}
    if event.kind in _KEY_KINDS:
        # A key that types (a letter) carries its text on keyDown; CDP then fires keypress and input.
        return "Input.dispatchKeyEvent", {
            "type": "keyDown" if event.kind == "keyDown" and event.text else
                    ("rawKeyDown" if event.kind == "keyDown" else "keyUp"),
            "key": event.key, "code": event.code, "text": event.text if event.kind == "keyDown" else "",
            "modifiers": event.modifiers, "windowsVirtualKeyCode": _virtual_key(event.key)}
    if event.kind == "text":
        return "Input.insertText", {"text": event.text}
    raise InvalidArgument(f"Unknown input event {event.kind!r}.",
                          "Send mousePressed, mouseReleased, mouseMoved, mouseWheel, keyDown, keyUp or text.")


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
