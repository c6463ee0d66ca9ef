"""Acting on elements: click and type. Each reply says what the action changed."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from webhand.response import Response
from webhand.session.changes import observe, report
from webhand.session.session import Session
from webhand.tools.definition import ElementArgs, tool

Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]


class ClickArgs(ElementArgs):
    button: Literal["left", "right", "middle"] = Field("left", description="Mouse button.")
    double_click: bool = Field(False, description="Double-click instead of a single click.")
    modifiers: list[Modifier] = Field(default_factory=list, description="Keys held during the click.")


@tool("browser_click", destructive=True)
async def click(session: Session, args: ClickArgs, response: Response) -> None:
    """Click an element."""
    before = await observe(session)
    element = await session.element(args.ref, args.selector)
    try:
        await element.click(button=args.button, click_count=2 if args.double_click else 1,
                            modifiers=list(args.modifiers), timeout=session.settings.action_timeout)
    finally:
        await element.dispose()
    response.add(f"{'Double-clicked' if args.double_click else 'Clicked'} {args.ref or args.selector}.")
    await report(session, before, response)


class TypeArgs(ElementArgs):
    text: str = Field(description="Text to type.")
    clear: bool = Field(True, description="Replace the field's current text (else append).")
    submit: bool = Field(False, description="Press Enter afterwards.")
    slowly: bool = Field(False, description="Type key by key, for pages that react to each key.")


@tool("browser_type", destructive=True)
async def type_text(session: Session, args: TypeArgs, response: Response) -> None:
    """Type text into an editable element."""
    before = await observe(session)
    element = await session.element(args.ref, args.selector)
    timeout = session.settings.action_timeout
    try:
        if args.slowly or not args.clear:
            if args.clear:
                await element.fill("", timeout=timeout)
            else:
                await element.focus(timeout=timeout)
            await element.type(args.text, delay_ms=30 if args.slowly else 0, timeout=session.settings.timeout)
        else:
            await element.fill(args.text, timeout=timeout)
        if args.submit:
            await element.press("Enter", timeout=timeout)
    finally:
        await element.dispose()
    response.add(f"Typed {len(args.text)} characters into {args.ref or args.selector}" + (" and pressed Enter." if args.submit else "."))
    await report(session, before, response)
