"""Acting on the page: click, type, keys, hover, focus, select, check, scroll, drag.

Each action is a ``perform_*`` coroutine that acts and returns one line saying what it did; its
tool wraps it in ``act`` (observe before, then wait for the effects and say what changed).
browser_interact and browser_fill_form (batch.py) run the same coroutines, step by step, through
``ACTIONS``: one implementation of each action.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

from pydantic import Field, model_validator

from webhand.security import secret_store as secrets
from webhand.durations import Timeout
from webhand.engine.driver import Element
from webhand.engine.pointer import spoken_label
from webhand.response import Response
from webhand.session.changes import settle_changes
from webhand.session.session import Session
from webhand.tools.definition import ElementArgs, PageArgs, ToolArgs, tool

Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]
Perform = Callable[[Session, Any], Awaitable[str]]


def wait_for(session: Session, args: Any) -> float:
    """How long an action waits for its element to be actionable: the call's own ``timeout``, else
    ``action_timeout``."""
    return getattr(args, "timeout", None) or session.settings.action_timeout


@asynccontextmanager
async def element_of(session: Session, ref: str | None, selector: str | None,
                     timeout: float | None = None) -> AsyncIterator[Element]:
    element = await session.element(ref, selector, timeout)
    try:
        yield element
    finally:
        # Let go of the element meanwhile: nothing waits for it, and the reply need not either.
        letting_go = asyncio.ensure_future(element.dispose())
        _letting_go.add(letting_go)
        letting_go.add_done_callback(_let_go)


_letting_go: set[asyncio.Future[None]] = set()  # held until done (the loop keeps only weak references)


def _let_go(done: asyncio.Future[None]) -> None:
    _letting_go.discard(done)
    if not done.cancelled():
        done.exception()  # the page or browser went away first: nothing left to release


def target(args: Any) -> str:
    return args.ref or repr(args.selector)


#: What the reply calls each action ("No change seen after the click …").
ACTION_WORDS = {"click": "click", "type": "typing", "press_key": "key press", "hover": "hover", "focus": "focus",
                "select_option": "selection", "check": "check", "uncheck": "uncheck", "scroll": "scroll", "drag": "drag",
                "click_button": "mouse button"}


async def act(session: Session, response: Response, perform: Perform, args: ToolArgs, *, typing: bool = False,
              prepared: bool = False) -> None:
    """Run one action and reply with what it did, then what it changed (``typing``, ``prepared``:
    see ``begin_settle``)."""
    action = ACTION_WORDS.get(perform.__name__.removeprefix("perform_"))
    before = await settle_changes(session, response, typing=typing, action=action, prepared=prepared)
    if before.settling is not None and not (getattr(args, "ref", None) or getattr(args, "selector", None)):
        # A key press or scroll of the page runs no script of its own before its input, and its
        # key can reach the page before the settling's script (test_effects): wait for the settling.
        await before.settling.begun()
    response.add(await perform(session, args))


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 60 else f"{len(text)} characters"


# click -----------------------------------------------------------------------------------------
class ClickArgs(ElementArgs):
    button: Literal["left", "right", "middle"] = Field("left", description="Mouse button.")
    double_click: bool = Field(False, description="Double-click instead of a single click.")
    modifiers: list[Modifier] = Field(default_factory=list, description="Keys held during the click, e.g. [\"Shift\"].")


async def perform_click(session: Session, args: ClickArgs) -> str:
    async with element_of(session, args.ref, args.selector, wait_for(session, args)) as element:
        pressed = await element.click(button=args.button, click_count=2 if args.double_click else 1,
                                      modifiers=list(args.modifiers), timeout=wait_for(session, args))
    how = ("Double-clicked" if args.double_click else "Clicked") + (f" ({args.button} button)" if args.button != "left" else "")
    held = f" holding {'+'.join(args.modifiers)}" if args.modifiers else ""
    # What took the press, in page words bounded and quoted: the model learns what it clicked.
    return f"{how} {target(args)} ({spoken_label(pressed)}){held}."


@tool("browser_click", destructive=True)
async def click(session: Session, args: ClickArgs, response: Response) -> None:
    """Click an element (any button, double click, with modifier keys held)."""
    await act(session, response, perform_click, args)


# type ------------------------------------------------------------------------------------------
class TypeArgs(ElementArgs):
    text: str = Field(description="Text to type. Write <secret>NAME</secret> to type a configured secret.")
    clear: bool = Field(True, description="Replace the field's current text (else append).")
    submit: bool = Field(False, description="Press Enter afterwards.")
    slowly: bool = Field(False, description="Type key by key, for pages that react to each key.")


async def perform_type(session: Session, args: TypeArgs) -> str:
    timeout = wait_for(session, args)
    async with element_of(session, args.ref, args.selector, wait_for(session, args)) as element:
        text = args.text
        if secrets.mentions_secret(text):  # a secret goes only to a field of an origin it may be typed on
            origin = await element.origin()
            # A one-time code about to expire would fail the sign-in: wait (a few seconds at most)
            # for the clock to reach the next one, which is then typed.
            await asyncio.sleep(secrets.seconds_until_fresh_codes(text, session.settings.secrets_file))
            text = secrets.expand(text, session.settings.secrets_file, origin=origin)
        if args.slowly or not args.clear:
            if args.clear:
                await element.fill("", timeout=timeout)
            else:
                await element.focus(timeout=timeout)
            # each key is its own event
            await element.type(text, delay_ms=0, timeout=args.timeout or session.settings.timeout)
        else:
            await element.fill(text, timeout=timeout)
        # Read before Enter, which may clear the field (a search box) or leave the page.
        held = _what_the_field_holds(await element.field_text(), text, appended=not args.clear,
                                     secret=secrets.mentions_secret(args.text))
        await _mask(session, element, secrets.mentions_secret(args.text), cleared=args.clear, timeout=timeout)
        if args.submit:
            await element.press("Enter", timeout=timeout)
    return (f"Typed {_shown(args.text)} into {target(args)}" + held
            + (" and pressed Enter." if args.submit and not held else ", then pressed Enter." if args.submit else "."))


async def _mask(session: Session, element: Element, secret: bool, *, cleared: bool, timeout: float) -> None:
    """A field that holds a typed secret shows it as dots in every picture of the page, screenshots,
    video and the live view (``Element.mask_text``); replaced by text in clear, it shows it again."""
    tab = await session.tab()
    if secret:
        await element.mask_text(True, timeout=timeout)
        session.secret_tabs.add(tab.index)
    elif cleared and tab.index in session.secret_tabs:
        await element.mask_text(False, timeout=timeout)


def _what_the_field_holds(field: dict[str, Any] | None, typed: str, *, appended: bool, secret: bool) -> str:
    """"" when the field holds what was typed (or is no field that holds text); else what it holds,
    said after "Typed …": a page may refuse text (cancel its input) or reformat it (a phone mask),
    the browser may cut it (maxlength), and the model must not believe the typed text is there.
    A password field's text, and what a field holds after a secret was typed, is never quoted."""
    if not field:
        return ""
    holds = str(field.get("text", "")).replace("\xa0", " ")
    if holds.endswith("\n") and not typed.endswith("\n"):
        holds = holds[:-1]  # an editable element's innerText ends with its last line break
    if holds.endswith(typed) if appended else holds == typed:
        return ""
    if not holds.strip():
        return ", but the field is empty afterwards (the text was refused or removed)"
    if field.get("hidden") or secret:
        return f", but the field holds other text afterwards ({len(holds)} characters)"
    return f", but the field holds {_shown(holds)} afterwards"


