"""browser_wait_for's conditions on Playwright: each one an event or a poll in the page, with a timeout."""

from __future__ import annotations

import asyncio
import fnmatch

from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage
from playwright.async_api import TimeoutError as PWTimeout

from webhand.engine.driver import WaitCondition
from webhand.engine.pw.settle import RequestTracker
from webhand.errors import ActionTimeout, EvaluationFailed, InvalidArgument, shorten

#: The network counts as idle after this long with no request in flight (Playwright's definition).
NETWORK_IDLE_SECONDS = 0.5

_TEXT_SHOWN = "t => !!document.body && document.body.innerText.includes(t)"
_TEXT_GONE = "t => !document.body || !document.body.innerText.includes(t)"

_WHAT = {
    "text": "the text {!r} to appear",
    "text_gone": "the text {!r} to disappear",
    "selector_visible": "an element matching {!r} to be visible",
    "selector_hidden": "elements matching {!r} to be hidden or gone",
    "url": "the URL to match {!r}",
    "network_idle": "the network to be idle",
    "javascript": "the condition {!r} to be true",
    "time": "{} s",
}


def describe(condition: WaitCondition) -> str:
    value = condition.value
    return _WHAT[condition.kind].format(shorten(value) if isinstance(value, str) else value)


async def wait_for(page: PWPage, tracker: RequestTracker, condition: WaitCondition, timeout: float) -> str:
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
            await _network_idle(tracker, timeout)
        elif kind == "javascript":
            await page.wait_for_function(str(value), timeout=ms)
    except PWTimeout:
        raise ActionTimeout(f"Waited {timeout:g} s for {what}, but it did not happen.",
                            _next_step(kind, tracker)) from None
    except PWError as error:
        first = str(error).splitlines()[0]
        if kind == "javascript":
            raise EvaluationFailed(f"The condition {value!r} threw: {first}", "Fix the expression and call again.") from None
        if kind.startswith("selector") and ("selector" in first.lower() or "parse" in first.lower()):
            raise InvalidArgument(f"The selector {value!r} is not valid: {first}", "Use a CSS selector.") from None
        raise ActionTimeout(f"Waiting for {what} stopped: {first}", "Call browser_snapshot to see the page.") from None
    return f"Waited for {what}: done." if kind != "url" else f"The URL matches {shorten(str(value))!r}: {page.url}"


def url_matches(pattern: str, url: str) -> bool:
    """A pattern with ``*`` is a glob over the whole URL (``*`` matches anything); else a substring."""
    return fnmatch.fnmatchcase(url, pattern) if "*" in pattern else pattern in url


async def _network_idle(tracker: RequestTracker, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if not await tracker.until(lambda: not tracker.inflight, deadline - loop.time()):
            raise PWTimeout("network busy")
        # Idle means nothing new starts for a short window: wait for the next event, capped.
        tracker.activity.clear()
        window = min(NETWORK_IDLE_SECONDS, deadline - loop.time())
        try:
            await asyncio.wait_for(tracker.activity.wait(), max(window, 0.0))
        except asyncio.TimeoutError:
            if window >= NETWORK_IDLE_SECONDS or not tracker.inflight:
                return
            raise PWTimeout("network busy") from None


def _next_step(kind: str, tracker: RequestTracker) -> str:
    if kind == "network_idle" and tracker.inflight:
        busy = ", ".join(sorted(r.url for r in tracker.inflight)[:3])
        return f"Still loading: {busy}. Wait with a larger timeout, or for something on the page instead."
    return "Call browser_snapshot to see the page; then wait longer (timeout) or for another condition."
