"""Choosing options and checking boxes, the part every driver shares: what the page scripts
(page_scripts.OPTIONS, CHECKED) found, turned into the same errors and the same click-then-verify
rule. Each driver runs the scripts on its element and clicks it its own way."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from webhand.errors import ElementNotActionable, InvalidArgument


def refuse_options(ref: str, values: list[str], found: dict[str, Any]) -> None:
    """Raise what is wrong with choosing ``values`` in the element OPTIONS described, if anything."""
    if found["not_select"]:
        raise ElementNotActionable(f"{ref} is not a select (it is {found['not_select']}).",
                                   "Click it to open it, then click the option; or call browser_snapshot to find the select.")
    listed = ", ".join(found["options"][:30]) + (" …" if len(found["options"]) > 30 else "")
    if found["missing"]:
        raise InvalidArgument(f"{ref} has no option {', '.join(map(repr, found['missing']))}; its options are: {listed}.",
                              "Call again with one of those values or labels.")
    if len(values) > 1 and not found["multiple"]:
        raise InvalidArgument(f"{ref} takes one option, not {len(values)}.", "Call again with one value.")


async def set_checked(ref: str, checked: bool, read: Callable[[], Awaitable[dict[str, Any]]],
                      click: Callable[[], Awaitable[Any]]) -> None:
    """Click the box (``read`` runs CHECKED on it) when its state is not ``checked``, then verify."""
    doing = f"{'Checking' if checked else 'Unchecking'} {ref}"
    state = await read()
    if "error" in state:
        raise ElementNotActionable(f"{doing} failed: it is not a checkbox or radio button.",
                                   "Call browser_snapshot and pick a checkbox.")
    if state["state"] == checked:
        return
    if state["radio"] and not checked:
        raise ElementNotActionable(f"{doing} failed: a radio button cannot be unchecked.",
                                   "Check another radio button of its group instead.")
    await click()
    after = await read()
    if after.get("state") != checked:
        raise ElementNotActionable(f"{doing} failed: clicking it did not change its state.",
                                   "Call browser_snapshot to see the page; the page may handle it differently.")