@tool("browser_type", destructive=True)
async def type_text(session: Session, args: TypeArgs, response: Response) -> None:
    """Type text into an editable element (replacing its text unless clear=false)."""
    # Enter usually submits: that reply waits the full quiet window, like any other key press.
    # Filling at once starts the page's settling itself (FILL_PREPARE); key by key, or after the old
    # text, it needs its own.
    await act(session, response, perform_type, args, typing=not args.submit, prepared=args.clear and not args.slowly)


# keys ------------------------------------------------------------------------------------------
class PressKeyArgs(PageArgs):
    key: str = Field(description="Key or chord: Enter, Tab, Escape, ArrowDown, a, Control+A, Shift+Tab.")
    ref: str | None = Field(None, description="Element ref to press it on; omit for whatever has focus.")
    selector: str | None = Field(None, description="CSS selector of the element, instead of a ref.")
    timeout: Timeout = None

    @model_validator(mode="after")
    def _at_most_one(self) -> "PressKeyArgs":
        if self.ref and self.selector:
            raise ValueError("give `ref` or `selector`, not both")
        return self


async def perform_press_key(session: Session, args: PressKeyArgs) -> str:
    timeout = wait_for(session, args)
    if args.ref or args.selector:
        async with element_of(session, args.ref, args.selector, wait_for(session, args)) as element:
            await element.press(args.key, timeout=timeout)
        return f"Pressed {args.key} on {target(args)}."
    await (await session.tab()).keyboard.press(args.key, timeout=timeout)
    return f"Pressed {args.key}."


