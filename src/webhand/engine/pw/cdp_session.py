"""What a tab learns from its own CDP session, beyond what Playwright reports.

- where each response came from (service worker, memory or disk cache, prefetch, network);
- which console messages came from an iframe (Playwright reports them as the page's);
- the service worker registrations of the session, kept current from the browser's events;
- network emulation (latency, throughput, offline), and Chromium's performance counters counted
  from the tab's start (read by the shared ``engine/devtools.py``).

Everything is enabled once, when the tab is made, so that the state is current by the time a
tool asks. Playwright's own session on the same page is untouched.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError

from webhand.engine.console_events import console_text
from webhand.engine.driver import ConsoleEntry, NetworkConditions, NetworkEntry
from webhand.engine.network import emulation_params, response_source
from webhand.engine.service_workers import ServiceWorkerRegistry

#: How many pending answers per URL, and URLs, are kept for requests Playwright has not logged yet.
_PER_URL = 20
_URLS = 500
#: Console messages heard on one side (Playwright or CDP) and not yet on the other.
_RECENT_CONSOLE = 200


class TabCdpSession:
    def __init__(self, session: Callable[[], Awaitable[CDPSession]],
                 conditions: Callable[[], NetworkConditions] | None = None, *, response_sources: bool = True,
                 no_document: Callable[[str, str], None] | None = None) -> None:
        self._session = session
        self._no_document = no_document  # told (method, URL) of each request that belongs to no document
        self._response_sources = response_sources
        self._conditions = conditions  # the session's network emulation: a new tab starts with it
        self._request_methods: OrderedDict[str, tuple[str, str]] = OrderedDict()  # CDP requestId → (method, url)
        self._from_memory: set[str] = set()
        # Matched by (method, URL): answers CDP reported that Playwright has not logged yet, and the
        # reverse, entries logged before CDP said where their answer came from.
        self._sources: OrderedDict[tuple[str, str], deque[str]] = OrderedDict()
        self._unsourced: OrderedDict[tuple[str, str], deque[NetworkEntry]] = OrderedDict()
        self._context_frames: dict[int, str] = {}  # execution context id → frame id
        self._main_frame = ""
        # Console messages by timestamp: heard from CDP and not yet from Playwright, and the reverse.
        self._heard_console: OrderedDict[float, deque[_HeardConsole]] = OrderedDict()
        self._pending_console: OrderedDict[float, deque[ConsoleEntry]] = OrderedDict()
        self.service_workers = ServiceWorkerRegistry()
        self.ready: asyncio.Future[None] = asyncio.ensure_future(self._start())

    async def _start(self) -> None:
        try:
            session = await self._session()
            session.on("Network.requestWillBeSent", self._on_request)
            session.on("Network.requestServedFromCache", lambda e: self._from_memory.add(e["requestId"]))
            session.on("Network.responseReceived", self._on_response)
            session.on("Runtime.executionContextCreated", self._on_context)
            session.on("Runtime.consoleAPICalled", self._on_console)
            session.on("ServiceWorker.workerRegistrationUpdated", self.service_workers.on_registrations)
            session.on("ServiceWorker.workerVersionUpdated", self.service_workers.on_versions)
            # Performance from the start: its layout and script counters add up from when it is enabled.
            enabling = [session.send("Runtime.enable"), session.send("ServiceWorker.enable"),
                        session.send("Performance.enable")]
            if self._response_sources or self._no_document is not None:
                # Bodies are read through Playwright's session: this one keeps none (no buffers to fill).
                enabling.append(session.send("Network.enable", {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0,
                                                                "maxPostDataSize": 0}))
            await asyncio.gather(*enabling)
            self._main_frame = (await session.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
            if self._conditions is not None and self._conditions() != NetworkConditions():
                await self.emulate(self._conditions())
        except (PWError, KeyError):
            pass  # the page closed first: nothing to learn

    # -- where responses came from -------------------------------------------------------------
    def _on_request(self, event: dict[str, Any]) -> None:
        if event.get("loaderId") == "" and event.get("type") != "Document" and self._no_document is not None:
            # A worker's or shared worker's script: Playwright announces it on the page, but its
            # answer goes to the worker (a shared worker's never reaches Playwright's page at all).
            self._no_document(event["request"]["method"], event["request"]["url"])
        if not self._response_sources:
            return
        self._request_methods[event["requestId"]] = (event["request"]["method"], event["request"]["url"])
        while len(self._request_methods) > _URLS:
            self._request_methods.popitem(last=False)

    def _on_response(self, event: dict[str, Any]) -> None:
        if not self._response_sources:
            return
        request_id, response = event["requestId"], event["response"]
        method = self._request_methods.pop(request_id, ("GET", ""))[0]
        source = response_source(response, request_id in self._from_memory)
        self._from_memory.discard(request_id)
        key = (method, response["url"])
        waiting = self._unsourced.get(key)
        if waiting:  # Playwright logged it first
            entry = waiting.popleft()
            if not waiting:
                del self._unsourced[key]
            if entry.source != "service worker":
                entry.source = source
            return
        self._sources.setdefault(key, deque(maxlen=_PER_URL)).append(source)
        _trim(self._sources)

    def claim_source(self, entry: NetworkEntry) -> None:
        """Fill in where ``entry``'s response came from, now or when CDP tells (either may come first).

        Playwright does not expose CDP's request ids, so answers are matched by method and URL, in
        order: two requests in flight for the same URL at once could swap their sources.
        """
        key = (entry.method, entry.url)
        answers = self._sources.get(key)
        if not answers:
            self._unsourced.setdefault(key, deque(maxlen=_PER_URL)).append(entry)
            _trim(self._unsourced)
            return
        source = answers.popleft()
        if not answers:
            del self._sources[key]
        if entry.source != "service worker":
            entry.source = source

    # -- console messages: which frame, and their arguments as DevTools prints them ---------------
    def _on_context(self, event: dict[str, Any]) -> None:
        context = event["context"]
        self._context_frames[context["id"]] = (context.get("auxData") or {}).get("frameId", "")

    def _on_console(self, event: dict[str, Any]) -> None:
        frame = self._context_frames.get(event.get("executionContextId", 0), "")
        heard = _HeardConsole(bool(frame and self._main_frame and frame != self._main_frame), console_text(event))
        stamp = event.get("timestamp", 0.0)
        waiting = self._pending_console.get(stamp)
        if waiting:
            heard.fill(waiting.popleft())
            if not waiting:
                del self._pending_console[stamp]
        else:
            self._heard_console.setdefault(stamp, deque()).append(heard)
            _trim_to(self._heard_console, _RECENT_CONSOLE)

    def tag_console(self, entry: ConsoleEntry, timestamp: float) -> None:
        """Complete ``entry`` with what CDP heard of the same message (both carry the same
        timestamp; CDP usually reports it a moment after Playwright): whether an iframe logged it,
        and its arguments with previews of objects, which Playwright's text lacks. Messages of the
        same timestamp pair in order."""
        heard = self._heard_console.get(timestamp)
        if heard:
            heard.popleft().fill(entry)
            if not heard:
                del self._heard_console[timestamp]
            return
        self._pending_console.setdefault(timestamp, deque()).append(entry)
        _trim_to(self._pending_console, _RECENT_CONSOLE)

    # -- emulation and service workers ---------------------------------------------------------
    async def emulate(self, conditions: NetworkConditions) -> None:
        session = await self._session()
        await session.send("Network.emulateNetworkConditions", emulation_params(conditions))

    async def service_worker_registry(self) -> ServiceWorkerRegistry:
        """The session's registrations, once current (the domain is enabled with the tab)."""
        await self.ready
        return self.service_workers


def _trim(table: OrderedDict[Any, Any]) -> None:
    _trim_to(table, _URLS)


def _trim_to(table: OrderedDict[Any, Any], size: int) -> None:
    while len(table) > size:
        table.popitem(last=False)


@dataclass(frozen=True)
class _HeardConsole:
    """What CDP says of a console message that Playwright's entry lacks."""
    from_frame: bool
    text: str

    def fill(self, entry: ConsoleEntry) -> None:
        if self.from_frame:
            entry.source = "frame"
        if self.text:
            entry.text = self.text
