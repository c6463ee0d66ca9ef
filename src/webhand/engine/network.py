"""What the three drivers' network tools share: how many requests a tab keeps, where a response came
from (as CDP's ``Network.responseReceived`` tells), the typed errors of reading a logged request
later (unknown id, no response, the browser dropped it, too slow), and network emulation as CDP's
``Network.emulateNetworkConditions`` takes it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from webhand.engine.driver import NetworkConditions, RequestDetail
from webhand.errors import ActionTimeout, InvalidArgument

T = TypeVar("T")

#: Requests kept per tab for their details; the session's log holds as many lines (console_buffer).
KEPT_REQUESTS = 1000


def response_source(response: dict[str, Any], served_from_memory: bool) -> str:
    """One of ``driver.REQUEST_SOURCES`` for a CDP ``Network.Response``; ``served_from_memory``:
    ``Network.requestServedFromCache`` came for its request."""
    if response.get("fromServiceWorker"):  # a service worker's answer often comes from Cache Storage: it says disk
        return "service worker"
    if response.get("fromPrefetchCache"):
        return "prefetch"
    if served_from_memory:
        return "memory cache"
    if response.get("fromDiskCache"):
        return "disk cache"
    return "network"


def unknown_request(request_id: int) -> InvalidArgument:
    return InvalidArgument(f"Request {request_id} is not known: its tab was closed, or it is older than the "
                           "requests kept.", "Call browser_network_requests for the ids of the requests kept.")


class NetworkLog(Protocol):
    """What each driver's tab keeps of its requests (its ``network_log``)."""

    @property
    def requests(self) -> Mapping[int, Any]:
        """The requests kept, by ``NetworkEntry.id`` (the newest ``KEPT_REQUESTS``)."""
        ...

    async def detail(self, request_id: int, *, timeout: float) -> RequestDetail: ...
    async def body(self, request_id: int, *, timeout: float) -> bytes: ...


class RequestsInFull:
    """A context's ``request_detail`` and ``response_body`` (``driver.Context``): each request is
    read from the network log of the tab that made it. ``logs`` gives the logs of the context's
    tabs now (tabs come and go)."""

    def __init__(self, logs: Callable[[], Iterable[NetworkLog]]) -> None:
        self._logs = logs

    def _log_of(self, request_id: int) -> NetworkLog:
        for log in self._logs():
            if request_id in log.requests:
                return log
        raise unknown_request(request_id)

    async def request_detail(self, request_id: int, *, timeout: float) -> RequestDetail:
        return await self._log_of(request_id).detail(request_id, timeout=timeout)

    async def response_body(self, request_id: int, *, timeout: float) -> bytes:
        return await self._log_of(request_id).body(request_id, timeout=timeout)


def no_response(request_id: int, failure: str) -> InvalidArgument:
    return InvalidArgument(f"Request {request_id} got no response ({failure or 'it failed'}).",
                           "Only requests that got an answer have a body.")


async def capped(work: Coroutine[Any, Any, T], what: str, timeout: float,
                 dropped: tuple[type[BaseException], ...], describe: Callable[[BaseException], str] = str) -> T:
    """``work`` within ``timeout``; an error of ``dropped`` (the driver's protocol errors) means the
    browser no longer has what was asked, in the browser's words (``describe``)."""
    try:
        return await asyncio.wait_for(work, timeout)
    except asyncio.TimeoutError:
        raise ActionTimeout(f"{what} did not finish within {timeout:g} s.",
                            "Try again with a larger timeout.") from None
    except dropped as error:
        # Chromium drops bodies it no longer keeps (a page that navigated away, a redirect, a
        # large or evicted resource): that is an answer to give, not a failure of the session.
        text = describe(error)
        raise no_longer_kept(what, text.splitlines()[0] if text else type(error).__name__) from None


def no_longer_kept(what: str, why: str) -> InvalidArgument:
    return InvalidArgument(f"{what} failed: the browser no longer has it ({why}).",
                           "Reload the page (or repeat the action) and read it right after.")


def emulation_params(conditions: NetworkConditions) -> dict[str, Any]:
    """``Network.emulateNetworkConditions``'s parameters for ``conditions``."""
    return {"offline": conditions.offline, "latency": conditions.latency_ms,
            # CDP takes bytes per second, -1 for no limit
            "downloadThroughput": conditions.download_kbps * 1024 if conditions.download_kbps else -1,
            "uploadThroughput": conditions.upload_kbps * 1024 if conditions.upload_kbps else -1}
