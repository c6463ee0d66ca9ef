"""A tab's requests in full on raw CDP: what ``browser_network_request`` shows of a logged request
(headers as sent and received, the request body, where the answer came from) and its response
body, read from the browser on demand (``Network.getResponseBody``).

The tab's page events (events.py) log each request when it finished or failed; they hand the
``NetworkEntry`` to ``keep`` with the request's CDP key, and this log, which heard the same
request's events first (its listeners are set before theirs), fills in the entry's source
and keeps what the details need. Headers come from the ``…ExtraInfo`` events when the browser sent
them (the headers on the wire, cookies included, as Playwright's ``all_headers`` gives), else from
the request or response itself. Names are lower case, as on the Playwright driver.
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, message
from webhand.engine.driver import NetworkEntry, RequestDetail
from webhand.engine.network import (KEPT_REQUESTS, capped, no_longer_kept, no_response, response_source,
                                    unknown_request)

Key = tuple[str, str]  # (session id, CDP request id)


@dataclass
class _Record:
    key: Key
    request: dict[str, Any]
    sent_headers: dict[str, str] | None = None  # Network.requestWillBeSentExtraInfo
    response: dict[str, Any] | None = None
    received_headers: dict[str, str] | None = None  # Network.responseReceivedExtraInfo
    from_memory: bool = False
    redirected: bool = False  # a redirect's hop: the request went on under the same CDP id
    entry: NetworkEntry | None = None


class CdpNetworkLog:
    def __init__(self, connection: CdpConnection) -> None:
        self._connection = connection
        self._live: OrderedDict[Key, _Record] = OrderedDict()  # sent, not finished yet
        self._finishing: dict[Key, _Record] = {}  # a redirect's previous hop, until it is logged
        # ExtraInfo that came before its request's own event (the browser does not order them).
        self._early_sent: OrderedDict[Key, dict[str, str]] = OrderedDict()
        self._early_received: OrderedDict[Key, dict[str, str]] = OrderedDict()
        self.requests: OrderedDict[int, _Record] = OrderedDict()  # logged, by NetworkEntry.id

    def listen(self, session_id: str) -> None:
        on = self._connection.on
        on("Network.requestWillBeSent", session_id, lambda p: self._on_request(p, session_id))
        on("Network.requestWillBeSentExtraInfo", session_id,
           lambda p: self._on_extra(p, session_id, "sent_headers", self._early_sent))
        on("Network.responseReceived", session_id, lambda p: self._on_response(p, session_id))
        on("Network.responseReceivedExtraInfo", session_id,
           lambda p: self._on_extra(p, session_id, "received_headers", self._early_received))
        on("Network.requestServedFromCache", session_id, lambda p: self._on_memory(p, session_id))

    # events ------------------------------------------------------------------------------------
    def _on_request(self, params: dict[str, Any], session_id: str) -> None:
        key = (session_id, params["requestId"])
        previous = self._live.pop(key, None)
        if previous is not None and params.get("redirectResponse"):
            previous.response, previous.redirected = params["redirectResponse"], True
            self._finishing[key] = previous  # events.py logs it right after this listener
        record = _Record(key, params["request"], sent_headers=self._early_sent.pop(key, None),
                         received_headers=self._early_received.pop(key, None))
        self._live[key] = record
        _trim(self._live, 2 * KEPT_REQUESTS)  # requests whose end never came (their frame went away)

    def _on_extra(self, params: dict[str, Any], session_id: str, field: str, early: OrderedDict[Key, Any]) -> None:
        key = (session_id, params["requestId"])
        headers = params.get("headers") or {}
        record = self._live.get(key)
        if record is not None and getattr(record, field) is None:
            setattr(record, field, headers)
        else:
            early[key] = headers
            _trim(early, KEPT_REQUESTS)

    def _on_response(self, params: dict[str, Any], session_id: str) -> None:
        record = self._live.get((session_id, params["requestId"]))
        if record is not None:
            record.response = params["response"]

    def _on_memory(self, params: dict[str, Any], session_id: str) -> None:
        record = self._live.get((session_id, params["requestId"]))
        if record is not None:
            record.from_memory = True

    def keep(self, key: Key, entry: NetworkEntry) -> None:
        """``entry`` was logged for the request of ``key``: fill in its source and keep it (bounded)."""
        record = self._finishing.pop(key, None) or self._live.pop(key, None)
        if record is None:
            return
        record.entry = entry
        if record.response is not None:
            entry.source = response_source(record.response, record.from_memory)
        self.requests[entry.id] = record
        _trim(self.requests, KEPT_REQUESTS)

    # details -----------------------------------------------------------------------------------
    def _record(self, request_id: int) -> tuple[_Record, NetworkEntry]:
        record = self.requests.get(request_id)
        if record is None or record.entry is None:
            raise unknown_request(request_id)
        return record, record.entry

    async def detail(self, request_id: int, *, timeout: float) -> RequestDetail:
        record, entry = self._record(request_id)
        sent = record.sent_headers if record.sent_headers is not None else record.request.get("headers") or {}
        received = record.received_headers
        if received is None:
            received = (record.response or {}).get("headers") or {}
        body = await capped(self._request_body(record), f"Reading request {request_id}", timeout, PROTOCOL_ERRORS,
                            message)
        return RequestDetail(entry, _lower(sent), body, _lower(received))

    async def _request_body(self, record: _Record) -> bytes | None:
        request = record.request
        if request.get("postDataEntries"):
            return b"".join(base64.b64decode(part.get("bytes", "")) for part in request["postDataEntries"])
        if "postData" in request:
            return str(request["postData"]).encode()
        if not request.get("hasPostData"):
            return None
        # Too large to come with the event: the browser still has it.
        session, cdp_id = record.key
        answer: Any = await self._connection.send.Network.getRequestPostData(params={"requestId": cdp_id},
                                                                              session_id=session)
        data = answer.get("postData", "")
        return base64.b64decode(data) if answer.get("base64Encoded") else str(data).encode()

    async def body(self, request_id: int, *, timeout: float) -> bytes:
        record, entry = self._record(request_id)
        what = f"Reading the response body of request {request_id}"
        if record.response is None:
            raise no_response(request_id, entry.failure)
        if record.redirected:  # its CDP id now names the next hop, whose body this is not
            raise no_longer_kept(what, "a redirect response has no body")
        session, cdp_id = record.key

        async def read() -> bytes:
            answer: Any = await self._connection.send.Network.getResponseBody(params={"requestId": cdp_id},
                                                                               session_id=session)
            data = answer.get("body", "")
            return base64.b64decode(data) if answer.get("base64Encoded") else str(data).encode()

        return await capped(read(), what, timeout, PROTOCOL_ERRORS, message)


def _lower(headers: dict[str, Any]) -> dict[str, str]:
    return {str(name).lower(): str(value) for name, value in headers.items()}


def _trim(table: OrderedDict[Any, Any], most: int) -> None:
    while len(table) > most:
        table.popitem(last=False)
