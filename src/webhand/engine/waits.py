"""browser_wait_for's conditions, the parts every driver shares: what each one says, URL
patterns, the network-idle rule, and the hint after a timeout."""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Callable
from typing import Any

from webhand.engine.driver import WaitCondition
from webhand.engine.js import source
from webhand.engine.settle import RequestTracker
from webhand.errors import ActionTimeout, shorten
from webhand.engine.break_hints import JS_BREAK_HINTS

#: The network counts as idle after this long with no request in flight (Playwright's definition).
NETWORK_IDLE_SECONDS = 0.5

# The page's text as the snapshot shows it, without break hints: a model waits for text it read there.
_SHOWN_TEXT = f"document.body.innerText.replace({JS_BREAK_HINTS}, '').includes(t.replace({JS_BREAK_HINTS}, ''))"
TEXT_SHOWN = f"t => !!document.body && {_SHOWN_TEXT}"
TEXT_GONE = f"t => !document.body || !{_SHOWN_TEXT}"

# Calls `predicate(arg)` on every animation frame (and timer, for a hidden tab) until it is truthy.
POLL = source("poll.js")

VISIBLE = source("visible.js")



def predicate_of(condition: WaitCondition) -> tuple[str, Any]:
    """The page-side predicate (a function's source) and its argument for a condition polled in
    the page: text, selectors, or the model's JavaScript (an expression or a function)."""
    kind, value = condition.kind, condition.value
    if kind in ("text", "text_gone"):
        return (TEXT_SHOWN if kind == "text" else TEXT_GONE), str(value)
    if kind in ("selector_visible", "selector_hidden"):
        return VISIBLE, [str(value), kind == "selector_visible"]
    source = str(value).strip()
    looks_like_function = source.startswith(("function", "async ")) or "=>" in source.split("{", 1)[0]
    return (source if looks_like_function else f"() => ({source})"), None


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


def url_matches(pattern: str, url: str) -> bool:
    """A pattern with ``*`` is a glob over the whole URL (``*`` matches anything); else a substring."""
    return fnmatch.fnmatchcase(url, pattern) if "*" in pattern else pattern in url


async def network_idle(tracker: RequestTracker, timeout: float) -> bool:
    """True once no request is in flight and none starts for ``NETWORK_IDLE_SECONDS``; False at the timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if not await tracker.until(lambda: not tracker.inflight, deadline - loop.time()):
            return False
        # Idle means nothing new starts for a short window: wait for the next event, capped.
        tracker.activity.clear()
        window = min(NETWORK_IDLE_SECONDS, deadline - loop.time())
        try:
            await asyncio.wait_for(tracker.activity.wait(), max(window, 0.0))
        except TimeoutError:
            return window >= NETWORK_IDLE_SECONDS or not tracker.inflight


def next_step(kind: str, tracker: RequestTracker) -> str:
    if kind == "network_idle" and tracker.inflight:
        busy = ", ".join(sorted(r.url for r in tracker.inflight)[:3])
        return f"Still loading: {busy}. Wait with a larger timeout, or for something on the page instead."
    return "Call browser_snapshot to see the page; then wait longer (timeout) or for another condition."


async def wait_without_the_page(condition: WaitCondition, tracker: RequestTracker, current_url: Callable[[], str],
                                timeout: float) -> str | None:
    """The conditions every driver waits for the same way, from the tab's own events rather than a
    predicate in the page (a pause, the URL, network idle): the reply, or None for a condition the
    driver polls in the page itself."""
    kind, value = condition.kind, condition.value
    if kind == "time":
        await asyncio.sleep(float(value))  # the model asked for exactly this pause
        return f"Waited {float(value):g} s."
    if kind == "url":
        if not await tracker.until(lambda: url_matches(str(value), current_url()), timeout):
            raise ActionTimeout(f"Waited {timeout:g} s for {describe(condition)}, but it did not happen.",
                                next_step(kind, tracker))
        return f"The URL matches {shorten(str(value))!r}: {current_url()}"
    if kind == "network_idle":
        if not await network_idle(tracker, timeout):
            raise ActionTimeout(f"Waited {timeout:g} s for {describe(condition)}, but it did not happen.",
                                next_step(kind, tracker))
        return f"Waited for {describe(condition)}: done."
    return None
