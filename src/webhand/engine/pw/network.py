"""The network log: every request a page made, with its status, for browser_network_requests."""

from __future__ import annotations

from playwright.async_api import Page as PWPage
from playwright.async_api import Request as PWRequest
from playwright.async_api import Response as PWResponse

from webhand.engine.driver import NetworkEntry, TabEvents


class NetworkLog:
    """Hands each finished or failed request of one page to ``events.request``."""

    def __init__(self, page: PWPage, events: TabEvents, tab: int) -> None:
        self._events = events
        self._tab = tab
        # A status arrives with the response; the request is logged when its body finished.
        self._statuses: dict[PWRequest, int] = {}
        page.on("response", self._on_response)
        page.on("requestfinished", self._on_finished)
        page.on("requestfailed", self._on_failed)

    def _on_response(self, response: PWResponse) -> None:
        self._statuses[response.request] = response.status

    def _on_finished(self, request: PWRequest) -> None:
        self._log(request, self._statuses.pop(request, None), "")

    def _on_failed(self, request: PWRequest) -> None:
        self._log(request, self._statuses.pop(request, None), request.failure or "failed")

    def _log(self, request: PWRequest, status: int | None, failure: str) -> None:
        if self._events.request:
            self._events.request(NetworkEntry(request.method, request.url, status, request.resource_type,
                                              failure, self._tab))
