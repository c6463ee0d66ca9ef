"""browser_wait_for's conditions on raw CDP: a predicate polled in the page on every animation
frame (re-installed when the document is replaced), or an event seen by the tab, with a timeout."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, message
from webhand.engine.cdp.frames import FrameTree
from webhand.engine.driver import WaitCondition
from webhand.engine.settle import DocumentReplaced, PageGone, RequestTracker
from webhand.engine.waits import POLL, describe, next_step, predicate_of, wait_without_the_page
from webhand.errors import ActionTimeout, EvaluationFailed, InvalidArgument

class WaitingTab(Protocol):
    """What a wait needs of its tab (``CdpTab``): its frames and requests, where it is, whether it
    is still open, and a pause until the page's next event."""

    connection: CdpConnection
    frame_tree: FrameTree
    tracker: RequestTracker

    @property
    def url(self) -> str: ...

    @property
    def closed(self) -> bool: ...

    async def next_event(self, cap: float) -> None: ...


async def wait_for(tab: WaitingTab, condition: WaitCondition, timeout: float) -> str:
    kind = condition.kind
    what = describe(condition)
    done = await wait_without_the_page(condition, tab.tracker, lambda: tab.url, timeout)
    if done is not None:
        return done
    predicate, arg = predicate_of(condition)
    if not await _poll(tab, kind, predicate, arg, timeout):
        raise ActionTimeout(f"Waited {timeout:g} s for {what}, but it did not happen.", next_step(kind, tab.tracker))
    return f"Waited for {what}: done."


async def _poll(tab: WaitingTab, kind: str, predicate: str, arg: Any, timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (remaining := deadline - loop.time()) > 0:
        state = tab.frame_tree.frames.get(tab.frame_tree.main_id)
        if state is None or tab.closed:
            return False
        try:
            context_id = await tab.frame_tree.context_of(state, remaining)
            made = await tab.connection.send.Runtime.evaluate(params={"expression": f"({predicate})",
                                                                      "contextId": context_id}, session_id=state.session_id)
            if made.get("exceptionDetails"):
                raise _thrown(kind, arg, predicate, made["exceptionDetails"])
            reply = await asyncio.wait_for(tab.connection.send.Runtime.callFunctionOn(params={
                "functionDeclaration": POLL, "executionContextId": context_id, "awaitPromise": True, "returnByValue": True,
                "arguments": [{"objectId": made["result"]["objectId"]}, {"value": arg},
                              {"value": int(max(1, remaining * 1000))}]}, session_id=state.session_id), remaining + 1)
        except TimeoutError:
            return False
        except PROTOCOL_ERRORS as error:
            if tab.closed:
                return False
            text = message(error).lower()
            if "context" in text or "destroyed" in text or "navigated" in text:
                await tab.next_event(min(0.1, max(0.0, deadline - loop.time())))
                continue  # the document was replaced: poll in the new one
            raise ActionTimeout(f"Waiting stopped: {message(error)}", "Call browser_snapshot to see the page.") from None
        except (DocumentReplaced, PageGone):
            continue
        if reply.get("exceptionDetails"):
            raise _thrown(kind, arg, predicate, reply["exceptionDetails"])
        return bool(reply["result"].get("value"))
    return False


def _thrown(kind: str, arg: Any, predicate: str, details: dict[str, Any]) -> Exception:
    first = ((details.get("exception") or {}).get("description") or details.get("text") or "Error").splitlines()[0]
    if kind.startswith("selector"):
        return InvalidArgument(f"The selector {arg[0]!r} is not valid: {first}", "Use a CSS selector.")
    return EvaluationFailed(f"The condition {predicate!r} threw: {first}", "Fix the expression and call again.")
