"""One page: navigation, scrolling, waiting, storage.

A tab owns its collaborators, each made in ``__init__`` with what it needs:

- ``refs`` (frames.py): the frame tree, the tab's ``refs`` component: frames, resolving a ref to its element, CSS queries;
- ``page_events`` (events.py): the page's errors, dialogs and file choosers, handed to the session
  (its console messages are heard on the context, which knows workers from pages);
- ``_tracker`` (settle.py): requests in flight and action settlings; browser_wait_for's conditions
  run in waits.py;
- ``liveness`` (liveness.py): crash, hang test, stopping a navigation, ending the page;
- ``cdp_session`` (cdp_session.py): what the tab's own CDP session learns; ``network_log`` (network.py).

Its components (engine/driver.py), reached as attributes by their callers: ``liveness``, and
the ones written once for both Chromium drivers on the tab's CDP session: ``console``
(engine/console_javascript.py), ``live_view`` (engine/live_view.py), ``service_workers``
(engine/service_workers.py), ``performance`` (engine/devtools.py); and ``keyboard`` (keyboard.py) and
``capture`` (capture.py), on the Playwright page; ``history`` (history.py), back, forward, reload.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.console_javascript import ConsoleJavaScript
from webhand.engine.isolated_world import IsolatedScripts
from webhand.engine.devtools import PerformanceCounters
from webhand.engine.driver import (NavigationResult, NetworkConditions, SettleCaps, TabEvents, WaitCondition, WaitUntil)
from webhand.engine.live_view import LiveView
from webhand.engine.page_scripts import SCROLL, WEB_STORAGE
from webhand.engine.policy import before_navigation, navigation_refusal, refused_navigation
from webhand.engine.pw.capture import PageCapture
from webhand.engine.pw.channel import PlaywrightChannel, viewport_of
from webhand.engine.pw.cdp_session import TabCdpSession
from webhand.engine.pw.errors import navigation_error, translate, translated
from webhand.engine.pw.events import PlaywrightPageEvents
from webhand.engine.pw.frames import PlaywrightFrameTree
from webhand.engine.pw.history import PlaywrightHistory
from webhand.engine.pw.keyboard import PlaywrightKeyboard
from webhand.engine.pw.liveness import PageLiveness
from webhand.engine.pw.network import PlaywrightNetworkLog
from webhand.engine.pw.policy import PlaywrightRequestPolicy
from webhand.engine.pw.settle import PlaywrightSettling, PlaywrightRequestTracker, document_loaded
from webhand.engine.pw.waits import wait_for_condition
from webhand.errors import ActionTimeout, PolicyRefused, WebhandError
from webhand.engine.page_tools import ChromiumPageTools
from webhand.engine.service_workers import ServiceWorkerActions

#: Longest a failed navigation waits for Chromium's error page to take its place (it takes ~0.1 s).
_ERROR_PAGE_CAP_SECONDS = 5.0



class PlaywrightTab:
    def __init__(self, page: PWPage, index: int, events: TabEvents, policy: PlaywrightRequestPolicy | None = None,
                 network_conditions: Callable[[], NetworkConditions] | None = None, *,
                 response_sources: bool = True) -> None:
        self.page = page
        self.index = index
        self.next_ref: dict[str, int] = {}  # per frame key; keeps counting across documents
        self._cdp: asyncio.Future[CDPSession] | None = None
        self.page_events = PlaywrightPageEvents(page, events, index)
        self.refs = PlaywrightFrameTree(page, self._session)
        # Told the moment the page asks for a new window (window.open, target=_blank), before the
        # new tab exists: the context counts it so an action can wait for the tab (context.py).
        self.on_window_open: Any = None
        self._window_watch = asyncio.ensure_future(self._watch_window_open())
        # Requests in flight and action settlings; the origin policy's redirect guard on this page.
        self._policy = policy
        self._tracker = PlaywrightRequestTracker(page, policy, self._session)
        self._redirect_guard = asyncio.ensure_future(policy.guard(page)) if policy is not None else None
        self._refusals_before = 0  # the refusal log's count when the current navigation began
        self.liveness = PageLiveness(page, self._tracker, self._session)
        # response sources, iframe console messages, service workers, network emulation
        self.cdp_session = TabCdpSession(self._session, network_conditions, response_sources=response_sources,
                                         no_document=self._tracker.belongs_to_no_document)
        self.network_log = PlaywrightNetworkLog(page, events, index, self.cdp_session.claim_source)
        # The CDP work both Chromium drivers do alike, written once on the tab's session (engine/channel.py).
        self.channel = PlaywrightChannel(page, self._session)
        self.console = ConsoleJavaScript(self.channel)
        self.live_view = LiveView(self.channel, viewport_of(page))
        self._device_scale = 1.0  # set by set_viewport, over the context's own
        self.service_workers = ServiceWorkerActions(self.channel, self.cdp_session.service_worker_registry,
                                                    self.console, lambda: self.url)
        self.performance = PerformanceCounters(self.channel, enabled=self.cdp_session.ready)
        self.isolated = IsolatedScripts(self.channel)  # webhand's own scripts, out of the page's reach
        self.keyboard = PlaywrightKeyboard(page)  # keyboard.py
        self.capture = PageCapture(page)  # capture.py
        self.history = PlaywrightHistory(page, self._session, self._refused)  # history.py
        self.page_tools = ChromiumPageTools(self.channel)  # the page's own tools (WebMCP)

    async def _watch_window_open(self) -> None:
        try:
            session = await self._session()
            session.on("Page.windowOpen", lambda _: self.on_window_open() if self.on_window_open else None)
            await session.send("Page.enable")
        except PWError:
            pass  # the page closed first; nothing to watch

    # basics -----------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.page.url

    @property
    def closed(self) -> bool:
        return self.page.is_closed() or self.liveness.ended

    async def title(self) -> str:
        """The page's title, from the tab's history entry (kept current by the browser, also when
        a script changes document.title). Playwright's own page.title() runs in a utility world
        that it creates on first use, which costs a new document's first call ~50 ms."""
        try:
            history = await (await self._session()).send("Page.getNavigationHistory")
            return history["entries"][history["currentIndex"]].get("title", "")
        except (PWError, KeyError, IndexError):
            return ""

    async def warm_up(self) -> None:
        """Open the tab's CDP session ahead of need (the warm reserve calls this)."""
        await self._session()

    async def navigate(self, url: str, *, wait_until: WaitUntil = "load", timeout: float,
                       title: bool = True) -> NavigationResult:
        await self._before_navigation(url)  # the origin policy refuses before anything loads
        await self.cdp_session.ready  # so that the sources of this page's responses are heard
        answered_with_file = False

        def on_response(response: Any) -> None:
            nonlocal answered_with_file
            if response.request.is_navigation_request() and response.frame == self.page.main_frame:
                kind = (response.headers.get("content-disposition") or "").lower()
                answered_with_file |= kind.startswith("attachment") or \
                    response.headers.get("content-type", "").startswith("application/octet-stream")

        self.page.on("response", on_response)
        commits = self._tracker.commits
        try:
            response = await self.page.goto(url, wait_until=wait_until, timeout=timeout * 1000)
        except PWError as error:
            # The URL is a file: the browser downloads it and the page stays where it was. Not a
            # failure; the session saves the file and the reply reports it (context.py). Chromium
            # says so as "Download is starting", or, depending on timing, as a plain ERR_ABORTED.
            text = str(error)
            if "download is starting" in text.lower() or (answered_with_file and "ERR_ABORTED" in text):
                return NavigationResult(self.page.url, None, await self.title(), download=True)
            if "net::ERR_" in text and "ERR_ABORTED" not in text:
                await self._error_page_shown(commits, timeout)
            raise self._refused(url, error) or navigation_error(error, url, timeout) from None
        finally:
            self.page.remove_listener("response", on_response)
        refused = self._policy.refused_response(response.url, response.headers) if response and self._policy else None
        if refused:  # the policy proxy answered in the server's place (settle.py names it for other requests)
            raise refused_navigation(url, refused)
        return NavigationResult(self.page.url, response.status if response else None, await self.title() if title else "")

    async def _error_page_shown(self, commits: int, timeout: float) -> None:
        """Wait (capped) for the error page Chromium shows after a network failure.

        Playwright reports the failure before that page commits; a navigation or snapshot made
        in between would be cut off by it ("interrupted by another navigation").
        """
        cap = min(timeout, _ERROR_PAGE_CAP_SECONDS)
        if await self._tracker.until(lambda: self._tracker.commits > commits, cap):
            try:
                await document_loaded(self.page, cap * 1000)
            except PWError:
                pass  # the failure is reported either way

    async def wait_for_load(self, *, timeout: float) -> None:
        """Wait for a navigation an action started to load its document (returns at once if none)."""
        try:
            await self.page.wait_for_load_state("domcontentloaded", timeout=timeout * 1000)
        except PWError:
            pass  # a slow page still gets its reply; the reply says where the tab is

    async def set_viewport(self, width: int, height: int, device_scale: float = 1.0) -> None:
        async with translated("Resizing the viewport"):
            await self.page.set_viewport_size({"width": width, "height": height})
            # Playwright sets the device scale per context only: a tab's own goes through CDP, the
            # way Playwright's emulation does it (its screenshots stay at the context's scale, which
            # the coordinate mapping measures on the image). Only once a scale other than 1 was asked.
            if device_scale != 1 or self._device_scale != 1:
                await self.channel.send("Emulation.setDeviceMetricsOverride", {
                    "width": width, "height": height, "deviceScaleFactor": device_scale, "mobile": False})
                self._device_scale = device_scale

    async def close(self) -> None:
        try:
            await self.page.close()
        except PWError:
            pass

    async def bring_to_front(self) -> None:
        async with translated("Switching tabs"):
            await self.page.bring_to_front()

    async def web_storage(self, area: str, operation: str, key: str | None = None, value: str | None = None,
                          *, timeout: float) -> dict[str, str]:
        try:
            return await asyncio.wait_for(self.page.evaluate(WEB_STORAGE, [area, operation, key, value]), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"Reading {area}Storage did not finish within {timeout:g} s.",
                                "The page may be busy: call browser_snapshot, then try again.") from None
        except PWError as error:
            if "access is denied" in str(error).lower() or "securityerror" in str(error).lower():
                raise WebhandError(f"This page ({self.page.url}) has no {area}Storage (about:blank, data: and "
                                   "sandboxed pages have none).", "Navigate to a page of the site first.") from None
            raise translate(error, f"Using {area}Storage", timeout) from None

    # policy ----------------------------------------------------------------------------------
    async def _before_navigation(self, url: str) -> None:
        self._refusals_before = before_navigation(self._policy, url, self._tracker.refusals)
        if self._redirect_guard is not None:
            await self._redirect_guard  # installed before this tab's first navigation can redirect

    def _refused(self, url: str, error: Exception) -> PolicyRefused | None:
        """The policy refusal behind a failed navigation (a refused redirect), if that is what it was."""
        return navigation_refusal(self._policy, url, str(error), self._tracker.refusals, self._refusals_before)

    # scrolling ----------------------------------------------------------------------------
    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str:
        async with translated("Scrolling the page", timeout):
            left, top, width, height = await asyncio.wait_for(self.page.evaluate(SCROLL, [x, y]), timeout)
        return f"The page is scrolled to x={left}, y={top} (page size {width}x{height})."

    # waiting ---------------------------------------------------------------------------------
    def settling(self, caps: SettleCaps) -> PlaywrightSettling:
        return PlaywrightSettling(self._tracker, caps)

    async def wait_for(self, condition: WaitCondition, *, timeout: float) -> str:
        return await wait_for_condition(self.page, self._tracker, condition, timeout)

    # CDP ----------------------------------------------------------------------------------------
    async def _session(self) -> CDPSession:
        # One future, so that callers racing at the tab's start share one session.
        if self._cdp is None or (self._cdp.done() and (self._cdp.cancelled() or self._cdp.exception() is not None)):
            self._cdp = asyncio.ensure_future(self.page.context.new_cdp_session(self.page))
        return await asyncio.shield(self._cdp)
