"""browser_wait_for on Firefox: the shared conditions (engine/waits.py) polled in the page with
``script.callFunction`` (the page agent's sandbox for text and selectors, the page's own realm for
the model's JavaScript), or the tab's events for the URL and the network, each with its timeout."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from webhand.engine.driver import WaitCondition
from webhand.engine.settle import RequestTracker
from webhand.engine.waits import POLL, describe, next_step, predicate_of, wait_without_the_page
from webhand.errors import ActionTimeout, EvaluationFailed, InvalidArgument, WebhandError


class WaitingTab(Protocol):
    tracker: RequestTracker

    @property
    def url(self) -> str: ...

    @property
    def closed(self) -> bool: ...

    async def call(self, function: str, args: list[Any], *, doing: str, timeout: float, this: Any = None,
                   sandbox: bool = True) -> Any: ...


async def wait_for(tab: WaitingTab, condition: WaitCondition, timeout: float) -> str:
    kind = condition.kind
    what = describe(condition)
    done = await wait_without_the_page(condition, tab.tracker, lambda: tab.url, timeout)
    if done is not None:
        return done
    predicate, arg = predicate_of(condition)
    try:
        held = await _poll(tab, predicate, arg, timeout, sandbox=kind != "javascript")
    except EvaluationFailed as error:
        thrown = error.message.split(" in the page: ", 1)[-1]
        if kind.startswith("selector"):
            raise InvalidArgument(f"The selector {arg[0]!r} is not valid: {thrown}", "Use a CSS selector.") from None
        raise EvaluationFailed(f"The condition {predicate!r} threw: {thrown}", "Fix the expression and call again.") from None
    if not held:
        raise ActionTimeout(f"Waited {timeout:g} s for {what}, but it did not happen.", next_step(kind, tab.tracker))
    return f"Waited for {what}: done."


async def _poll(tab: WaitingTab, predicate: str, arg: Any, timeout: float, *, sandbox: bool) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    function = f"(arg, ms) => ({POLL})(({predicate}), arg, ms)"
    while (remaining := deadline - loop.time()) > 0 and not tab.closed:
        try:
            return bool(await tab.call(function, [arg, int(max(1, remaining * 1000))], doing="Waiting",
                                       timeout=remaining + 1, sandbox=sandbox))
        except EvaluationFailed:
            raise
        except WebhandError:  # the document was replaced mid-wait: poll in the next one
            if tab.closed or loop.time() >= deadline:
                return False
            tab.tracker.activity.clear()
            try:
                await asyncio.wait_for(tab.tracker.activity.wait(), min(0.1, max(0.0, deadline - loop.time())))
            except TimeoutError:
                pass
    return False
