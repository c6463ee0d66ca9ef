"""One element a ref (or selector) named, as a Playwright ElementHandle: exact identity."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import CDPSession, ElementHandle
from playwright.async_api import Error as PWError

from webhand.engine.page_scripts import FIELD_TEXT, FILL_PREPARE, KIND, MASK_TEXT, OPTIONS
from webhand.engine.pointer import AT_PRESS, COVER, LABEL, PREPARE, covered, helpers, not_actionable, press_refused
from webhand.engine.pw.errors import SNAPSHOT_AGAIN, translate, translated, unknown_key
from webhand.errors import ElementNotActionable, InvalidArgument, WebhandError


_FILL_PREPARE = f"(e, value) => ({FILL_PREPARE}).call(e, value)"
_LABEL = f"e => ({LABEL}).call(e)"
# Where the pointer will be on the element (its click point, in its frame) and what it is.
_AIM = f"e => {{ const P = {helpers()}; return {{label: P.label(e), point: P.point(e)}}; }}"
_AT_PRESS = f"(e, [x, y, aimed, fresh]) => ({AT_PRESS}).call(e, x, y, aimed, fresh)"


class PlaywrightElement:
    def __init__(self, handle: ElementHandle, ref: str,
                 session: Callable[[], Awaitable[CDPSession]] | None = None) -> None:
        self.handle = handle
        self.ref = ref
        self._session = session  # the tab's CDP session, for typing in one message

    async def click(self, *, button: str = "left", click_count: int = 1, modifiers: list[str] | None = None,
                    timeout: float) -> dict[str, str]:
        doing = f"Clicking {self.ref}"
        async with self._pointer_errors(doing, timeout):
            how = await self.handle.evaluate(PREPARE)
            if how == "dropdown" and button == "left":
                # An option of a drop-down: the browser draws those, and a click on one chooses it.
                # Playwright's click waits for the option to be visible, which it never is.
                select = (await self.handle.evaluate_handle("e => e.closest('select')")).as_element()
                assert select is not None  # PREPARE found it
                try:
                    await select.select_option(element=self.handle, timeout=timeout * 1000)
                finally:
                    await select.dispose()
                return await self.handle.evaluate(_LABEL)
            await self._wait_enabled(doing, timeout)
            frame = await self.handle.owner_frame()
            if frame is None:
                raise ElementNotActionable(f"{doing} failed: the element was removed from the page.", SNAPSHOT_AGAIN)
            aim = await self.handle.evaluate(_AIM)
            aimed, (x, y) = aim["label"], aim["point"]
            # Playwright's click moves and presses in one go; the page may swap what is under the
            # pointer as it arrives (pointer.AT_PRESS). So: Playwright's hover (its waits and its
            # hit test), a look at what is under the pointer, and the press where it is.
            keyboard, mouse = frame.page.keyboard, frame.page.mouse
            held: list[str] = []
            try:
                for key in modifiers or []:
                    await keyboard.down(key)
                    held.append(key)
                try:
                    await self.handle.hover(force=how == "widget", timeout=timeout * 1000)
                except PWError:
                    # Playwright's hit test refused: the element was swapped away as the pointer came
                    # (or relabelled), or something covers it (its error says what, _pointer_errors).
                    landed = await self.handle.evaluate(_AT_PRESS, [x, y, aimed, False])
                    if landed.get("gone") or "renamed" in landed:
                        raise press_refused(doing, landed) from None
                    raise
                # Its click point now: Playwright may have scrolled it clear of a sticky header.
                landed = await self.handle.evaluate(_AT_PRESS, [x, y, aimed, True])
                if "label" not in landed:
                    raise press_refused(doing, landed)
                for count in range(1, click_count + 1):
                    await mouse.down(button=button, click_count=count)  # type: ignore[arg-type]
                    await mouse.up(button=button, click_count=count)  # type: ignore[arg-type]
            finally:
                for key in reversed(held):
                    await keyboard.up(key)
        return landed["label"]

    async def _wait_enabled(self, doing: str, timeout: float) -> None:
        """Wait until the element is enabled, as Playwright's click does before it moves."""
        try:
            await self.handle.wait_for_element_state("enabled", timeout=timeout * 1000)
        except PWError as error:
            if "timeout" in str(error).lower().splitlines()[0]:
                raise not_actionable(doing, {"wait": "not enabled"}) from None
            raise

    @asynccontextmanager
    async def _pointer_errors(self, doing: str, timeout: float) -> AsyncIterator[None]:
        """Playwright's errors as webhand's; for an element something covers, what covers it is
        looked at, so that the error says what it is and what to do (pointer.covered)."""
        try:
            yield
        except PWError as error:
            if "intercepts pointer events" in str(error):
                try:
                    cover = await self.handle.evaluate(COVER)
                except PWError:
                    cover = None
                if cover:
                    raise covered(doing, cover) from None
            raise translate(error, doing, timeout) from None

    async def fill(self, text: str, *, timeout: float) -> None:
        async with translated(f"Typing into {self.ref}", timeout):
            if text and self._session is not None and await asyncio.wait_for(self._fill_at_once(text), timeout):
                return
            await self.handle.fill(text, timeout=timeout * 1000)

    async def _fill_at_once(self, text: str) -> bool:
        """A field ready to take text: one script focuses it and selects its text, one CDP message
        types it, as Playwright's own fill ends, without its retry loop's round trips through Node
        (~10 ms of a reply). False when the field is not ready or not a text field: Playwright's
        fill then waits for it, or says why it cannot."""
        state = await self.handle.evaluate(_FILL_PREPARE, text)
        if state.get("done"):
            return True  # a date, color or range input took its value directly
        if state:
            return False
        cdp_session = await self._session()  # type: ignore[misc]
        await cdp_session.send("Input.insertText", {"text": text})
        return True

    async def mask_text(self, masked: bool, *, timeout: float) -> None:
        async with translated(f"Masking the text of {self.ref}", timeout):
            await asyncio.wait_for(self.handle.evaluate(f"(e, on) => ({MASK_TEXT})(e)(on)", masked), timeout)

    async def type(self, text: str, *, delay_ms: float, timeout: float) -> None:
        async with translated(f"Typing into {self.ref}", timeout):
            await self.handle.type(text, delay=delay_ms, timeout=timeout * 1000)

    async def press(self, key: str, *, timeout: float) -> None:
        try:
            await self.handle.press(key, timeout=timeout * 1000)
        except PWError as error:
            raise unknown_key(key, error) or translate(error, f"Pressing {key} on {self.ref}", timeout) from None

    async def hover(self, *, timeout: float) -> None:
        async with self._pointer_errors(f"Hovering {self.ref}", timeout):
            await self._hover(timeout)

    async def _hover(self, timeout: float) -> None:
        # "widget": the pointer lands on another part of the element's own widget (pointer.PREPARE).
        force = await self.handle.evaluate(PREPARE) == "widget"
        await self.handle.hover(force=force, timeout=timeout * 1000)

    async def focus(self, *, timeout: float) -> None:
        async with translated(f"Focusing {self.ref}", timeout):
            await self.handle.focus()

    async def select_option(self, values: list[str], *, timeout: float) -> list[str]:
        async with translated(f"Selecting in {self.ref}", timeout):
            found = await self.handle.evaluate(OPTIONS, values)
            if found["not_select"]:
                raise ElementNotActionable(f"{self.ref} is not a select (it is {found['not_select']}).",
                                           "Click it to open it, then click the option; or call browser_snapshot to find the select.")
            listed = ", ".join(found["options"][:30]) + (" …" if len(found["options"]) > 30 else "")
            if found["missing"]:
                raise InvalidArgument(f"{self.ref} has no option {', '.join(map(repr, found['missing']))}; its options are: {listed}.",
                                      "Call again with one of those values or labels.")
            if len(values) > 1 and not found["multiple"]:
                raise InvalidArgument(f"{self.ref} takes one option, not {len(values)}.", "Call again with one value.")
            await self.handle.select_option(values, timeout=timeout * 1000)
        return values

    async def set_checked(self, checked: bool, *, timeout: float) -> None:
        doing = f"{'Checking' if checked else 'Unchecking'} {self.ref}"
        try:
            async with self._pointer_errors(doing, timeout):
                force = await self.handle.evaluate(PREPARE) == "widget"  # as for a click
                await self.handle.set_checked(checked, force=force, timeout=timeout * 1000)
        except WebhandError as error:
            if "not a checkbox" in str(error).lower():
                raise ElementNotActionable(f"{doing} failed: it is not a checkbox or radio button.",
                                           "Call browser_snapshot and pick a checkbox.") from None
            if "cannot uncheck" in str(error).lower():
                raise ElementNotActionable(f"{doing} failed: a radio button cannot be unchecked.",
                                           "Check another radio button of its group instead.") from None
            raise

    async def scroll_into_view(self, *, timeout: float) -> None:
        async with translated(f"Scrolling {self.ref} into view", timeout):
            await self.handle.scroll_into_view_if_needed(timeout=timeout * 1000)

    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str:
        async with translated(f"Scrolling inside {self.ref}", timeout):
            left, top = await self.handle.evaluate("(e, [x, y]) => { e.scrollBy(x, y); return [e.scrollLeft, e.scrollTop]; }", [x, y])
        return f"{self.ref} is scrolled to x={left:g}, y={top:g}."

    async def drag_to(self, target: "PlaywrightElement", *, timeout: float) -> None:  # type: ignore[override]
        """Press on this element, move onto ``target`` in steps, release: mouse drags and HTML5 drag and drop."""
        async with self._pointer_errors(f"Dragging {self.ref} onto {target.ref}", timeout):
            await self._hover(timeout)
            frame = await self.handle.owner_frame()
            if frame is None:
                raise ElementNotActionable(f"{self.ref} was removed from the page.", "Call browser_snapshot and use the new refs.")
            mouse = frame.page.mouse
            await mouse.down()
            try:
                await target.handle.scroll_into_view_if_needed(timeout=timeout * 1000)
                box = await target.handle.bounding_box()
                if box is None:
                    raise ElementNotActionable(f"Dragging onto {target.ref} failed: it is not visible.",
                                               "Call browser_snapshot to find a visible drop target.")
                await mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=5)
            finally:
                await mouse.up()

    async def kind(self) -> str:
        async with translated(f"Reading {self.ref}"):
            return await self.handle.evaluate(KIND)

    async def field_text(self) -> dict[str, Any] | None:
        async with translated(f"Reading {self.ref}"):
            return await self.handle.evaluate(FIELD_TEXT)

    async def origin(self) -> str:
        """The origin of the document holding the element, from the browser's frame tree (page
        JavaScript can redefine ``window.origin``, not this); "null" for an opaque origin."""
        async with translated(f"Reading {self.ref}"):
            frame = await self.handle.owner_frame()
        while frame is not None:
            parts = urlsplit(frame.url.removeprefix("blob:"))
            if parts.scheme == "about":  # about:blank and about:srcdoc frames share their parent's origin
                frame = frame.parent_frame
                continue
            if parts.scheme in ("http", "https") and parts.hostname:
                host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
                return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")
            break
        return "null"

    async def set_input_files(self, paths: list[str], *, timeout: float) -> None:
        """Give files to the <input type=file> directly (no file chooser; works on hidden inputs too)."""
        async with translated(f"Setting the files of {self.ref}", timeout):
            await self.handle.set_input_files(paths, timeout=timeout * 1000)

    async def screenshot(self, *, timeout: float) -> bytes:
        async with translated(f"Screenshot of {self.ref}", timeout):
            return await self.handle.screenshot(timeout=timeout * 1000, type="png")

    async def describe(self) -> str:
        """A short human label (tag, id, text) for replies and errors."""
        async with translated(f"Reading {self.ref}"):
            return await self.handle.evaluate(
                "e => { const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').trim().slice(0, 40);"
                " return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (t ? ' \"' + t + '\"' : ''); }")

    async def dispose(self) -> None:
        try:
            await self.handle.dispose()
        except PWError:
            pass