@tool("browser_press_key", destructive=True)
async def press_key(session: Session, args: PressKeyArgs, response: Response) -> None:
    """Press a key or chord on an element, or on the page (whatever has focus)."""
    await act(session, response, perform_press_key, args)


# hover, focus ----------------------------------------------------------------------------------
async def perform_hover(session: Session, args: ElementArgs) -> str:
    async with element_of(session, args.ref, args.selector, wait_for(session, args)) as element:
        await element.hover(timeout=wait_for(session, args))
    return f"Hovered over {target(args)}."


@tool("browser_hover")
async def hover(session: Session, args: ElementArgs, response: Response) -> None:
    """Move the mouse over an element (opens hover menus and tooltips)."""
    await act(session, response, perform_hover, args)


async def perform_focus(session: Session, args: ElementArgs) -> str:
    async with element_of(session, args.ref, args.selector, wait_for(session, args)) as element:
        await element.focus(timeout=wait_for(session, args))
    return f"Focused {target(args)}."


@tool("browser_focus", capability="extra")
async def focus(session: Session, args: ElementArgs, response: Response) -> None:
    """Give an element keyboard focus."""
    await act(session, response, perform_focus, args)


# select, check ---------------------------------------------------------------------------------
class SelectArgs(ElementArgs):
    values: list[str] = Field(min_length=1, description="Options to select, each by its value or its visible label.")


async def perform_select_option(session: Session, args: SelectArgs) -> str:
    async with element_of(session, args.ref, args.selector, wait_for(session, args)) as element:
        chosen = await element.select_option(list(args.values), timeout=wait_for(session, args))
    return f"Selected {', '.join(map(repr, chosen))} in {target(args)}."


@tool("browser_select_option", destructive=True)
async def select_option(session: Session, args: SelectArgs, response: Response) -> None:
    """Select one or more options of a <select>, by value or label."""
    await act(session, response, perform_select_option, args)


async def _set_checked(session: Session, args: ElementArgs, checked: bool) -> str:
    async with element_of(session, args.ref, args.selector, wait_for(session, args)) as element:
        await element.set_checked(checked, timeout=wait_for(session, args))
    return f"{target(args)} is now {'checked' if checked else 'unchecked'}."


async def perform_check(session: Session, args: ElementArgs) -> str:
    return await _set_checked(session, args, True)


async def perform_uncheck(session: Session, args: ElementArgs) -> str:
    return await _set_checked(session, args, False)


