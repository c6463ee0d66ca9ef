"""One element a ref (or selector) named, as a remote object of its frame: exact identity.

Pointer actions wait for the element to be actionable (``actionability.py``), then send real
input (``Input.dispatchMouseEvent``) to the tab at the element's centre in the tab's viewport;
typing goes to whatever has focus, as keys or ``Input.insertText``. A drag presses on one element and
releases on another; an HTML5 drag is caught by ``Input.setInterceptDrags`` and replayed as drag events.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from webhand.engine import form_fields, keys
from webhand.engine.cdp import keyboard
from webhand.engine.cdp.actionability import DESCRIBE
from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpClosed, CdpConnection, guarded
from webhand.engine.cdp.frames import FrameState, FrameTree
from webhand.engine.cdp.liveness import Liveness
from webhand.engine.page_scripts import CHECKED, FIELD_TEXT, FILL_PREPARE, KIND, MASK_TEXT, OPTIONS, SELECT
from webhand.engine.pointer import ACTIONABLE as CHECK, AT_PRESS, CENTRE, LABEL, PICK_OPTION, SCROLL_INTO_VIEW, press_refused, until_ready
from webhand.engine.pointer import not_actionable as _not_actionable
from webhand.engine.settle import PageGone
from webhand.errors import WebhandError

_BUTTONS = {"left": 1, "right": 2, "middle": 4}


class ElementTab(Protocol):
    """What an element needs of its tab (``CdpTab``): the page session that takes the input, the
    frames that run its code, whether the page crashed, and a retry loop's pause."""

    connection: CdpConnection
    session_id: str
    frame_tree: FrameTree
    liveness: Liveness  # whether the page crashed

    async def next_event(self, cap: float) -> None: ...


