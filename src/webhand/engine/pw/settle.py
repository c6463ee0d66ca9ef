"""The settle rules (``engine/settle.py``) fed by a Playwright page's events.

The rules are driver-neutral; this module only maps Playwright's request, response and frame
events onto the shared ``RequestTracker``, and runs its scripts through ``page.evaluate``.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage
from playwright.async_api import Request as PWRequest
from playwright.async_api import Response as PWResponse
from playwright.async_api import TimeoutError as PWTimeout

from webhand.engine import settle
from webhand.engine.settle import DocumentReplaced, PageGone, PageSettling, TrackedRequest

if TYPE_CHECKING:
    from webhand.engine.policy import OriginPolicy

__all__ = ["PlaywrightSettling", "PlaywrightRequestTracker", "document_loaded"]

PlaywrightSettling = PageSettling


class PlaywrightProbe:
    def __init__(self, page: PWPage, session: Callable[[], Awaitable[CDPSession]] | None = None) -> None:
        self.page = page
        self._session = session  # the tab's CDP session (None: a one-off probe that waits for no event)

    @property
    def closed(self) -> bool:
        return self.page.is_closed()

    async def events_caught_up(self) -> None:
        """One round trip to the browser: with requests intercepted (routes, the origin policy),
        Playwright announces a request once the browser paused it, which may come after the answer
        to a script that ran later; the browser sends that pause before it answers this."""
        if self._session is None:
            return
        try:
            await (await self._session()).send("Page.getNavigationHistory")
        except PWError:
            raise PageGone() from None

    async def main_evaluate(self, script: str, arg: Any = None) -> Any:
        try:
            return await self.page.evaluate(script, arg)
        except PWError as error:
            if self.page.is_closed() or "closed" in str(error).lower():
                raise PageGone() from None
            raise DocumentReplaced() from None


class PlaywrightRequestTracker(settle.RequestTracker):
    """The shared tracker, listening to one Playwright page for its whole life."""

    def __init__(self, page: PWPage, policy: "OriginPolicy | None",
                 session: Callable[[], Awaitable[CDPSession]]) -> None:
        refusals = policy.log_for(page.context) if policy is not None else None
        super().__init__(PlaywrightProbe(page, session), policy, refusals)
        self.page = page
        self._tracked: weakref.WeakKeyDictionary[PWRequest, TrackedRequest] = weakref.WeakKeyDictionary()
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        page.on("requestfinished", lambda request: self.finished(self._of(request)))
        page.on("requestfailed", lambda request: self.failed(self._of(request), request.failure or "failed"))
        page.on("framenavigated", self._on_navigated)
        page.on("load", lambda _: self.loaded())
        if self.refusals is not None:
            page.on("websocket", self._on_websocket)

    def _of(self, request: PWRequest) -> TrackedRequest:
        tracked = self._tracked.get(request)
        if tracked is None:
            main = request.is_navigation_request() and _frame_of(request) == self.page.main_frame
            tracked = self._tracked[request] = TrackedRequest(request.url, request.method, request.resource_type, main)
        return tracked

    def _on_request(self, request: PWRequest) -> None:
        self.request_started(self._of(request))

    def _on_response(self, response: PWResponse) -> None:
        self.response(self._of(response.request), response.status, response.headers)

    def _on_websocket(self, websocket: Any) -> None:
        # Nothing in the browser can stop a WebSocket (the policy proxy refuses its tunnel), but
        # the page names its URL here, before it connects: the reply can say which one was refused.
        reason = self.policy.check(websocket.url) if self.policy else None
        if reason and self.refusals is not None:
            self.refusals.add("WebSocket", websocket.url, reason)

    def _on_navigated(self, frame: Any) -> None:
        if frame == self.page.main_frame:
            self.main_committed()
        else:
            self.frame_committed()


def _frame_of(request: PWRequest) -> Any:
    try:
        return request.frame
    except PWError:  # a service worker's request belongs to no frame
        return None


async def document_loaded(page: PWPage, timeout_ms: float) -> None:
    """``settle.document_loaded`` with Playwright's exceptions, for this driver's callers."""
    try:
        await settle.document_loaded(PlaywrightProbe(page), timeout_ms / 1000)
    except settle.LoadTimeout as error:
        raise PWTimeout(str(error)) from None
    except PageGone:
        raise PWError("Target page, context or browser has been closed") from None
