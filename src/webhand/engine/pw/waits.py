"""browser_wait_for's conditions on Playwright: each one an event or a poll in the page, with a timeout."""

from __future__ import annotations

import asyncio

from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage
from playwright.async_api import TimeoutError as PWTimeout

from webhand.engine.driver import WaitCondition
from webhand.engine.pw.settle import PlaywrightRequestTracker
from webhand.engine.waits import TEXT_GONE as _TEXT_GONE
from webhand.engine.waits import TEXT_SHOWN as _TEXT_SHOWN
from webhand.engine.waits import describe, network_idle, next_step, url_matches
from webhand.errors import ActionTimeout, EvaluationFailed, InvalidArgument, shorten

__all__ = ["describe", "url_matches", "wait_for_condition"]

async def wait_for_condition(page: PWPage, tracker: PlaywrightRequestTracker, condition: WaitCondition,
                             timeout: float) -> str:
    """Wait until ``condition`` holds; a short line saying what was waited for."""
    kind, value, ms = condition.kind, condition.value, timeout * 1000
    what = describe(condition)
    try:
        if kind == "time":
            await asyncio.sleep(float(value))  # the model asked for exactly this pause
            return f"Waited {float(value):g} s."
        if kind in ("text", "text_gone"):
            await page.wait_for_function(_TEXT_SHOWN if kind == "text" else _TEXT_GONE, arg=str(value), timeout=ms)
        elif kind in ("selector_visible", "selector_hidden"):
            await page.wait_for_selector(str(value), state="visible" if kind == "selector_visible" else "hidden", timeout=ms)
        elif kind == "url":
            pattern = str(value)
            await page.wait_for_url(lambda url: url_matches(pattern, url), wait_until="commit", timeout=ms)
        elif kind == "network_idle":
            if not await network_idle(tracker, timeout):
                raise PWTimeout("network busy")
        elif kind == "javascript":
            await page.wait_for_function(str(value), timeout=ms)
    except PWTimeout:
        raise ActionTimeout(f"Waited {timeout:g} s for {what}, but it did not happen.",
                            next_step(kind, tracker)) from None
    except PWError as error:
        first = str(error).splitlines()[0]
        if kind == "javascript":
            raise EvaluationFailed(f"The condition {value!r} threw: {first}", "Fix the expression and call again.") from None
        if kind.startswith("selector") and ("selector" in first.lower() or "parse" in first.lower()):
            raise InvalidArgument(f"The selector {value!r} is not valid: {first}", "Use a CSS selector.") from None
        raise ActionTimeout(f"Waiting for {what} stopped: {first}", "Call browser_snapshot to see the page.") from None
    return f"Waited for {what}: done." if kind != "url" else f"The URL matches {shorten(str(value))!r}: {page.url}"
