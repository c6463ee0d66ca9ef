"""What a CDP tab does for the action tools: the origin policy's checks, history, scrolling,
action watches, liveness (crash, hang, stop, end) and drags. A mixin of ``CdpTab`` (tab.py)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from webhand.engine import settle
from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded
from webhand.engine.driver import NavigationResult, SettleCaps
from webhand.engine.page_scripts import SCROLL
from webhand.engine.policy import before_navigation, navigation_refusal
from webhand.engine.settle import PageGone, SettleWatch, answer_or_held_navigation
from webhand.errors import ActionTimeout, PolicyRefused

if TYPE_CHECKING:
    from webhand.engine.cdp.element import CdpElement
    from webhand.engine.cdp.frames import FrameTree
    from webhand.engine.policy import OriginPolicy


class TabActionsMixin:
    connection: CdpConnection
    session_id: str
    target_id: str
    tracker: settle.RequestTracker
    frame_tree: FrameTree
    _policy: OriginPolicy | None
    _ended: bool
    _crashed: bool
    _refusals_before = 0  # the refusal log's count when the current navigation began

    # policy ----------------------------------------------------------------------------------
    async def _before_navigation(self, url: str) -> None:
        self._refusals_before = before_navigation(self._policy, url, self.tracker.refusals)

    def _refused(self, url: str, error_text: str) -> PolicyRefused | None:
        return navigation_refusal(self._policy, url, error_text, self.tracker.refusals, self._refusals_before)

    # history ---------------------------------------------------------------------------------
    async def _history(self, step: str, timeout: float) -> NavigationResult | None:
        """Back, forward (by the history list) or reload; None when there is no entry that way.
        Waits for the main frame to commit, then for its document to be complete (a page from the
        back/forward cache fires no new "load")."""
        url = self.url  # type: ignore[attr-defined]
        commits = self.tracker.commits
        doing = f"Navigation to going {step} from {url}"
        async with guarded(doing, timeout):
            if step == "reload":
                await self.connection.send.Page.reload(session_id=self.session_id)
            else:
                history = await self.connection.send.Page.getNavigationHistory(session_id=self.session_id)
                index = history["currentIndex"] + (-1 if step == "back" else 1)
                if not 0 <= index < len(history["entries"]):
                    return None
                await self.connection.send.Page.navigateToHistoryEntry(params={"entryId": history["entries"][index]["id"]},
                                                                       session_id=self.session_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if not await self.tracker.until(lambda: self.tracker.commits > commits, timeout):
            raise ActionTimeout(f"{doing} did not finish within {timeout:g} s.",
                                "Retry with wait_until='domcontentloaded' or a larger timeout; browser_snapshot shows what loaded.")
        try:
            await settle.document_loaded(self, max(0.001, deadline - loop.time()))  # type: ignore[arg-type]
        except (settle.LoadTimeout, PageGone):
            raise ActionTimeout(f"{doing} did not finish within {timeout:g} s.",
                                "Retry with a larger timeout; browser_snapshot shows what loaded.") from None
        status = None
        loader = self._main_loader  # type: ignore[attr-defined]
        if loader in self._document_responses:  # type: ignore[attr-defined]
            status = self._document_responses.pop(loader)[0]  # type: ignore[attr-defined]
        return NavigationResult(self.url, status, await self.title())  # type: ignore[attr-defined]

    async def go_back(self, *, timeout: float) -> NavigationResult | None:
        return await self._history("back", timeout)

    async def go_forward(self, *, timeout: float) -> NavigationResult | None:
        return await self._history("forward", timeout)

    async def reload(self, *, timeout: float) -> NavigationResult:
        result = await self._history("reload", timeout)
        assert result is not None
        return result

    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str:
        state = self.frame_tree.frames[self.frame_tree.main_id]
        async with guarded("Scrolling the page", timeout):
            left, top, width, height = await self.frame_tree.evaluate(state, SCROLL, [x, y], timeout=timeout)
        return f"The page is scrolled to x={left}, y={top} (page size {width}x{height})."

    def watch(self, caps: SettleCaps) -> SettleWatch:
        return SettleWatch(self.tracker, caps)

    # liveness --------------------------------------------------------------------------------
    async def ping(self) -> str | None:
        """None once the renderer answers ``0``; while the main frame waits for a server's response
        the browser holds messages to the page, so then that navigation's URL comes back at once."""
        tracker = self.tracker
        answer = asyncio.ensure_future(self.connection.send.Runtime.evaluate(params={"expression": "0"},
                                                                            session_id=self.session_id))
        return await answer_or_held_navigation(answer, tracker)

    async def stop_loading(self) -> None:
        async with guarded("Stopping the navigation", 10):
            await self.connection.send.Page.stopLoading(session_id=self.session_id)

    async def end(self) -> None:
        """``Target.closeTarget`` is handled by the browser process: it works on a hung page and never
        runs unload handlers. The tab counts as closed at once; the confirmation is awaited briefly."""
        if self.closed or self._ended:  # type: ignore[attr-defined]
            return
        self._ended = True
        closing = asyncio.ensure_future(self.connection.send.Target.closeTarget(params={"targetId": self.target_id}))
        closing.add_done_callback(lambda done: done.cancelled() or done.exception())
        await asyncio.wait({closing}, timeout=0.1)

    # dragging --------------------------------------------------------------------------------
    async def drag(self, source: CdpElement, target: CdpElement, start: tuple[float, float], timeout: float) -> None:
        send, session = self.connection.send, self.session_id
        intercepted: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        stop = self.connection.on("Input.dragIntercepted", session,
                                  lambda p: intercepted.done() or intercepted.set_result(p["data"]))
        await send.Input.setInterceptDrags(params={"enabled": True}, session_id=session)
        try:
            x, y = start
            await source._mouse("mouseMoved", x, y)
            await source._mouse("mousePressed", x, y, button="left", click_count=1)
            end_x, end_y = await target._actionable(f"Dragging onto {target.ref}", timeout, enabled=False, pointer=False)
            for step in range(1, 6):
                px, py = x + (end_x - x) * step / 5, y + (end_y - y) * step / 5
                await source._mouse("mouseMoved", px, py, button="left")
                if intercepted.done():
                    break
            if intercepted.done():  # an HTML5 drag: replay it as drag events onto the target
                data = intercepted.result()
                for kind in ("dragEnter", "dragOver", "drop"):
                    await send.Input.dispatchDragEvent(params={"type": kind, "x": end_x, "y": end_y, "data": data},  # type: ignore[typeddict-item]
                                                       session_id=session)
            await source._mouse("mouseReleased", end_x, end_y, button="left", click_count=1)
        finally:
            stop()
            try:
                await send.Input.setInterceptDrags(params={"enabled": False}, session_id=session)
            except PROTOCOL_ERRORS:
                pass