class CdpElement:
    def __init__(self, tab: ElementTab, frame: FrameState, object_id: str, ref: str) -> None:
        self.tab = tab
        self.frame = frame
        self.session_id = frame.session_id
        self.object_id = object_id
        self.ref = ref

    # running code on the element ----------------------------------------------------------------
    async def _call(self, function: str, *args: Any, by_value: bool = True) -> Any:
        try:
            reply = await self.tab.frame_tree.unless_gone(self.tab.connection.send.Runtime.callFunctionOn(params={
                "functionDeclaration": function, "objectId": self.object_id,
                "arguments": [{"value": a} for a in args], "returnByValue": by_value, "awaitPromise": True},
                session_id=self.session_id))
        except PageGone:
            raise CdpClosed("Target crashed" if self.tab.liveness.crashed else "Target closed") from None
        details = reply.get("exceptionDetails")
        if details:
            what = (details.get("exception") or {}).get("description") or details.get("text") or "Error"
            raise WebhandError(f"Acting on {self.ref} failed: {what.splitlines()[0]}", "Call browser_snapshot to see the page state.")
        return reply["result"].get("value") if by_value else reply["result"]

    async def _until_ready(self, doing: str, timeout: float, attempt: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """Make attempts until one no longer says to wait, retrying on page events (pointer.until_ready)."""
        async def capped(remaining: float) -> dict[str, Any]:
            async with guarded(doing, remaining):
                return await attempt()

        return await until_ready(doing, timeout, capped,
                                 lambda left: self.tab.next_event(min(0.1, max(0.0, left))))

    async def _ready(self, doing: str, timeout: float, *, enabled: bool = True, pointer: bool = True,
                     option_click: bool = False) -> dict[str, Any]:
        """Wait until the element can take a pointer action: {x, y}, its click point in the tab's
        viewport; with ``option_click``, {dropdown: true} for an option of a drop-down (it is to be
        chosen, not clicked)."""
        # A frame of another site scrolled out of view draws no animation frames, and the check
        # waits for one: an element in a child frame is brought into view first.
        scrolled = not self.frame.parent_id or self.frame.frame_id == self.tab.frame_tree.main_id

        async def attempt() -> dict[str, Any]:
            nonlocal scrolled
            if not scrolled:
                scrolled = "x" in await self._into_view()
            state = await self._call(CHECK, enabled, pointer, option_click)
            if "x" not in state:
                return state
            x, y, shown = await self.tab.frame_tree.frame_point(self.frame, state["x"], state["y"])
            # The frame's own point too: what is under the pointer is asked there (AT_PRESS).
            return {**state, "x": x, "y": y, "frame_x": state["x"], "frame_y": state["y"]} if shown else {"wait": "out of view"}

        return await self._until_ready(doing, timeout, attempt)

    async def _actionable(self, doing: str, timeout: float, *, enabled: bool = True, pointer: bool = True) -> tuple[float, float]:
        """Wait until the element can take a pointer action; its click point in the tab's viewport."""
        ready = await self._ready(doing, timeout, enabled=enabled, pointer=pointer)
        return ready["x"], ready["y"]

    async def _mouse(self, kind: str, x: float, y: float, *, button: str = "none", click_count: int = 0,
                     modifiers: int = 0) -> None:
        params: dict[str, Any] = {"type": kind, "x": x, "y": y, "modifiers": modifiers, "button": button,
                                  "clickCount": click_count}
        if kind != "mouseMoved" or button != "none":
            params["buttons"] = _BUTTONS.get(button, 0) if kind != "mouseReleased" else 0
        await self.tab.connection.send.Input.dispatchMouseEvent(params=params, session_id=self.tab.session_id)  # type: ignore[arg-type]

    # actions ------------------------------------------------------------------------------------
    async def click(self, *, button: str = "left", click_count: int = 1, modifiers: list[str] | None = None,
                    timeout: float) -> dict[str, str]:
        doing = f"Clicking {self.ref}"
        ready = await self._ready(doing, timeout, option_click=button == "left")
        if ready.get("dropdown"):  # an option of a drop-down: the browser draws those, and a click on one chooses it
            await self._until_ready(doing, timeout, lambda: self._call(PICK_OPTION))
            return await self._call(LABEL)
        x, y = ready["x"], ready["y"]
        bits = 0
        for name in modifiers or []:
            bits |= keys.MODIFIER_BITS.get(keys.ALIASES.get(name, name), 0)
        async with guarded(doing, timeout):
            await self._mouse("mouseMoved", x, y, modifiers=bits)
            # The page may swap what is under the pointer as it arrives: press only on the element.
            landed = await self._call(AT_PRESS, ready["frame_x"], ready["frame_y"], ready.get("label"))
        if "label" not in landed:
            raise press_refused(doing, landed)
        async with guarded(doing, timeout):
            for count in range(1, click_count + 1):
                await self._mouse("mousePressed", x, y, button=button, click_count=count, modifiers=bits)
                await self._mouse("mouseReleased", x, y, button=button, click_count=count, modifiers=bits)
        return landed["label"]

    async def hover(self, *, timeout: float) -> None:
        x, y = await self._actionable(f"Hovering {self.ref}", timeout, enabled=False)
        async with guarded(f"Hovering {self.ref}", timeout):
            await self._mouse("mouseMoved", x, y)

    async def fill(self, text: str, *, timeout: float) -> None:
        doing = f"Typing into {self.ref}"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        state = await self._until_ready(doing, timeout, lambda: self._call(FILL_PREPARE, text))
        if state.get("done"):
            return
        async with guarded(doing, max(0.1, deadline - loop.time())):
            if text:
                await self.tab.connection.send.Input.insertText(params={"text": text}, session_id=self.tab.session_id)
            else:
                await keyboard.press(self.tab.connection, self.tab.session_id, "Delete")

    async def mask_text(self, masked: bool, *, timeout: float) -> None:
        async with guarded(f"Masking the text of {self.ref}", timeout):
            await self._call(f"function (on) {{ ({MASK_TEXT})(this)(on); }}", masked)

    async def type(self, text: str, *, delay_ms: float, timeout: float) -> None:
        await self.focus(timeout=timeout)
        async with guarded(f"Typing into {self.ref}", timeout + len(text) * delay_ms / 1000):
            await keyboard.type_text(self.tab.connection, self.tab.session_id, text, delay_ms / 1000)

    async def press(self, key: str, *, timeout: float) -> None:
        keys.parse_chord(key)  # an unknown key is refused before anything happens
        await self.focus(timeout=timeout)
        async with guarded(f"Pressing {key} on {self.ref}", timeout):
            await keyboard.press(self.tab.connection, self.tab.session_id, key)

    async def focus(self, *, timeout: float) -> None:
        async with guarded(f"Focusing {self.ref}", timeout):
            await self._call("function () { if (!this.isConnected) throw new Error('Element is not attached to the DOM'); this.focus(); }")

    async def select_option(self, values: list[str], *, timeout: float) -> list[str]:
        doing = f"Selecting in {self.ref}"
        async with guarded(doing, timeout):
            found = await self._call(f"function (wanted) {{ return ({OPTIONS})(this, wanted); }}", values)
        form_fields.refuse_options(self.ref, values, found)
        await self._actionable(doing, timeout, pointer=False)
        async with guarded(doing, timeout):
            await self._call(SELECT, values)
        return values

    async def set_checked(self, checked: bool, *, timeout: float) -> None:
        doing = f"{'Checking' if checked else 'Unchecking'} {self.ref}"

        async def read() -> dict[str, Any]:
            async with guarded(doing, timeout):
                return await self._call(CHECKED)

        await form_fields.set_checked(self.ref, checked, read, lambda: self.click(timeout=timeout))

    async def _into_view(self) -> dict[str, Any]:
        """Scroll the element into view inside every scroller that hides it, the frames above
        included: its point in its frame, or {error: why not}."""
        state: dict[str, Any] = await self._call(SCROLL_INTO_VIEW)
        if "x" in state and not (await self.tab.frame_tree.frame_point(self.frame, state["x"], state["y"]))[2]:
            await self._call(CENTRE)  # an iframe above hides it: this scrolls the frames above too
        return state

    async def scroll_into_view(self, *, timeout: float) -> None:
        doing = f"Scrolling {self.ref} into view"
        async with guarded(doing, timeout):
            state = await self._into_view()
        if "error" in state:
            raise _not_actionable(doing, state)

    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str:
        async with guarded(f"Scrolling inside {self.ref}", timeout):
            left, top = await self._call("function (x, y) { this.scrollBy(x, y); return [this.scrollLeft, this.scrollTop]; }", x, y)
        return f"{self.ref} is scrolled to x={left:g}, y={top:g}."

    async def drag_to(self, target: CdpElement, *, timeout: float) -> None:  # type: ignore[override]
        """Press on this element, move onto ``target`` in steps, release. An HTML5 drag is caught
        by ``Input.setInterceptDrags`` and replayed as drag events, as Chromium's DevTools do."""
        doing = f"Dragging {self.ref} onto {target.ref}"
        x, y = await self._actionable(doing, timeout, enabled=False)
        async with guarded(doing, timeout):
            await self._drag(target, (x, y), timeout)

    async def _drag(self, target: CdpElement, start: tuple[float, float], timeout: float) -> None:
        send, session = self.tab.connection.send, self.tab.session_id
        intercepted: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        stop = self.tab.connection.on("Input.dragIntercepted", session,
                                      lambda p: intercepted.done() or intercepted.set_result(p["data"]))
        await send.Input.setInterceptDrags(params={"enabled": True}, session_id=session)
        try:
            x, y = start
            await self._mouse("mouseMoved", x, y)
            await self._mouse("mousePressed", x, y, button="left", click_count=1)
            end_x, end_y = await target._actionable(f"Dragging onto {target.ref}", timeout, enabled=False, pointer=False)
            for step in range(1, 6):
                px, py = x + (end_x - x) * step / 5, y + (end_y - y) * step / 5
                await self._mouse("mouseMoved", px, py, button="left")
                if intercepted.done():
                    break
            if intercepted.done():  # an HTML5 drag: replay it as drag events onto the target
                data = intercepted.result()
                for kind in ("dragEnter", "dragOver", "drop"):
                    await send.Input.dispatchDragEvent(params={"type": kind, "x": end_x, "y": end_y, "data": data},  # type: ignore[typeddict-item]
                                                       session_id=session)
            await self._mouse("mouseReleased", end_x, end_y, button="left", click_count=1)
        finally:
            stop()
            try:
                await send.Input.setInterceptDrags(params={"enabled": False}, session_id=session)
            except PROTOCOL_ERRORS:
                pass

    async def kind(self) -> str:
        async with guarded(f"Reading {self.ref}", 30):
            return str(await self._call(f"function () {{ return ({KIND})(this); }}"))

    async def field_text(self) -> dict[str, Any] | None:
        async with guarded(f"Reading {self.ref}", 30):
            return await self._call(f"function () {{ return ({FIELD_TEXT})(this); }}")

    async def origin(self) -> str:
        return self.tab.frame_tree.origin_of(self.frame.frame_id)

    async def set_input_files(self, paths: list[str], *, timeout: float) -> None:
        """Give files to the <input type=file> directly (no file chooser; works on hidden inputs too)."""
        doing = f"Setting the files of {self.ref}"
        async with guarded(doing, timeout):
            kind = await self._call("function () { return this.tagName === 'INPUT' ? (this.type || '').toLowerCase() : this.tagName.toLowerCase(); }")
            if kind != "file":
                raise WebhandError(f"{doing} failed: Node is not an HTMLInputElement of type file.",
                                   "Call browser_snapshot and pick the file input.")
            await self.tab.connection.send.DOM.setFileInputFiles(params={"files": paths, "objectId": self.object_id},
                                                                 session_id=self.session_id)

    async def screenshot(self, *, timeout: float) -> bytes:
        doing = f"Screenshot of {self.ref}"
        await self.scroll_into_view(timeout=timeout)
        async with guarded(doing, timeout):
            left, top, width, height = await self._call(
                "function () { const r = this.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }")
            offset_x, offset_y, _ = await self.tab.frame_tree.frame_point(self.frame, 0, 0)
            metrics = await self.tab.connection.send.Page.getLayoutMetrics(session_id=self.tab.session_id)
            viewport = metrics["cssVisualViewport"]
            shot = await self.tab.connection.send.Page.captureScreenshot(params={
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": left + offset_x + viewport["pageX"], "y": top + offset_y + viewport["pageY"],
                         "width": max(1, width), "height": max(1, height), "scale": 1}}, session_id=self.tab.session_id)
        return base64.b64decode(shot["data"])

    async def describe(self) -> str:
        async with guarded(f"Reading {self.ref}", 30):
            return str(await self._call(DESCRIBE))

    async def dispose(self) -> None:
        await self.tab.frame_tree.release(self.session_id, self.object_id)
