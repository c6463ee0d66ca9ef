"""Whether a CDP tab's page still lives, and the ways to test, stop and end it: the hang test
(``ping``), stopping a navigation, ending a hung tab, and the crash and close the browser reports.

``Liveness`` is owned by ``CdpTab`` (tab.py): the tab's ``closed`` and ``crashed`` are read here.
"""

from __future__ import annotations

import asyncio

from webhand.engine.cdp.connection import CdpConnection, guarded
from webhand.engine.cdp.frames import FrameTree
from webhand.engine.settle import RequestTracker, answer_or_held_navigation

#: Longest ending a tab waits for the browser to confirm (see Driver.end); nothing waits on it.
_END_CAP_SECONDS = 0.1


class Liveness:
    def __init__(self, connection: CdpConnection, session_id: str, target_id: str, frame_tree: FrameTree,
                 tracker: RequestTracker) -> None:
        self._connection = connection
        self._session = session_id
        self._target = target_id
        self._frame_tree = frame_tree
        self._tracker = tracker
        self.crashed = False
        self.ended = False  # webhand ended the tab (``end``): it counts as closed at once
        self.target_gone = False  # the browser reported the page's target gone (closed by anyone)

    @property
    def closed(self) -> bool:
        return self.target_gone or self.ended or self._connection.closed

    # reported by the browser -------------------------------------------------------------------
    def on_crash(self) -> None:
        self.crashed = True
        self._frame_tree.gone.set()  # a call in flight never gets its answer now
        self._tracker.activity.set()

    def on_target_gone(self) -> None:
        self.target_gone = True
        self._frame_tree.gone.set()
        self._tracker.activity.set()

    # asked by webhand --------------------------------------------------------------------------
    async def ping(self) -> str | None:
        """None once the renderer answers ``0``; while the main frame waits for a server's response
        the browser holds messages to the page, so then that navigation's URL comes back at once."""
        tracker = self._tracker
        answer = asyncio.ensure_future(self._connection.send.Runtime.evaluate(params={"expression": "0"},
                                                                             session_id=self._session))
        return await answer_or_held_navigation(answer, tracker)

    async def stop_loading(self) -> None:
        async with guarded("Stopping the navigation", 10):
            await self._connection.send.Page.stopLoading(session_id=self._session)

    async def end(self) -> None:
        """``Target.closeTarget`` is handled by the browser process: it works on a hung page and never
        runs unload handlers. The tab counts as closed at once; the confirmation is awaited briefly."""
        if self.closed or self.ended:
            return
        self.ended = True
        closing = asyncio.ensure_future(self._connection.send.Target.closeTarget(params={"targetId": self._target}))
        closing.add_done_callback(lambda done: done.cancelled() or done.exception())
        await asyncio.wait({closing}, timeout=_END_CAP_SECONDS)
