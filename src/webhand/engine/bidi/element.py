"""One element of a Firefox tab (the Driver's ``Element``): the node a ref named, held by its
``sharedId``; input on it goes through ``input.performActions`` (a pointer moved to the element's
in-view centre, pressed, released; keys)."""

from __future__ import annotations

import base64
from typing import Any, Protocol

from webhand.engine import form_fields, settle
from webhand.engine.bidi import values
from webhand.engine.bidi.connection import BidiConnection, guarded
from webhand.engine.driver import MouseButton
from webhand.engine.page_scripts import CHECKED, FIELD_TEXT, FILL_PREPARE, KIND, MASK_TEXT, OPTIONS, SELECT
from webhand.engine.pointer import ACTIONABLE, AT_PRESS, LABEL, PICK_OPTION, press_refused, until_ready
from webhand.errors import EvaluationFailed, NotOnFirefox, RefNotFound, WebhandError

SNAPSHOT_AGAIN = "Call browser_snapshot and use the new refs."
_BUTTONS = {"left": 0, "middle": 1, "right": 2}
_PAUSE = {"type": "pause"}

#: Typing's watch of the page (its mutations but the typed field's own, the work its handlers schedule).
_WATCH_TYPING = "() => { (" + settle.WATCH_DOM + ")(true); }"

#: Fill's text, committed at once into the focused, selected field the way CDP's Input.insertText and
#: Playwright's fill put it: one beforeinput/input of type insertText, no key events (a page that
#: cancels keydown, as MiniWoB's spinner does, still gets the text). False: the field took none.
_INSERT_TEXT = "function (text) { return this.ownerDocument.execCommand('insertText', false, text); }"


class ElementTab(Protocol):
    """What an element needs of its tab (tab.py's ``BidiTab``): running code on the node, input,
    whether its document had input yet, and the settle's watch of the action."""

    connection: BidiConnection
    context_id: str
    tracker: settle.RequestTracker

    async def call(self, function: str, args: list[Any], *, doing: str, timeout: float, this: Any = None,
                   sandbox: bool = True, context: str | None = None) -> Any: ...

    async def perform(self, actions: list[dict[str, Any]], doing: str, timeout: float, *,
                      context: str | None = None, release: bool = True) -> None: ...

    def interacted(self, context_id: str) -> bool: ...


