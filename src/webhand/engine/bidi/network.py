"""The network of one session on Firefox, and each tab's log of its requests.

``SessionNetwork`` (owned by the session's ``BidiContext``) holds the routes (decided by
interception.py), network emulation (``emulation.setNetworkConditions``, for the user context:
tabs opened later get it too) and, when the network tools are served, a data collector
(``network.addDataCollector``) that keeps request and response bodies for browser_network_request.

``TabNetworkLog`` (one per tab) logs each request when it completed or failed, from the
``network.*`` events of the tab and its frames, hands its ``NetworkEntry`` to ``events.request``
and keeps what the details need (bounded): headers as sent and received, timings, and the ids
under which Firefox keeps the bodies (``network.getData``).

What BiDi does not tell: whether a cached answer came from the memory or the disk cache (only
``fromCache``; said as "disk cache"), a prefetch or a service worker; latency and throughput
emulation (only offline).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webhand.engine.bidi.connection import PROTOCOL_ERRORS, BidiConnection, guarded
from webhand.engine.bidi.interception import routes_match
from webhand.engine.driver import NetworkConditions, NetworkEntry, RequestDetail, RouteRule, TabEvents
from webhand.engine.network import KEPT_REQUESTS, capped, no_longer_kept, no_response, unknown_request
from webhand.errors import NotOnFirefox

if TYPE_CHECKING:
    from webhand.engine.bidi.interception import Interception

#: Ids are unique in the process, so that an id never names another tab's (or session's) request.
_IDS = itertools.count(1)
#: The largest body Firefox keeps for browser_network_request (bigger ones are not collected).
MAX_COLLECTED_BYTES = 20 * 1024 * 1024
#: BiDi's request destinations and initiator types, as the resource types Chromium names.
_DESTINATIONS = {"document": "document", "iframe": "document", "frame": "document", "script": "script",
                 "style": "stylesheet", "image": "image", "font": "font", "audio": "media", "video": "media",
                 "track": "media", "manifest": "manifest", "worker": "script", "sharedworker": "script",
                 "serviceworker": "script"}
_INITIATORS = {"fetch": "fetch", "xmlhttprequest": "xhr", "beacon": "ping", "websocket": "websocket"}


class SessionNetwork:
    """Routes, emulation and body collection of one user context."""

    def __init__(self, connection: BidiConnection, user_context: str, interception: Interception,
                 routed: Any) -> None:
        self.connection = connection
        self.user_context = user_context
        self.interception = interception
        self._routed = routed  # () -> whether any session of the browser has routes (the intercept follows)
        self.routes: list[RouteRule] = []
        self.conditions = NetworkConditions()
        self.collector: str | None = None

    async def collect_bodies(self) -> None:
        """Keep request and response bodies of this user context (browser_network_request reads them)."""
        async with guarded("Collecting response bodies", 30):
            answer = await self.connection.send("network.addDataCollector", {
                "dataTypes": ["request", "response"], "maxEncodedDataSize": MAX_COLLECTED_BYTES,
                "userContexts": [self.user_context]})
        self.collector = answer.get("collector")

    # routes -----------------------------------------------------------------------------------
    def route_for(self, url: str) -> RouteRule | None:
        return routes_match(self.routes, url)

    async def add_route(self, rule: RouteRule) -> None:
        self.interception.check_route(rule)
        if rule.action == "continue" and rule.url:
            raise NotOnFirefox("A continue route that changes the URL",
                               "Change the method, headers or body only, or use driver = \"cdp\".",
                               lacking="Firefox 153 aborts a request whose URL network.continueRequest changes (the "
                                       "page sees an AbortError)")
        self.routes = [r for r in self.routes if r.pattern != rule.pattern] + [rule]
        await self.interception.update(self._routed())

    async def remove_routes(self, pattern: str | None) -> list[RouteRule]:
        removed = [r for r in self.routes if pattern is None or r.pattern == pattern]
        self.routes = [r for r in self.routes if r not in removed]
        if removed:
            await self.interception.update(self._routed())
        return removed

    # emulation --------------------------------------------------------------------------------
    async def set_conditions(self, conditions: NetworkConditions) -> None:
        if conditions.latency_ms or conditions.download_kbps or conditions.upload_kbps:
            raise NotOnFirefox("Latency and throughput emulation",
                               "Use offline, or driver = \"cdp\" for latency and throughput.",
                               lacking="WebDriver BiDi emulates only being offline (emulation.setNetworkConditions)")
        emulated = {"type": "offline"} if conditions.offline else None
        async with guarded("Changing the network conditions", 30):
            await self.connection.send("emulation.setNetworkConditions", {"networkConditions": emulated,
                                                                          "userContexts": [self.user_context]})
        self.conditions = conditions


@dataclass
class _Record:
    request: dict[str, Any]
    started: float
    response: dict[str, Any] | None = None
    entry: NetworkEntry | None = None
    redirected: bool = False  # a redirect's hop: the request went on under the same id
    extra: dict[str, Any] = field(default_factory=dict)


class TabNetworkLog:
    """One tab's requests: logged as they end, kept for their details (bounded)."""

    def __init__(self, connection: BidiConnection, events: TabEvents, tab: int, session: Any,
                 announce_download: Callable[[], None]) -> None:
        self._connection = connection
        self._announce_download = announce_download  # a document answered with a file: its download is coming
        self._events = events
        self._tab = tab
        self._session = session  # () -> the SessionNetwork (its collector), or None
        self._live: dict[str, _Record] = {}
        self.requests: OrderedDict[int, _Record] = OrderedDict()
        self.document_headers: dict[str, dict[str, str]] = {}  # navigation id -> its document's response headers

    def on_event(self, method: str, params: dict[str, Any]) -> None:
        request = params.get("request") or {}
        request_id = request.get("request", "")
        if method == "network.beforeRequestSent":
            if _is_favicon(request):
                return  # the browser's own request for the tab's icon, not the page's (as on Chromium)
            self._live[request_id] = _Record(request, (params.get("timestamp") or 0) / 1000)
            while len(self._live) > 2 * KEPT_REQUESTS:  # requests whose end never came
                self._live.pop(next(iter(self._live)))
        elif method == "network.responseStarted":
            record = self._live.get(request_id)
            if record is not None:  # kept for a request Firefox then ends with a fetchError (an aborted 404 image)
                record.response = params.get("response") or {}
        elif method == "network.responseCompleted":
            response = params.get("response") or {}
            if params.get("navigation"):
                self.document_headers[params["navigation"]] = headers = _lower(response.get("headers"))
                if headers.get("content-disposition", "").lower().startswith("attachment"):
                    self._announce_download()
                while len(self.document_headers) > 20:
                    self.document_headers.pop(next(iter(self.document_headers)))
            record = self._live.pop(request_id, None)
            if record is not None:
                record.response = response
                record.redirected = 300 <= int(response.get("status") or 0) < 400 and "location" in _lower(
                    response.get("headers"))
                self._log(record, "", request)
        elif method == "network.fetchError":
            record = self._live.pop(request_id, None)
            if record is not None:
                self._log(record, str(params.get("errorText") or "failed"), request)

    def _log(self, record: _Record, failure: str, latest: dict[str, Any]) -> None:
        request, response = record.request, record.response
        timings = latest.get("timings") or request.get("timings") or {}
        begun, ended = timings.get("requestTime") or timings.get("fetchStart") or 0, timings.get("responseEnd") or 0
        status = int(response.get("status") or 0) or None if response is not None else None
        entry = NetworkEntry(request.get("method", "GET"), request.get("url", ""), status, resource_type(request),
                             failure, self._tab, id=next(_IDS), started=record.started,
                             source="disk cache" if response is not None and response.get("fromCache") else "network",
                             duration=(ended - begun) / 1000 if ended and begun and ended >= begun else None,
                             size=int(response["bytesReceived"]) if response and response.get("bytesReceived") else None,
                             mime_type=str((response or {}).get("mimeType") or "").split(";")[0].strip())
        record.entry = entry
        self.requests[entry.id] = record
        while len(self.requests) > KEPT_REQUESTS:
            _, dropped = self.requests.popitem(last=False)
            self._disown(dropped)
        if self._events.request:
            self._events.request(entry)

    def _disown(self, record: _Record) -> None:
        """Firefox may let go of the bodies of a request no longer kept."""
        session = self._session()
        if session is None or session.collector is None or self._connection.closed:
            return
        for kind in ("request", "response"):
            asyncio.ensure_future(_quietly(self._connection.send("network.disownData", {
                "dataType": kind, "collector": session.collector, "request": record.request.get("request", "")})))

    # details ----------------------------------------------------------------------------------
    def _record(self, request_id: int) -> tuple[_Record, NetworkEntry]:
        record = self.requests.get(request_id)
        if record is None or record.entry is None:
            raise unknown_request(request_id)
        return record, record.entry

    async def detail(self, request_id: int, *, timeout: float) -> RequestDetail:
        record, entry = self._record(request_id)
        body = None
        if record.request.get("bodySize"):
            body = await capped(self._data(record, "request"), f"Reading request {request_id}", timeout,
                                PROTOCOL_ERRORS)
        return RequestDetail(entry, _lower(record.request.get("headers")), body,
                             _lower((record.response or {}).get("headers")))

    async def body(self, request_id: int, *, timeout: float) -> bytes:
        record, entry = self._record(request_id)
        what = f"Reading the response body of request {request_id}"
        if record.response is None:
            raise no_response(request_id, entry.failure)
        if record.redirected:
            raise no_longer_kept(what, "a redirect response has no body")
        return await capped(self._data(record, "response"), what, timeout, PROTOCOL_ERRORS)

    async def _data(self, record: _Record, kind: str) -> bytes:
        session = self._session()
        if session is None or session.collector is None:
            raise no_longer_kept(f"Reading the {kind} body", "Firefox collects bodies only while the network "
                                 "tools are served")
        answer = await self._connection.send("network.getData", {"dataType": kind, "collector": session.collector,
                                                                 "request": record.request.get("request", "")})
        data = answer.get("bytes") or {}
        if data.get("type") == "base64":
            return base64.b64decode(data.get("value", ""))
        return str(data.get("value", "")).encode()


async def _quietly(command: Any) -> None:
    with contextlib.suppress(*PROTOCOL_ERRORS):
        await command


def _is_favicon(request: dict[str, Any]) -> bool:
    return str(request.get("url", "")).endswith("/favicon.ico") and request.get("destination") in ("", "image", None) \
        and request.get("initiatorType") in (None, "", "other")


def resource_type(request: dict[str, Any]) -> str:
    destination = str(request.get("destination") or "")
    if destination in _DESTINATIONS:
        return _DESTINATIONS[destination]
    return _INITIATORS.get(str(request.get("initiatorType") or ""), "other")


def _lower(headers: list[dict[str, Any]] | None) -> dict[str, str]:
    return {str(h.get("name", "")).lower(): str((h.get("value") or {}).get("value", "")) for h in headers or []}
