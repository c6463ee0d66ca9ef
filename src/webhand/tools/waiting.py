"""Waiting for the page: text, an element, the URL, the network, a JavaScript condition, or time.

Actions already wait for their own effects; this is for what comes later (a search that
returns after a while, a toast that goes away). Every wait has a timeout.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from webhand.durations import Timeout
from webhand.engine.driver import WaitCondition
from webhand.errors import EvaluationDisabled, InvalidArgument
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool
from webhand.tools.interaction import act

_CONDITIONS = ("text", "text_gone", "selector", "url", "network_idle", "javascript", "time")


class WaitArgs(PageArgs):
    text: str | None = Field(None, description="Wait until this text is visible on the page.")
    text_gone: str | None = Field(None, description="Wait until this text is no longer visible.")
    selector: str | None = Field(None, description="Wait until an element matching this CSS selector is visible (or hidden, see state).")
    state: Literal["visible", "hidden"] = Field("visible", description="With selector: wait for visible or for hidden/gone.")
    url: str | None = Field(None, description="Wait until the URL contains this text, or matches it as a glob when it has *.")
    network_idle: bool = Field(False, description="Wait until no request has been in flight for 500 ms.")
    javascript: str | None = Field(None, description="Wait until this JavaScript expression is truthy, e.g. document.querySelectorAll('li').length > 3.")
    time: float | None = Field(None, gt=0, le=600, description="Just wait this many seconds (prefer a condition).")
    timeout: Timeout = None

    @model_validator(mode="after")
    def _one_condition(self) -> "WaitArgs":
        given = [name for name in _CONDITIONS if getattr(self, name) not in (None, False, "")]
        if len(given) != 1:
            raise ValueError("give exactly one condition: " + ", ".join(_CONDITIONS)
                             + (f" (got {', '.join(given)})" if given else ""))
        return self


def condition_of(args: WaitArgs) -> WaitCondition:
    if args.text:
        return WaitCondition("text", args.text)
    if args.text_gone:
        return WaitCondition("text_gone", args.text_gone)
    if args.selector:
        return WaitCondition("selector_visible" if args.state == "visible" else "selector_hidden", args.selector)
    if args.url:
        return WaitCondition("url", args.url)
    if args.network_idle:
        return WaitCondition("network_idle")
    if args.javascript:
        return WaitCondition("javascript", args.javascript)
    return WaitCondition("time", float(args.time or 0))


def awaited(condition: WaitCondition, response: Response) -> str:
    """What a wait waits for, in words (its progress reports)."""
    if condition.kind == "time":
        return f"{float(condition.value or 0):g} s to pass"
    value = response.page(str(condition.value), 100)
    return {"text": f"the text {value} to appear", "text_gone": f"the text {value} to disappear",
            "selector_visible": f"{value} to be visible", "selector_hidden": f"{value} to be hidden",
            "url": f"the URL to match {value}", "network_idle": "the network to be idle",
            "javascript": "the JavaScript condition to hold"}.get(condition.kind, condition.kind)


async def perform_wait(session: Session, args: WaitArgs) -> str:
    timeout = args.timeout or session.settings.timeout
    condition = condition_of(args)
    if condition.kind == "javascript" and not session.settings.evaluate_enabled:
        raise EvaluationDisabled("JavaScript conditions are disabled by configuration (evaluate_enabled = false).",
                                 "Wait for text, a selector or the URL instead.")
    if condition.kind == "time" and float(condition.value) > timeout:
        raise InvalidArgument(f"time ({condition.value:g} s) is longer than the timeout ({timeout:g} s).",
                              "Pass a timeout at least as long as time.")
    return await (await session.tab()).wait_for(condition, timeout=timeout)


@tool("browser_wait_for")
async def wait_for(session: Session, args: WaitArgs, response: Response) -> None:
    """Wait until text appears or disappears, an element is visible or hidden, the URL matches, the network is idle, a JavaScript condition holds, or some seconds pass. Give one condition."""
    response.waiting_for(awaited(condition_of(args), response))
    await act(session, response, perform_wait, args)
