"""Workers on raw CDP: their console messages, and the session's service worker registrations.

Every worker is a target of its own, attached paused (``waitForDebuggerOnStart``) so that its
first messages are heard:

- a dedicated worker attaches to its page's session (the tab's auto-attach): tagged ``worker``,
  with the page's tab;
- a service worker or a shared worker attaches at the browser level, once per browser context
  (``CdpBrowser._attached``): tagged ``sw`` or ``worker``, with no tab (as Playwright reports
  them). A service worker also attaches to each page in its scope; it is heard only here, so
  that each message is logged once.

The registrations come from the ServiceWorker domain of the tab's session, enabled the first
time a tool asks (enabling reports everything there is at once); the actions on them are the
drivers' shared ones (``engine/service_workers.py``).

``TabWorkers`` is owned by ``CdpTab`` (tab.py), ``ContextWorkers`` by ``CdpContext`` (context.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, Protocol

from webhand.engine.cdp.connection import CdpConnection, guarded
from webhand.engine.console_events import console_api_entry, exception_entry
from webhand.engine.driver import TabEvents
from webhand.engine.service_workers import ServiceWorkerRegistry
from webhand.errors import ActionTimeout

#: The targets of a browser context that belong to no page.
CONTEXT_WORKERS = {"service_worker": "sw", "shared_worker": "worker"}
#: How long the browser may take to report the registrations once asked (it reads its storage).
_FIRST_REPORT_SECONDS = 10.0


def hear_console(connection: CdpConnection, session_id: str, events: TabEvents, tab: int, source: str) -> None:
    """Log the console calls and uncaught errors of a worker's session (once its Runtime is enabled)."""
    def on_console(params: dict[str, Any]) -> None:
        if events.console:
            events.console(console_api_entry(params, tab, source))

    def on_exception(params: dict[str, Any]) -> None:
        if events.console:
            events.console(exception_entry(params, tab, source))

    connection.on("Runtime.consoleAPICalled", session_id, on_console)
    connection.on("Runtime.exceptionThrown", session_id, on_exception)


class SessionSetup(Protocol):
    """The context's ``session_setup`` (routes.py): the commands that give a session being set up
    (paused) the context's interception and network emulation."""

    def __call__(self, session_id: str, *, worker: bool = False, routed: bool = True) -> list[Awaitable[Any]]: ...


class ContextWorkers:
    """A context's service and shared workers; ``session_setup`` gives a service worker's session
    the context's interception and network emulation."""

    def __init__(self, connection: CdpConnection, events: TabEvents, session_setup: SessionSetup) -> None:
        self.connection = connection
        self.events = events
        self.session_setup = session_setup

    async def adopt(self, info: dict[str, Any], session_id: str) -> None:
        """A service or shared worker of this context attached (paused): hear it, then let it run."""
        hear_console(self.connection, session_id, self.events, -1, CONTEXT_WORKERS[info["type"]])
        send = self.connection.send
        # A service worker is offline (and under the policy's Fetch) with its pages: routes.py.
        setup = self.session_setup(session_id, worker=True, routed=False) if info["type"] == "service_worker" else []
        # Sent together, the resume last: the browser runs them in order, so nothing is missed.
        await asyncio.gather(*setup, send.Runtime.enable(session_id=session_id),
                             send.Runtime.runIfWaitingForDebugger(session_id=session_id))


class TabWorkers:
    """A tab's dedicated workers, and the service worker registrations its session reports
    (browser_service_workers). ``sessions`` is the tab's set of sessions: a dedicated worker's
    joins it, so that its listeners go when it detaches, as a frame's do."""

    def __init__(self, connection: CdpConnection, session_id: str, index: int, events: TabEvents,
                 sessions: set[str]) -> None:
        self.connection = connection
        self.session_id = session_id
        self.index = index
        self._events = events
        self._sessions = sessions
        self._service_workers_ready: asyncio.Future[ServiceWorkerRegistry] | None = None

    def hear(self, session_id: str, info: dict[str, Any]) -> list[Awaitable[Any]]:
        """The commands that set up a child target that is not a frame (sent before its resume)."""
        if info.get("type") != "worker":
            return []  # a service worker is heard at the browser level (ContextWorkers)
        self._sessions.add(session_id)  # its listeners go when it detaches, as a frame's do
        hear_console(self.connection, session_id, self._events, self.index, "worker")
        return [asyncio.ensure_future(self.connection.send.Runtime.enable(session_id=session_id))]

    async def registry(self) -> ServiceWorkerRegistry:
        if self._service_workers_ready is None:
            self._service_workers_ready = asyncio.ensure_future(self._enable_service_workers())
        try:
            return await asyncio.shield(self._service_workers_ready)
        except BaseException:
            if self._service_workers_ready.done():
                self._service_workers_ready = None  # failed: the next call asks again
            raise

    async def _enable_service_workers(self) -> ServiceWorkerRegistry:
        registry = ServiceWorkerRegistry()
        stops = [self.connection.on("ServiceWorker.workerRegistrationUpdated", self.session_id, registry.on_registrations),
                 self.connection.on("ServiceWorker.workerVersionUpdated", self.session_id, registry.on_versions)]
        try:
            async with guarded("Listing the service workers", _FIRST_REPORT_SECONDS):
                await self.connection.send.ServiceWorker.enable(session_id=self.session_id)
            if not await registry.until(lambda: registry.heard, _FIRST_REPORT_SECONDS):
                raise ActionTimeout(f"The browser did not report the service workers within {_FIRST_REPORT_SECONDS:g} s.",
                                    "Call browser_service_workers again.")
        except BaseException:
            for stop in stops:
                stop()
            raise
        return registry
