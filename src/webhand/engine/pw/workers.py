"""Console messages of shared workers, which Playwright does not report at all.

A shared worker is its own target, outside every page. A browser-level CDP session discovers the
shared workers of one browser context, attaches to each (the non-flattened way, since Playwright's
CDP sessions cannot address a child session) and enables its Runtime, whose console calls and
uncaught errors become console entries tagged ``worker``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import BrowserContext as PWContext
from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError

from webhand.engine.console_events import console_api_entry, exception_entry
from webhand.engine.driver import ConsoleEntry

class SharedWorkerConsole:
    def __init__(self, context: PWContext, record: Callable[[ConsoleEntry], None]) -> None:
        self._context = context
        self._context_id: str | None = None  # the browser context's CDP id, learnt through its first tab
        self._record = record
        self._session: CDPSession | None = None
        self._attached: set[str] = set()

    @property
    def started(self) -> bool:
        return self._context_id is not None

    async def start_through(self, tab_session: Callable[[], Awaitable[CDPSession]]) -> None:
        """Start hearing the context's shared workers, once; the context's CDP id comes from a tab."""
        try:
            info = await (await tab_session()).send("Target.getTargetInfo")
        except PWError:
            return
        if self._context_id is None:
            self._context_id = info["targetInfo"]["browserContextId"]
            await self._start()

    async def _start(self) -> None:
        browser = self._context.browser
        if browser is None:
            return
        try:
            self._session = await browser.new_browser_cdp_session()
            self._session.on("Target.targetCreated", self._on_target)
            self._session.on("Target.receivedMessageFromTarget", self._on_message)
            # Also announces the shared workers that exist already.
            await self._session.send("Target.setDiscoverTargets", {"discover": True})
        except PWError:
            pass  # the browser went away: there is nothing left to hear

    async def close(self) -> None:
        if self._session is not None:
            try:
                await self._session.detach()
            except PWError:
                pass

    def _on_target(self, event: dict[str, Any]) -> None:
        target = event["targetInfo"]
        if target.get("type") == "shared_worker" and target.get("browserContextId") == self._context_id \
                and target["targetId"] not in self._attached:
            self._attached.add(target["targetId"])
            asyncio.ensure_future(self._attach(target["targetId"]))

    async def _attach(self, target_id: str) -> None:
        assert self._session is not None
        try:
            attached = await self._session.send("Target.attachToTarget", {"targetId": target_id, "flatten": False})
            for number, method in enumerate(("Runtime.enable", "Runtime.runIfWaitingForDebugger"), 1):
                await self._session.send("Target.sendMessageToTarget", {
                    "sessionId": attached["sessionId"], "message": json.dumps({"id": number, "method": method})})
        except PWError:
            pass  # the worker ended first

    def _on_message(self, event: dict[str, Any]) -> None:
        try:
            message = json.loads(event["message"])
        except ValueError:
            return
        params = message.get("params") or {}
        if message.get("method") == "Runtime.consoleAPICalled":
            self._record(console_api_entry(params, -1, "worker"))
        elif message.get("method") == "Runtime.exceptionThrown":
            self._record(exception_entry(params, -1, "worker"))