class BidiElement:
    """One node a ref named, held by its ``sharedId``."""

    def __init__(self, tab: ElementTab, ref: str, node: dict[str, Any], context_id: str) -> None:
        self.tab = tab
        self.ref = ref
        self.node = {"sharedId": node["sharedId"]}
        self.context_id = context_id  # the frame the node is in

    async def _call(self, function: str, *args: Any, timeout: float, doing: str) -> Any:
        try:
            return await self.tab.call(function, list(args), this=self.node, doing=doing, timeout=timeout,
                                       context=self.context_id)
        except WebhandError as error:
            if "no such node" in str(error).lower() or "stale" in str(error).lower():
                raise RefNotFound(f"The element {self.ref} is gone from the page.", SNAPSHOT_AGAIN) from None
            raise

    async def _until_ready(self, doing: str, timeout: float, function: str, *args: Any) -> dict[str, Any]:
        """Run ``function`` on the element until it no longer says to wait, each animation frame
        (pointer.until_ready)."""
        async def attempt(remaining: float) -> dict[str, Any]:
            return await self._call(function, *args, timeout=remaining, doing=doing) or {}

        async def next_frame(left: float) -> None:
            await self.tab.call("() => new Promise(r => requestAnimationFrame(() => r(true)))", [], doing=doing,
                                timeout=max(0.01, left), context=self.context_id)

        return await until_ready(doing, timeout, attempt, next_frame)

    async def click(self, *, button: MouseButton = "left", click_count: int = 1, modifiers: list[str] | None = None,
                    timeout: float) -> None:
        doing = f"Clicking {self.ref}"
        ready = await self._until_ready(doing, timeout, ACTIONABLE, True, True, button == "left")
        if ready.get("dropdown"):  # an option of a drop-down: the browser draws those, and a click on one chooses it
            await self._until_ready(doing, timeout, PICK_OPTION)
            return dict(await self._call(LABEL, timeout=timeout, doing=doing) or {})
        keys = [values.key_value(m) for m in modifiers or []]
        mouse = {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}}
        # The move first (the keys held from it on: each tick of the key source pairs with one of
        # the pointer's), then a look at what is under the pointer: the page may have swapped it as
        # the pointer arrived (pointer.AT_PRESS). The pointer stays where it is between the two
        # calls, and the press is at the same point.
        actions: list[dict[str, Any]] = [{**mouse, "actions": [_PAUSE] * max(0, len(keys) - 1) + [self._move()]}]
        if keys:
            actions.insert(0, {"type": "key", "id": "keyboard", "actions": [{"type": "keyDown", "value": k} for k in keys]})
        try:  # not released between the calls: a release would forget where the pointer is
            await self.tab.perform(actions, doing, timeout, context=self.context_id, release=False)
            landed = dict(await self._call(AT_PRESS, ready["x"], ready["y"], ready.get("label"), timeout=timeout,
                                           doing=doing) or {})
            if "label" not in landed:
                raise press_refused(doing, landed)
            pointer: list[dict[str, Any]] = []
            for _ in range(click_count):
                pointer += [{"type": "pointerDown", "button": _BUTTONS[button]}, {"type": "pointerUp", "button": _BUTTONS[button]}]
            await self.tab.perform([{**mouse, "actions": pointer}], doing, timeout, context=self.context_id,
                                   release=not keys)
        finally:
            if keys:
                await self.tab.perform([{"type": "key", "id": "keyboard",
                                         "actions": [{"type": "keyUp", "value": k} for k in reversed(keys)]}], doing, timeout)
        return landed["label"]

    def _move(self) -> dict[str, Any]:
        """A pointer move to the element's in-view centre: BiDi finds it (in any frame, scrolled)."""
        return {"type": "pointerMove", "x": 0, "y": 0, "origin": {"type": "element", "element": self.node}}

    async def hover(self, *, timeout: float) -> None:
        await self._until_ready(f"Hovering {self.ref}", timeout, ACTIONABLE, False, True, False)
        await self.tab.perform([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                                 "actions": [self._move()]}], f"Hovering {self.ref}", timeout, context=self.context_id)

    async def fill(self, text: str, *, timeout: float) -> None:
        doing = f"Typing into {self.ref}"
        await self._watch_typing(doing, timeout)
        state = await self._until_ready(doing, timeout, FILL_PREPARE, text)
        if state.get("done"):
            return
        if text and not self.tab.interacted(self.context_id):
            await self._press_first(doing, timeout)
            state = await self._until_ready(doing, timeout, FILL_PREPARE, text)  # the press placed the caret
        if text and await self._call(_INSERT_TEXT, text, timeout=timeout, doing=doing):
            return
        actions = values.text_actions(text) if text else values.chord_actions("Delete")  # keys: no insertText here
        await self.tab.perform([{"type": "key", "id": "keyboard", "actions": actions}], doing, timeout,
                               context=self.context_id)

    async def _press_first(self, doing: str, timeout: float) -> None:
        """A press on the field, before the first text committed into a document webhand gave no input
        yet: execCommand is no user input, and Firefox asks before unload only once the user has
        interacted with the page (a trusted key or pointer press; a modifier key is not one, nor
        is BiDi's ``userActivation``, which a navigation already gives). It counts even when the page
        cancels the press, which CDP's Input.insertText does too. Skipped when something covers the
        field's centre: the press would land there, and the text goes in without it."""
        spot = await self._call(ACTIONABLE, False, True, False, timeout=timeout, doing=doing) or {}
        if "x" in spot:
            await self.tab.perform([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                                     "actions": [self._move(), {"type": "pointerDown", "button": 0},
                                                 {"type": "pointerUp", "button": 0}]}], doing, timeout,
                                   context=self.context_id)

    async def _watch_typing(self, doing: str, timeout: float) -> None:
        """Start typing's watch (``settle.WATCH_DOM``) in the page's own realm, as FILL_PREPARE does
        on Chromium. FILL_PREPARE runs in the sandbox here, where the watch it starts wraps only the
        sandbox's view of the timers (an Xray's own properties), so a debounce the page's input
        handler schedules went unseen and typing replied before the page's save ran."""
        watch = self.tab.tracker.settling
        if watch is not None:
            await watch.begun()  # an action's watch sent before: ours replaces it, not the other way
        try:
            await self.tab.call(_WATCH_TYPING, [], doing=doing, timeout=timeout, sandbox=False, context=self.context_id)
        except EvaluationFailed:
            pass  # a page that broke it: its work goes unseen, the DOM-quiet window still holds

    async def mask_text(self, masked: bool, *, timeout: float) -> None:
        await self._call(f"function (on) {{ ({MASK_TEXT})(this)(on); }}", masked, timeout=timeout,
                         doing=f"Masking the text of {self.ref}")

    async def type(self, text: str, *, delay_ms: float, timeout: float) -> None:
        await self.focus(timeout=timeout)
        await self.tab.perform([{"type": "key", "id": "keyboard", "actions": values.text_actions(text)}],
                               f"Typing into {self.ref}", timeout + len(text) * delay_ms / 1000, context=self.context_id)

    async def press(self, key: str, *, timeout: float) -> None:
        await self.focus(timeout=timeout)
        await self.tab.perform([{"type": "key", "id": "keyboard", "actions": values.chord_actions(key)}],
                               f"Pressing {key} on {self.ref}", timeout, context=self.context_id)

    async def focus(self, *, timeout: float) -> None:
        await self._call("function () { this.focus(); }", timeout=timeout, doing=f"Focusing {self.ref}")

    async def kind(self) -> str:
        return str(await self._call(f"function () {{ return ({KIND})(this); }}", timeout=10, doing="Reading a field"))

    async def field_text(self) -> dict[str, Any] | None:
        return await self._call(f"function () {{ return ({FIELD_TEXT})(this); }}", timeout=10, doing="Reading a field")

    async def origin(self) -> str:
        return str(await self._call("function () { return this.ownerDocument.defaultView.origin; }", timeout=10,
                                    doing="Reading an element's origin"))

    async def describe(self) -> str:
        return str(await self._call("function () { return this.tagName.toLowerCase(); }", timeout=10,
                                    doing="Describing an element"))

    async def scroll_into_view(self, *, timeout: float) -> None:
        await self._call("function () { this.scrollIntoView({block: 'center', behavior: 'instant'}); }",
                         timeout=timeout, doing=f"Scrolling {self.ref} into view")

    async def set_input_files(self, paths: list[str], *, timeout: float) -> None:
        """Give files to the <input type=file> directly (``input.setFiles``; no file chooser)."""
        doing = f"Setting the files of {self.ref}"
        kind = await self._call("function () { return this.tagName === 'INPUT' ? (this.type || '').toLowerCase()"
                                " : this.tagName.toLowerCase(); }", timeout=timeout, doing=doing)
        if kind != "file":
            raise WebhandError(f"{doing} failed: it is not an <input type=file> (it is {kind}).",
                               "Call browser_snapshot and pick the file input.")
        async with guarded(doing, timeout):
            await self.tab.connection.send("input.setFiles", {"context": self.context_id, "element": self.node,
                                                              "files": paths})

    async def screenshot(self, *, timeout: float) -> bytes:
        async with guarded(f"Taking a screenshot of {self.ref}", timeout):
            shot = await self.tab.connection.send("browsingContext.captureScreenshot", {
                "context": self.tab.context_id, "clip": {"type": "element", "element": self.node}})
        return base64.b64decode(shot["data"])

    async def dispose(self) -> None:
        """Nothing to release: a sharedId holds no handle in the browser."""

    async def select_option(self, values: list[str], *, timeout: float) -> list[str]:
        doing = f"Selecting in {self.ref}"
        found = await self._call(f"function (wanted) {{ return ({OPTIONS})(this, wanted); }}", values,
                                 timeout=timeout, doing=doing)
        form_fields.refuse_options(self.ref, values, found)
        await self._until_ready(doing, timeout, ACTIONABLE, True, False, False)
        await self._call(SELECT, values, timeout=timeout, doing=doing)
        return values

    async def set_checked(self, checked: bool, *, timeout: float) -> None:
        doing = f"{'Checking' if checked else 'Unchecking'} {self.ref}"

        async def read() -> dict[str, Any]:
            return dict(await self._call(CHECKED, timeout=timeout, doing=doing) or {})

        await form_fields.set_checked(self.ref, checked, read, lambda: self.click(timeout=timeout))

    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str:
        left, top = await self._call("function (x, y) { this.scrollBy(x, y); return [this.scrollLeft, this.scrollTop]; }",
                                     x, y, timeout=timeout, doing=f"Scrolling inside {self.ref}")
        return f"{self.ref} is scrolled to x={left:g}, y={top:g}."

    async def drag_to(self, target: Any, *, timeout: float) -> None:
        """Press on this element, move onto ``target`` in steps, release: Firefox runs an HTML5 drag
        (dragstart, dragover, drop) from these pointer actions itself."""
        if not isinstance(target, BidiElement) or target.context_id != self.context_id:
            raise NotOnFirefox("Dragging onto an element of another frame")
        doing = f"Dragging {self.ref} onto {target.ref}"
        # An HTML5 drag (the element or an ancestor is draggable: links and images are by default)
        # starts from pointer actions but Firefox never drops it (w3c/webdriver-bidi#487): refuse it
        # rather than reply "Dragged" for a drop that did not happen. Drags made of pointer events work.
        if await self._call(_HTML5_DRAGGABLE, timeout=timeout, doing=doing):
            raise NotOnFirefox("Dragging an HTML5 draggable element", lacking="an HTML5 drag that WebDriver BiDi's "
                               "pointer actions start is never dropped (w3c/webdriver-bidi#487)")
        await self._until_ready(doing, timeout, ACTIONABLE, False, True, False)
        await target._until_ready(doing, timeout, ACTIONABLE, False, False, False)
        steps = [{"type": "pointerMove", "x": 0, "y": 0, "duration": 50,
                  "origin": {"type": "element", "element": target.node}} for _ in range(2)]
        await self.tab.perform([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                                 "actions": [self._move(), {"type": "pointerDown", "button": 0}, *steps,
                                             {"type": "pointerUp", "button": 0}]}], doing, timeout, context=self.context_id)


#: Whether a drag from this element is an HTML5 drag: it or an ancestor is draggable.
_HTML5_DRAGGABLE = """function () {
  for (let node = this; node && node.nodeType === 1; node = node.parentElement) {
    if (node.draggable) return true;
  }
  return false;
}"""
