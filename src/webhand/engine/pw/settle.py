"""Waiting for what an action set off: by events, each wait capped, never a fixed sleep.

A ``RequestTracker`` listens to one page for its whole life (requests, responses, main-frame
commits) and keeps the set of requests in flight. An action starts a ``PlaywrightActionWatch``
before it acts; the tracker forwards every event to the current watch, so the watch knows
exactly which navigation and requests the action started. ``settle`` then waits, in rounds:

1. the DOM to go quiet (a MutationObserver in the page resolves after ``dom_quiet_ms`` without a
   mutation, capped). Those few milliseconds are also when the events of requests the action
   started reach us, so step 2 and 3 see them;
2. a navigation the action started to commit and load (capped);
3. requests the action started to finish (capped);

and repeats once more if step 2 or 3 waited on anything, since a response usually changes the
DOM and may start more requests. On a static page that is one quiet window and nothing else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PWError
from playwright.async_api import TimeoutError as PWTimeout
from playwright.async_api import Page as PWPage
from playwright.async_api import Request as PWRequest
from playwright.async_api import Response as PWResponse

from webhand.engine.driver import FailedRequest, SettleCaps, Settled

if TYPE_CHECKING:
    from webhand.engine.pw.policy import OriginPolicy

_MAX_ROUNDS = 3
#: Requests that stay open by design (server-sent events): waiting for them to finish only costs the cap.
_STREAMS = {"eventsource", "websocket"}

# Resolves once the document has gone ``quiet`` ms without a DOM mutation, or after ``cap`` ms.
_DOM_QUIET = """([quiet, cap]) => new Promise(resolve => {
  let timer = 0;
  const finish = () => { observer.disconnect(); clearTimeout(timer); clearTimeout(limit); resolve(true); };
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(finish, quiet); });
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  timer = setTimeout(finish, quiet);
  const limit = setTimeout(finish, cap);
})"""


class RequestTracker:
    """One page's requests in flight, and the hand-off of its events to the current action watch."""

    def __init__(self, page: PWPage, policy: "OriginPolicy | None") -> None:
        self.page = page
        self.policy = policy
        self.inflight: set[PWRequest] = set()
        self.documents_awaited: set[PWRequest] = set()  # main-frame navigations with no response yet
        self.refusals = policy.log_for(page.context) if policy is not None and policy.active else None
        self.watch: PlaywrightActionWatch | None = None
        self.activity = asyncio.Event()  # set on every event; waiters re-check their condition
        self.commits = 0  # main-frame documents committed so far (a navigation's, or an error page's)
        # When a request last started or ended, or the page last fired "load" (loop time): the
        # network has been quiet since then.
        self.quiet_since = asyncio.get_running_loop().time()
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        page.on("requestfinished", self._on_done)
        page.on("requestfailed", self._on_failed)
        page.on("framenavigated", self._on_navigated)
        page.on("load", self._on_load)
        if self.refusals is not None:
            page.on("websocket", self._on_websocket)

    def _on_request(self, request: PWRequest) -> None:
        self._busy()
        self.inflight.add(request)
        if request.is_navigation_request() and _frame_of(request) == self.page.main_frame:
            self.documents_awaited.add(request)
        if self.watch:
            self.watch.started(request)
        self.activity.set()

    def _on_response(self, response: PWResponse) -> None:
        self.documents_awaited.discard(response.request)
        self.activity.set()
        if self.watch and response.status >= 400:
            request = response.request
            refused = self.policy.refused_response(request.url, response.headers) if self.policy else None
            self.watch.failed(FailedRequest(request.method, request.url, refused or f"HTTP {response.status}"))

    def _on_websocket(self, websocket: Any) -> None:
        # Nothing in the browser can stop a WebSocket (the policy proxy refuses its tunnel), but
        # the page names its URL here, before it connects: the reply can say which one was refused.
        reason = self.policy.check(websocket.url) if self.policy else None
        if reason and self.refusals is not None:
            self.refusals.add("WebSocket", websocket.url, reason)

    def _on_done(self, request: PWRequest) -> None:
        self._busy()
        self.inflight.discard(request)
        self.documents_awaited.discard(request)
        if self.watch:
            self.watch.finished(request)
        self.activity.set()

    def _on_failed(self, request: PWRequest) -> None:
        self._busy()
        self.inflight.discard(request)
        self.documents_awaited.discard(request)
        if self.watch:
            self.watch.finished(request)
            reason = request.failure or "failed"
            refusal = self.policy.refusal(request.url) if self.policy else None
            if refusal:
                self.watch.failed(FailedRequest(request.method, request.url, refusal))
            elif "ERR_ABORTED" not in reason:  # cancelled by the page or by a navigation: not a failure
                self.watch.failed(FailedRequest(request.method, request.url, reason))
        self.activity.set()

    def _busy(self) -> None:
        self.quiet_since = asyncio.get_running_loop().time()

    def _on_load(self, _: Any) -> None:
        self._busy()
        self.activity.set()

    def _on_navigated(self, frame: Any) -> None:
        if frame == self.page.main_frame:
            self.commits += 1
            if self.watch:
                self.watch.committed = True
        self.activity.set()

    async def until(self, condition: Callable[[], bool], seconds: float) -> bool:
        """Wait until ``condition()`` holds, re-checking on every page event; False at the cap."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not condition():
            remaining = deadline - loop.time()
            if remaining <= 0 or self.page.is_closed():
                return condition()
            self.activity.clear()
            try:
                await asyncio.wait_for(self.activity.wait(), remaining)
            except asyncio.TimeoutError:
                pass
        return True


def _frame_of(request: PWRequest) -> Any:
    try:
        return request.frame
    except PWError:  # a service worker's request belongs to no frame
        return None


class PlaywrightActionWatch:
    def __init__(self, tracker: RequestTracker, caps: SettleCaps) -> None:
        self.tracker = tracker
        self.caps = caps
        self.pending: set[PWRequest] = set()
        self.failures: list[FailedRequest] = []
        self.navigation: PWRequest | None = None  # a main-frame navigation not yet committed or ended
        self.committed = False
        self.refusals_seen = tracker.refusals.count if tracker.refusals else 0
        tracker.watch = self  # the newest action's watch gets the events

    # fed by the tracker ------------------------------------------------------------------------
    def started(self, request: PWRequest) -> None:
        if request.resource_type in _STREAMS:
            return
        self.pending.add(request)
        try:
            if request.is_navigation_request() and request.frame == self.tracker.page.main_frame:
                self.navigation, self.committed = request, False
        except PWError:  # a service worker's request has no frame
            pass

    def finished(self, request: PWRequest) -> None:
        self.pending.discard(request)
        if request is self.navigation:
            self.navigation = None

    def failed(self, failure: FailedRequest) -> None:
        if failure not in self.failures:
            self.failures.append(failure)

    # waiting -----------------------------------------------------------------------------------
    async def settle(self) -> Settled:
        page, caps = self.tracker.page, self.caps
        loop = asyncio.get_running_loop()
        navigation_deadline = loop.time() + caps.navigation
        requests_deadline = loop.time() + caps.requests
        navigation_unfinished = False
        unfinished: list[str] = []
        # Watching a loaded page for requests it starts on its own takes two rounds per wave
        # (one sees the requests start, the next waits for them); the deadlines bound the time.
        for _ in range(_MAX_ROUNDS + (2 if caps.load_quiet > 0 else 0)):
            state = await self._dom_quiet()
            if state == "gone":
                break
            waited = False
            if self.navigation is not None or self.committed or state == "navigated":
                waited = True
                await self.tracker.until(lambda: self.committed or self.navigation is None,
                                         max(0.0, navigation_deadline - loop.time()))
                if self.committed or state == "navigated":
                    try:
                        await document_loaded(page, max(1.0, (navigation_deadline - loop.time()) * 1000))
                    except PWError:
                        navigation_unfinished = True  # the reply still says where the tab is
                self.navigation, self.committed = None, False
            if self.pending:
                waited = True
                if not await self.tracker.until(lambda: not self.pending, max(0.0, requests_deadline - loop.time())):
                    # Long polls and streams never finish: name them once and stop waiting on them.
                    unfinished += [r.url for r in self.pending]
                    self.pending.clear()
            if not waited and caps.load_quiet > 0:
                # Nothing pending: the page is ready once the network has been quiet for the
                # window since its last request or its "load"; a client-rendered page fetches
                # its content in that time, and then that request is waited for.
                window = min(self.tracker.quiet_since + caps.load_quiet, requests_deadline) - loop.time()
                waited = window > 0 and await self.tracker.until(lambda: bool(self.pending) or self.committed, window)
            if not waited:
                break
        else:
            unfinished += [r.url for r in self.pending]  # started in the last round, never waited on
            self.pending.clear()
        if self.tracker.refusals is not None:  # refused anywhere in the context, e.g. in a tab it opened
            for method, url, reason in self.tracker.refusals.since(self.refusals_seen):
                self.failed(FailedRequest(method, url, reason))
            self.refusals_seen = self.tracker.refusals.count
        return Settled(list(self.failures), unfinished, navigation_unfinished)

    async def _dom_quiet(self) -> str:
        """'quiet' when the DOM went quiet (or hit its cap), 'navigated' if the document was replaced,
        'gone' if the page closed or is blocked (e.g. by an open alert)."""
        page, caps = self.tracker.page, self.caps
        if page.is_closed():
            return "gone"
        if caps.dom_cap <= 0 or caps.dom_quiet_ms <= 0:
            return "quiet"
        try:
            await asyncio.wait_for(page.evaluate(_DOM_QUIET, [caps.dom_quiet_ms, caps.dom_cap * 1000]), caps.dom_cap + 0.5)
        except asyncio.TimeoutError:
            return "gone"  # the page's JavaScript is blocked (a dialog is open): nothing more will settle
        except PWError as error:
            return "gone" if page.is_closed() or "closed" in str(error).lower() else "navigated"
        return "quiet"


async def document_loaded(page: PWPage, timeout_ms: float) -> None:
    """Wait for the main document's "load" (at once if its readyState is already "complete").

    Not ``wait_for_load_state``: a page restored from the back/forward cache never fires "load"
    again, so Playwright would wait for ever; its readyState is "complete" at once. Raises
    Playwright's TimeoutError at the timeout.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_ms / 1000
    while (remaining := deadline - loop.time()) > 0:
        try:
            await asyncio.wait_for(page.evaluate(_LOADED), remaining)
            return
        except asyncio.TimeoutError:
            break
        except PWError:
            if page.is_closed():
                raise
            # the document was replaced while we waited: wait on the new one
    raise PWTimeout(f"the page did not finish loading within {timeout_ms / 1000:g} s")


_LOADED = """() => document.readyState === 'complete' ||
  new Promise(resolve => window.addEventListener('load', () => resolve(true), {once: true}))"""
