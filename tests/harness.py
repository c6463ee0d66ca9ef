"""The test's own hands on a tab, the same on every driver (Playwright and raw CDP).

The corpus harness seeds episodes, reads MiniWoB's globals and asks Chromium's accessibility tree
for ground truth. It does so through the Driver's own Tab (``evaluate``, ``query``, ``wait_for``,
``resolve``) wherever that suffices, and reaches past it only for what the product never exposes:
raw CDP on the tab's target, and the backend node id of a resolved element. Those two read each
driver's internals here, in one place, so that no test touches a Playwright object directly.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from webhand.engine.driver import Element, Tab, WaitCondition

#: Generous: this 2-core machine runs other tests at the same time.
TIMEOUT = 30.0


async def tab_of(webhand, tools) -> Tab:
    """The current tab of the conversation ``tools`` speaks for."""
    session = await webhand.sessions.get_or_create(tools.conversation_id)
    return await session.tab()


async def evaluate(tab: Tab, function: str, arg: Any = None) -> Any:
    """``function`` (JavaScript source of a function) called with ``arg`` in the page's main world.

    Goes through the tab's console runner (``tab.console.evaluate``, as browser_eval does), so the value
    comes back JSON-able and a promise is awaited; ``arg`` is passed as a JSON literal.
    """
    call = f"({function})({json.dumps(arg)})" if arg is not None else f"({function})()"
    return await tab.console.evaluate(call, await_promise=True, timeout=TIMEOUT)


async def click(tab: Tab, selector: str) -> None:
    """A real click (as an action's) on the element ``selector`` finds."""
    element = await tab.refs.query(selector, timeout=TIMEOUT)
    try:
        await element.click(timeout=TIMEOUT)
    finally:
        await element.dispose()


async def wait_for_selector(tab: Tab, selector: str, *, timeout: float) -> None:
    """Until an element ``selector`` finds is visible (as browser_wait_for does)."""
    await tab.wait_for(WaitCondition("selector_visible", selector), timeout=timeout)


class CdpChannel:
    """``send(method, params)`` on the tab's target, and ``detach()`` when done."""

    def __init__(self, send: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]],
                 detach: Callable[[], Awaitable[None]] | None) -> None:
        self._send, self._detach = send, detach

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self._send(method, params or {})

    async def detach(self) -> None:
        if self._detach is not None:
            await self._detach()


async def open_cdp(tab: Tab) -> CdpChannel:
    """Raw CDP on the tab's page target.

    Playwright: a CDP session of the harness's own (``new_cdp_session``), detached after. Raw CDP:
    the tab's own flattened session on the browser connection; detaching it would end the tab,
    so ``detach`` leaves it alone.
    """
    page = getattr(tab, "page", None)
    if page is not None:
        session = await page.context.new_cdp_session(page)
        return CdpChannel(session.send, session.detach)
    connection, session_id = tab.connection, tab.session_id  # type: ignore[attr-defined]

    async def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await connection.client.send_raw(method, params, session_id=session_id)
    return CdpChannel(send, None)


async def backend_node_ids(tab: Tab, channel: CdpChannel, elements: list[Element]) -> list[int]:
    """Chromium's ``backendNodeId`` of each resolved element (main frame only), over ``channel``.

    Raw CDP: each element is a remote object on the tab's session already. Playwright: its handles
    live in Playwright's own session, so they are parked on ``window`` and found again from
    ``channel`` as object ids of the same (main) world.
    """
    page = getattr(tab, "page", None)
    if page is None:
        object_ids = [element.object_id for element in elements]  # type: ignore[attr-defined]
    else:
        await page.evaluate("els => { window.__webhandTruth = els; }", [e.handle for e in elements])  # type: ignore[attr-defined]
        found = await channel.send("Runtime.evaluate", {"expression": "window.__webhandTruth", "objectGroup": "truth"})
        listed = await channel.send("Runtime.getProperties",
                                    {"objectId": found["result"]["objectId"], "ownProperties": True})
        by_index = {int(p["name"]): p["value"]["objectId"] for p in listed["result"] if p["name"].isdigit()}
        object_ids = [by_index[i] for i in range(len(elements))]
    try:
        described = await asyncio.gather(*(channel.send("DOM.describeNode", {"objectId": o}) for o in object_ids))
    finally:
        if page is not None:
            await channel.send("Runtime.evaluate", {"expression": "delete window.__webhandTruth"})
            await channel.send("Runtime.releaseObjectGroup", {"objectGroup": "truth"})
    return [d["node"]["backendNodeId"] for d in described]
