"""Where a pointer action lands, the same for the three drivers: the element scrolled into view inside
every box that clips it, what sits at the point a click goes to, and what an error about it says.

A click goes to the centre of the element's first box. Before that point is hit-tested, it must
show through every scrolled or clipping ancestor (a list box's own scroller included) and the
viewport; when it does not, the element is scrolled into the middle of each (``scrollIntoView``
scrolls every ancestor, the frames above included). What is found there then counts as covering
the element only when it is not part of the element's own widget, decided by DOM relations:

- the element itself, something inside it, or one of its labels: the click is the element's;
- otherwise, the nearest element holding both the element and what was hit is its widget's root
  when it is not the page (``html``/``body``), nothing fixed or sticky lies between it and the hit
  (overlays, headers, banners are), and it holds no focusable control but the element (and
  controls of the element's own role: a range slider's second thumb). A slider's track drawn over
  its thumb, or a thumb that lets the pointer through to its root, is such a widget: the click
  goes there, as a person's would.

A real cover is told by what it is, so that the advice fits: a dialog or overlay (close it), a
fixed or sticky bar (it stays as the page scrolls), the element's own container that takes the
click it lets through, or something else (look at it in a snapshot, or use keys).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from webhand.engine.js import compose, source
from webhand.errors import ActionTimeout, ElementNotActionable, InvalidArgument, WebhandError

# A JavaScript expression: an object of helpers, each taking the element the action is on.
_HELPERS = source("pointer_helpers.js")

# `this` is the element. Returns {x, y, label} (its click point, in its frame's viewport; its role and
# name, with needPointer) when it can be
# acted on, {dropdown: true} for an option of a drop-down when `optionClick` (it is chosen, not
# clicked: PICK_OPTION), {wait: reason, by?, kind?} when not yet, or {error: reason} when it
# never will be. Run by the raw-CDP and Firefox drivers.
ACTIONABLE = compose("actionable.js", POINTER_HELPERS=_HELPERS)

# `this` is the element a pointer press is for, the pointer now at (x, y) of its frame's viewport
# (with `fresh`: at its click point now, while it is in the page), `aimed` its label (LABEL) when the action started. Run after the
# pointer moved there and just before the press, because a page can swap what is under the
# pointer when it arrives (mousemove, mouseover, pointerenter): {label} when the press lands on the
# element (inside it, on its label or another part of its widget) and it is still what it was;
# {moved: what is there now} or {renamed: the element's label now} when not.
AT_PRESS = compose("at_press.js", POINTER_HELPERS=_HELPERS)

# `this` is an element: its role and name (for AT_PRESS and the reply).
LABEL = "function () { const P = " + _HELPERS + "; return P.label(this); }"

# Scrolls the element into the middle of every scroller above it, the frames above included.
CENTRE = "function () { this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'}); }"

# Scrolls the element into view inside every scroller that hides it; its point as CHECK gives it.
SCROLL_INTO_VIEW = compose("scroll_into_view.js", POINTER_HELPERS=_HELPERS)

# `this` is an <option>: select it the way Playwright's selectOption does (its select's input and
# change events follow), once the select is visible and neither is disabled.
PICK_OPTION = compose("pick_option.js", POINTER_HELPERS=_HELPERS)

# For the Playwright driver, before its own click: "dropdown" (an option of a drop-down), "widget"
# (the click point falls on another part of the element's own widget or on its label, which
# Playwright's hit test refuses: the click is forced) or "click" (Playwright's own click: the
# element is clear, not ready yet or covered, and Playwright waits and says why). It scrolls the
# element into view inside every scroller first, as the CDP driver's checks do.
PREPARE = compose("prepare_click.js", POINTER_HELPERS=_HELPERS)

# What covers the element at its click point now, for the error once Playwright gave up: {by, kind} or null.
COVER = "e => { const P = " + _HELPERS + "; const [x, y] = P.point(e); return P.cover(e, x, y); }"


def helpers() -> str:
    """The helpers' JavaScript expression, for scripts that build on them (the CDP checks)."""
    return _HELPERS


