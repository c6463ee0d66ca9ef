"""The network log: every request a page made, with its status and where its answer came from,
for browser_network_requests; and each logged request in full, on demand (browser_network_request).
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict
from collections.abc import Callable

from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage
from playwright.async_api import Request as PWRequest
from playwright.async_api import Response as PWResponse

from webhand.engine.driver import NetworkEntry, RequestDetail, TabEvents
from webhand.engine.network import KEPT_REQUESTS, capped, no_response
from webhand.errors import InvalidArgument

#: Ids are unique in the process, so that an id never names another tab's (or session's) request.
_IDS = itertools.count(1)


class PlaywrightNetworkLog:
    """Hands each finished or failed request of one page to ``events.request``, and keeps the
    request itself (bounded) so that its headers and bodies can be read later.

    ``claim_source(entry)`` fills in where a response came from (cdp_session.py reads it from CDP, now
    or a moment later); a response Playwright saw come from a service worker says so itself.
    """

    def __init__(self, page: PWPage, events: TabEvents, tab: int, claim_source: Callable[[NetworkEntry], None]) -> None:
        self._events = events
        self._tab = tab
        self._claim_source = claim_source
        # A status arrives with the response; the request is logged when its body finished.
        self._responses: dict[PWRequest, PWResponse] = {}
        self.requests: OrderedDict[int, tuple[NetworkEntry, PWRequest]] = OrderedDict()
        page.on("response", self._on_response)
        page.on("requestfinished", self._on_finished)
        page.on("requestfailed", self._on_failed)

    def _on_response(self, response: PWResponse) -> None:
        self._responses[response.request] = response

    def _on_finished(self, request: PWRequest) -> None:
        self._log(request, self._responses.pop(request, None), "")

    def _on_failed(self, request: PWRequest) -> None:
        self._log(request, self._responses.pop(request, None), request.failure or "failed")

    def _log(self, request: PWRequest, response: PWResponse | None, failure: str) -> None:
        source = "service worker" if response is not None and response.from_service_worker else "network"
        timing = request.timing  # milliseconds: startTime since the epoch, the rest since it (-1: unknown)
        ended = timing.get("responseEnd", -1)
        length = response.headers.get("content-length", "") if response is not None else ""
        entry = NetworkEntry(request.method, request.url, response.status if response else None,
                             request.resource_type, failure, self._tab, next(_IDS), source,
                             started=timing.get("startTime", 0) / 1000 or time.time(),
                             duration=ended / 1000 if ended >= 0 else None,
                             size=int(length) if length.isdigit() else None,
                             mime_type=(response.headers.get("content-type", "").split(";")[0].strip() if response else ""))
        if response is not None:
            self._claim_source(entry)
        self.requests[entry.id] = (entry, request)
        while len(self.requests) > KEPT_REQUESTS:
            self.requests.popitem(last=False)
        if self._events.request:
            self._events.request(entry)

    # -- details -------------------------------------------------------------------------------
    def _request(self, request_id: int) -> tuple[NetworkEntry, PWRequest]:
        found = self.requests.get(request_id)
        if found is None:
            raise InvalidArgument(f"Request {request_id} is not in this tab's log.",
                                  "Call browser_network_requests for the ids of the requests kept.")
        return found

    async def detail(self, request_id: int, *, timeout: float) -> RequestDetail:
        entry, request = self._request(request_id)

        async def read() -> RequestDetail:
            response = await request.response()
            return RequestDetail(entry, await request.all_headers(), request.post_data_buffer,
                                 await response.all_headers() if response else {})

        return await capped(read(), f"Reading request {request_id}", timeout, (PWError,))

    async def body(self, request_id: int, *, timeout: float) -> bytes:
        entry, request = self._request(request_id)

        async def read() -> bytes:
            response = await request.response()
            if response is None:
                raise no_response(request_id, entry.failure)
            return await response.body()

        return await capped(read(), f"Reading the response body of request {request_id}", timeout, (PWError,))