@tool("browser_check", capability="extra", destructive=True)
async def check(session: Session, args: ElementArgs, response: Response) -> None:
    """Check a checkbox or radio button (nothing happens if it already is)."""
    await act(session, response, perform_check, args)


@tool("browser_uncheck", capability="extra", destructive=True)
async def uncheck(session: Session, args: ElementArgs, response: Response) -> None:
    """Uncheck a checkbox (nothing happens if it already is)."""
    await act(session, response, perform_uncheck, args)


# scroll, drag ----------------------------------------------------------------------------------
class ScrollArgs(PageArgs):
    x: float = Field(0, description="Pixels to scroll right (negative: left).")
    y: float = Field(0, description="Pixels to scroll down (negative: up).")
    ref: str | None = Field(None, description="Element ref: scroll it into view, or scroll inside it by x/y.")
    selector: str | None = Field(None, description="CSS selector of the element, instead of a ref.")
    timeout: Timeout = None

    @model_validator(mode="after")
    def _something_to_do(self) -> "ScrollArgs":
        if self.ref and self.selector:
            raise ValueError("give `ref` or `selector`, not both")
        if not (self.ref or self.selector) and not (self.x or self.y):
            raise ValueError("give x and/or y pixels to scroll the page, or an element to scroll into view")
        return self


async def perform_scroll(session: Session, args: ScrollArgs) -> str:
    timeout = wait_for(session, args)
    if args.ref or args.selector:
        async with element_of(session, args.ref, args.selector, wait_for(session, args)) as element:
            if args.x or args.y:
                return await element.scroll_by(args.x, args.y, timeout=timeout)
            await element.scroll_into_view(timeout=timeout)
        return f"Scrolled {target(args)} into view."
    return await (await session.tab()).scroll_by(args.x, args.y, timeout=timeout)


@tool("browser_scroll", capability="extra")
async def scroll(session: Session, args: ScrollArgs, response: Response) -> None:
    """Scroll the page by x/y pixels, scroll an element into view, or scroll inside an element."""
    await act(session, response, perform_scroll, args)


class DragArgs(ElementArgs):
    to_ref: str | None = Field(None, description="Ref of the element to drop onto.")
    to_selector: str | None = Field(None, description="CSS selector of the element to drop onto, instead of to_ref.")

    @model_validator(mode="after")
    def _one_drop_target(self) -> "DragArgs":
        if bool(self.to_ref) == bool(self.to_selector):
            raise ValueError("give exactly one of `to_ref` and `to_selector`")
        return self


async def perform_drag(session: Session, args: DragArgs) -> str:
    timeout = wait_for(session, args)
    async with element_of(session, args.ref, args.selector, wait_for(session, args)) as source:
        async with element_of(session, args.to_ref, args.to_selector, wait_for(session, args)) as drop:
            await source.drag_to(drop, timeout=timeout)
    return f"Dragged {target(args)} onto {args.to_ref or repr(args.to_selector)}."


@tool("browser_drag", capability="extra", destructive=True)
async def drag(session: Session, args: DragArgs, response: Response) -> None:
    """Drag an element (ref/selector) and drop it onto another (to_ref/to_selector)."""
    await act(session, response, perform_drag, args)


#: The actions browser_interact can run: name -> (arguments model, implementation).
ACTIONS: dict[str, tuple[type[ToolArgs], Perform]] = {
    "click": (ClickArgs, perform_click),
    "type": (TypeArgs, perform_type),
    "press_key": (PressKeyArgs, perform_press_key),
    "hover": (ElementArgs, perform_hover),
    "focus": (ElementArgs, perform_focus),
    "select_option": (SelectArgs, perform_select_option),
    "check": (ElementArgs, perform_check),
    "uncheck": (ElementArgs, perform_uncheck),
    "scroll": (ScrollArgs, perform_scroll),
    "drag": (DragArgs, perform_drag),
}
