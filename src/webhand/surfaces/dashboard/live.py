"""The live view of one session: a screencast of its active tab, shared by everyone watching.

The screencast starts when the first viewer connects and stops when the last one leaves, so a
session nobody watches pays nothing. The browser sends a frame only when the page paints; frames
closer together than ``1 / max_fps`` are held back and the newest is sent when the interval
ends (a timer, not a sleep), so a busy page costs at most ``max_fps`` frames a second and the last
state of the page is always shown. Each viewer has a queue of one frame: a slow viewer skips
frames, it never holds up the others or the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from webhand.engine.driver import Screencast, ScreencastFrame, Tab
from webhand.errors import WebhandError
from webhand.session.session import Session

log = logging.getLogger("webhand")

MAX_WIDTH = 1280
MAX_HEIGHT = 1280
QUALITY = 60


class DashboardLiveView:
    def __init__(self, session: Session, max_fps: float) -> None:
        self.session = session
        self.interval = 1.0 / max_fps
        self.viewers: set[asyncio.Queue[ScreencastFrame]] = set()
        self.latest: ScreencastFrame | None = None  # a new viewer sees the page at once
        self._tab: Tab | None = None
        self._screencast: Screencast | None = None
        self._pending: ScreencastFrame | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._last_sent = 0.0
        self._switching = asyncio.Lock()
        self.frames_sent = 0

    async def join(self) -> asyncio.Queue[ScreencastFrame]:
        queue: asyncio.Queue[ScreencastFrame] = asyncio.Queue(maxsize=1)
        self.viewers.add(queue)
        if self.latest is not None:
            queue.put_nowait(self.latest)
        await self.follow_active_tab()
        return queue

    async def leave(self, queue: asyncio.Queue[ScreencastFrame]) -> None:
        self.viewers.discard(queue)
        if not self.viewers:
            await self._stop()

    async def follow_active_tab(self) -> None:
        """(Re)start the screencast on the session's active tab when it changed (or none runs)."""
        async with self._switching:
            tab = self.session.active_tab
            if not self.viewers or (tab is self._tab and self._screencast is not None):
                return
            await self._stop_screencast()
            if tab is None or tab.closed or tab.liveness.crashed:
                return
            try:
                self._screencast = await tab.live_view.start_screencast(self._on_frame, max_width=MAX_WIDTH,
                                                              max_height=MAX_HEIGHT, quality=QUALITY)
                self._tab = tab
            except WebhandError as error:
                log.info("live view of %s could not start: %s", self.session.key, error)

    async def _stop(self) -> None:
        async with self._switching:
            await self._stop_screencast()

    async def _stop_screencast(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        screencast, self._screencast, self._tab = self._screencast, None, None
        if screencast is not None:
            with contextlib.suppress(Exception):
                await screencast.stop()

    @property
    def streaming(self) -> bool:
        return self._screencast is not None

    def _on_frame(self, frame: ScreencastFrame) -> None:
        wait = self._last_sent + self.interval - time.monotonic()
        if wait <= 0:
            self._send(frame)
            return
        self._pending = frame  # held back: the newest one goes out when the interval ends
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self._flush)

    def _flush(self) -> None:
        self._timer = None
        frame, self._pending = self._pending, None
        if frame is not None:
            self._send(frame)

    def _send(self, frame: ScreencastFrame) -> None:
        self._last_sent = time.monotonic()
        self.latest = frame
        self.frames_sent += 1
        for queue in self.viewers:
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()  # this viewer is behind: it gets the newest frame instead
            queue.put_nowait(frame)
