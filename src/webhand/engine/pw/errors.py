"""Playwright exceptions never leave the driver: these turn them into webhand errors."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from playwright.async_api import Error as PWError
from playwright.async_api import TimeoutError as PWTimeout

from webhand.engine.net_errors import net_failure
from webhand.engine.pointer import covered
from webhand.errors import (ActionTimeout, ElementNotActionable, InvalidArgument, PageCrashed, SessionClosed,
                            WebhandError)

SNAPSHOT_AGAIN = "Call browser_snapshot and use the new refs."


def translate(error: Exception, doing: str, timeout: float | None = None) -> WebhandError:
    """Turn a Playwright error into the webhand error a model can act on."""
    text = str(error)
    first = text.splitlines()[0] if text else type(error).__name__
    lowered = text.lower()
    # Playwright says "Target crashed" or "Page crashed"; the session replaces the tab (session/recovery.py).
    if "target crashed" in lowered or "page crashed" in lowered:
        return PageCrashed(f"{doing} failed: the page crashed.", "Call the tool again: it runs in a fresh tab.")
    if _closed_target(error) or "has been closed" in lowered or "target closed" in lowered \
            or "browser has disconnected" in lowered:
        return SessionClosed(f"{doing} failed: the page or browser was closed.",
                             "Call the tool again to start a fresh browser, or browser_tabs to pick another tab.")
    covering = re.search(r"(<[^\n]*?>)(?:[^\n]*?) intercepts pointer events", text)
    if covering:  # what it is was not seen (the element went away first): no advice about its kind
        return covered(doing, {"by": covering.group(1)})
    for needle, why in (("not attached to the dom", "the element was removed from the page"),
                        ("element is not visible", "the element is not visible"),
                        ("element is not enabled", "the element is disabled"),
                        ("element is not editable", "the element is not editable"),
                        ("not an <input>", "the element is not a text field"),
                        ("element is not a <select>", "the element is not a select"),
                        ("option being selected is not enabled", "the option is disabled"),
                        ("outside of the viewport", "the element is outside the viewport")):
        if needle in lowered:
            hint = SNAPSHOT_AGAIN if "removed" in why else "Call browser_snapshot to see its state, then choose another element or wait."
            return ElementNotActionable(f"{doing} failed: {why}.", hint)
    if isinstance(error, PWTimeout) or "timeout" in first.lower():
        seconds = f" within {timeout:g} s" if timeout else ""
        return ActionTimeout(f"{doing} did not finish{seconds}.",
                             "Call browser_snapshot to see the page, then retry with a larger timeout or another element.")
    return WebhandError(f"{doing} failed: {first}", "Call browser_snapshot to see the page state.")


def _closed_target(error: Exception) -> bool:
    """Whether Playwright says the page, context, browser or its connection is gone. Its message
    is then the reason the other end gave, which can be anything: a Playwright server whose
    browser died says "Browser closed". Every call on that connection fails so for one turn of
    the event loop before the browser reports its disconnect, so a session that calls in that
    window must learn that its browser is gone (session/placing.py), not read a plain failure
    and try again on the dead connection. Playwright does not export the class: it is known by
    its name."""
    return any(kind.__name__ == "TargetClosedError" for kind in type(error).__mro__)


def navigation_error(error: Exception, url: str, timeout: float) -> WebhandError:
    text = str(error)
    failure = net_failure(text, url)
    if failure is not None:
        return failure
    if isinstance(error, PWTimeout):
        return ActionTimeout(f"Navigation to {url} did not finish within {timeout:g} s.",
                             "Retry with wait_until='domcontentloaded' or a larger timeout; browser_snapshot shows what loaded.")
    return translate(error, f"Navigation to {url}", timeout)


def unknown_key(key: str, error: Exception) -> InvalidArgument | None:
    if "unknown key" in str(error).lower():
        return InvalidArgument(f"{key!r} is not a key name.",
                               "Use names like Enter, Tab, Escape, ArrowDown, a, or chords like Control+A.")
    return None


@asynccontextmanager
async def translated(doing: str, timeout: float | None = None) -> AsyncIterator[None]:
    try:
        yield
    except WebhandError:
        raise
    except PWError as error:
        raise translate(error, doing, timeout) from None