def covered(doing: str, cover: dict[str, Any]) -> ElementNotActionable:
    """The error for an element something else sits on, with advice that fits what it is."""
    by, kind = str(cover.get("by", ""))[:160], cover.get("kind")
    if kind == "dialog":
        return ElementNotActionable(f"{doing} failed: the element is covered by a dialog or overlay, {by}.",
                                    "Close it first (its close or cancel button, or browser_press_key Escape), then try again.")
    if kind == "pinned":
        return ElementNotActionable(
            f"{doing} failed: the element is covered by {by}, which stays in place when the page scrolls (a header, bar or banner).",
            "Dismiss it if it is a banner, or scroll the page (browser_scroll) so that the element is clear of it, then try again.")
    if kind == "container":
        return ElementNotActionable(f"{doing} failed: the element lets the pointer through to {by} around it.",
                                    "Call browser_snapshot to find the control that takes the click, or use keys on the element "
                                    "(browser_press_key with its ref).")
    return ElementNotActionable(f"{doing} failed: the element is covered by {by}.",
                                "Call browser_snapshot to see what is on top of it (click that if it is what you meant), "
                                "or use keys on the element (browser_press_key with its ref).")


def press_refused(doing: str, state: dict[str, Any]) -> ElementNotActionable:
    """The error for a press AT_PRESS stopped: what is under the pointer now, in bounded page words."""
    if "renamed" in state:
        what = f"the element changed to {spoken_label(state['renamed'])} when the pointer reached it"
    else:
        what = (f"when the pointer reached it, the page put {spoken_label(state.get('moved'))} there instead"
                if state.get("moved") else "when the pointer reached it, the element left the point")
    return ElementNotActionable(f"{doing} failed: {what}. Nothing was pressed.",
                                "Call browser_snapshot to see the page as it is now, then act on the new refs.")


# A name that spells a ref ("Pay [e9]") reads as "Pay (e9)", as in the snapshot: a page cannot plant refs.
_REF_IN_TEXT = re.compile(r"\[((?:f\d+)?e\d+)\]")


def quoted_name(name: str) -> str:
    """A page-made name as a reply quotes it: JSON-quoted (it cannot forge a line), a ref it spells
    written ``(e9)`` as the snapshot does (it cannot plant a ref)."""
    return json.dumps(_REF_IN_TEXT.sub(r"(\1)", name), ensure_ascii=False)


def spoken_label(label: Any) -> str:
    """``button "Cancel"``: an element's role and its name as page text (bounded, quoted, one line)."""
    if not isinstance(label, dict):
        return "an element"
    role = re.sub(r"[^a-z0-9-]", "", str(label.get("role") or "element").lower())[:30] or "element"
    name = " ".join(str(label.get("name") or "").split())[:100]
    return f"{role} {quoted_name(name)}" if name else role


WHY = {"not visible": "the element is not visible", "not enabled": "the element is disabled",
       "not editable": "the element is not editable", "not stable": "the element kept moving",
       "removed": "the element was removed from the page", "not a text field": "the element is not a text field",
       "out of view": "the element stayed out of view after scrolling to it"}
_SNAPSHOT_AGAIN = "Call browser_snapshot and use the new refs."


def not_actionable(doing: str, state: dict[str, Any], timeout: float | None = None) -> WebhandError:
    """The error for an element an action waited for in vain: the page script's last reason to wait
    (or its refusal), in the same words whatever the driver."""
    reason = state.get("error") or state.get("wait") or ""
    if reason == "covered":
        return covered(doing, state)
    if reason == "not a number":
        return InvalidArgument(f"{doing} failed: the field takes a number.", "Call again with a number.")
    if reason == "malformed":
        return InvalidArgument(f"{doing} failed: {state.get('detail', 'the value does not fit the field')}.",
                               "Call again with a value of the field's format.")
    if reason in WHY:
        hint = _SNAPSHOT_AGAIN if reason == "removed" else \
            "Call browser_snapshot to see its state, then choose another element or wait."
        return ElementNotActionable(f"{doing} failed: {WHY[reason]}.", hint)
    seconds = f" within {timeout:g} s" if timeout else ""
    return ActionTimeout(f"{doing} did not finish{seconds}.",
                         "Call browser_snapshot to see the page, then retry with a larger timeout or another element.")


async def until_ready(doing: str, timeout: float, attempt: Callable[[float], Awaitable[dict[str, Any]]],
                      pause: Callable[[float], Awaitable[None]]) -> dict[str, Any]:
    """Ask the page script whether the element is ready (``attempt``, given the seconds left) until
    it no longer says to wait, pausing between asks (``pause``: until a page event, an animation
    frame), capped by ``timeout``; its refusal, or its last reason to wait, is the error
    (``not_actionable``). An ``ActionTimeout`` from either ends the wait as the cap does."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: dict[str, Any] = {}
    while (remaining := deadline - loop.time()) > 0:
        try:
            last = await attempt(remaining)
        except ActionTimeout:
            break
        if "error" in last:
            raise not_actionable(doing, last)
        if "wait" not in last:
            return last
        try:
            await pause(deadline - loop.time())
        except ActionTimeout:
            break
    raise not_actionable(doing, last, timeout)


