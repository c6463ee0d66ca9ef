"""What the dashboard sees of a Firefox tab: thumbnails and a live view made of screenshots.

WebDriver BiDi has no screencast (nothing like CDP's ``Page.startScreencast``, which sends a
frame each time the page paints). So the live view takes its own frames with
``browsingContext.captureScreenshot`` (a JPEG of the viewport), one at a time: the next is taken
only once the previous one was handed over, the page has rendered an animation frame since
(``requestAnimationFrame`` in the page agent's sandbox, which also gives the viewport's size), and
``FRAME_INTERVAL`` has passed since the last one began. A page that renders nothing (hung, or
blocked by a dialog) gets no capture until it does. A frame the same as the last one is not sent,
and while the page stands still the interval doubles, up to ``IDLE_INTERVAL`` (back to the
shortest at the first change). A capture costs Firefox some 50 ms of CPU at 1280x720, hence the
modest rate.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import time
from collections.abc import Callable
from typing import Any, Protocol

from webhand.engine.bidi.connection import BidiConnection, guarded
from webhand.engine.bidi.point_input import PointInput
from webhand.engine.driver import InputEvent, ScreencastFrame
from webhand.errors import WebhandError

#: The shortest time between two captures' starts: at most this many frames a second (~3).
FRAME_INTERVAL = 0.33
#: The longest time between two captures' starts while the page shows no change: a change is seen
#: within this long.
IDLE_INTERVAL = 1.0
#: How long one capture (its animation frame, then the screenshot) may take before it is given up
#: and tried again after the interval: the page may be busy, hung or between documents.
CAPTURE_CAP = 5.0
#: Resolves at the page's next animation frame with the viewport's size in CSS pixels.
_RENDERED = "() => new Promise(r => requestAnimationFrame(() => r([innerWidth, innerHeight])))"


class CaptureTab(Protocol):
    """What capturing needs of a tab (tab.py's ``BidiTab``)."""

    connection: BidiConnection
    context_id: str

    @property
    def closed(self) -> bool: ...

    async def call(self, function: str, args: list[Any], *, doing: str, timeout: float) -> Any: ...


async def _viewport_jpeg(tab: CaptureTab, quality: int, doing: str, timeout: float) -> bytes:
    async with guarded(doing, timeout):
        shot = await tab.connection.send("browsingContext.captureScreenshot", {
            "context": tab.context_id, "origin": "viewport", "format": {"type": "image/jpeg", "quality": quality / 100}})
    return base64.b64decode(shot["data"])


def _fit(jpeg: bytes, max_width: int, max_height: int, quality: int) -> bytes:
    """The JPEG scaled down to fit ``max_width`` x ``max_height`` (as it is when it fits already)."""
    from PIL import Image

    image = Image.open(io.BytesIO(jpeg))
    if image.width <= max_width and image.height <= max_height:
        return jpeg
    image.thumbnail((max_width, max_height))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue()


async def thumbnail(tab: CaptureTab, *, width: int, timeout: float) -> bytes:
    """A small JPEG of the viewport, ``width`` pixels wide (BiDi captures at full size: scaled here)."""
    jpeg = await _viewport_jpeg(tab, 50, "Taking a thumbnail", timeout)
    return await asyncio.to_thread(_fit, jpeg, width, 100_000, 50)


class BidiLiveView:
    """A Firefox tab's ``live_view`` component (``driver.LiveView``): captured frames, and a
    person's input through the tab's ``PointInput`` (point_input.py)."""

    def __init__(self, tab: CaptureTab, point_input: PointInput) -> None:
        self._tab = tab
        self._point_input = point_input

    async def thumbnail(self, *, width: int, timeout: float) -> bytes:
        return await thumbnail(self._tab, width=width, timeout=timeout)

    async def start_screencast(self, on_frame: Callable[[ScreencastFrame], None], *, max_width: int, max_height: int,
                               quality: int) -> CapturedScreencast:
        """Frames this driver captures itself: BiDi has no screencast."""
        return CapturedScreencast(self._tab, on_frame, max_width=max_width, max_height=max_height, quality=quality)

    async def dispatch_input(self, event: InputEvent, *, timeout: float) -> None:
        await self._point_input.dispatch(event, timeout)


class CapturedScreencast:
    """A running live view of a tab (``driver.Screencast``): frames it captures itself, until ``stop``."""

    def __init__(self, tab: CaptureTab, on_frame: Callable[[ScreencastFrame], None], *, max_width: int,
                 max_height: int, quality: int) -> None:
        self._tab = tab
        self._on_frame = on_frame
        self._fit = (max_width, max_height, quality)
        self._stopped = asyncio.Event()
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last: bytes | None = None
        interval = FRAME_INTERVAL
        while not self._stopped.is_set() and not self._tab.closed:
            began = loop.time()
            try:
                width, height = await self._tab.call(_RENDERED, [], doing="Waiting for the page to render",
                                                     timeout=CAPTURE_CAP)
                jpeg = await _viewport_jpeg(self._tab, self._fit[2], "Capturing the live view",
                                            max(0.1, CAPTURE_CAP - (loop.time() - began)))
            except WebhandError:
                jpeg = None  # busy, hung or between documents: tried again after the interval
            interval = min(IDLE_INTERVAL, interval * 2) if jpeg is None or jpeg == last else FRAME_INTERVAL
            if jpeg is not None and jpeg != last and not self._stopped.is_set():
                last = jpeg
                fitted = await asyncio.to_thread(_fit, jpeg, *self._fit)
                self._on_frame(ScreencastFrame(fitted, time.time(), round(width), round(height)))
            # The pace's cap: an event (stop) ends the wait early, never a sleep the caller cannot cut.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), max(0.0, began + interval - loop.time()))

    async def stop(self) -> None:
        self._stopped.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), CAPTURE_CAP + 1)
        except TimeoutError:
            self._task.cancel()
