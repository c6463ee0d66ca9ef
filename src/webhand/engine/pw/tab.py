"""One page: navigation, frames and refs, screenshots, JavaScript, console events."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError
from playwright.async_api import Frame as PWFrame
from playwright.async_api import Page as PWPage
from playwright.async_api import TimeoutError as PWTimeout

from webhand.engine.console_javascript import ConsoleJavaScript
from webhand.engine.devtools import PerformanceCounters
from webhand.engine.driver import (ConsoleEntry, InputEvent, NavigationResult, NetworkConditions, ScreencastFrame,
                                   ServiceWorkerRegistration, TabEvents, WaitUntil)
from webhand.engine.live_view import LiveView, Screencast
from webhand.engine.page_scripts import SELECTOR_OF_REF, WEB_STORAGE
from webhand.engine.policy import refused_navigation
from webhand.engine.pw.channel import PlaywrightChannel, viewport_of
from webhand.engine.pw.dialogs import PlaywrightDialog, PlaywrightFileChooser
from webhand.engine.pw.devtools import TabDevtools
from webhand.engine.pw.network import NetworkLog
from webhand.engine.pw.element import PlaywrightElement, PlaywrightFrame
from webhand.engine.pw.errors import SNAPSHOT_AGAIN, navigation_error, translate, translated
from webhand.engine.pw.liveness import TabLiveness
from webhand.engine.pw.policy import OriginPolicy
from webhand.engine.pw.settle import document_loaded
from webhand.engine.pw.tab_actions import TabActions
from webhand.engine.service_workers import ServiceWorkerActions
from webhand.errors import ActionTimeout, RefNotFound, WebhandError

_REF = re.compile(r"^(?:(f\d+))?(e\d+)$")
#: Longest a failed navigation waits for Chromium's error page to take its place (it takes ~0.1 s).
_ERROR_PAGE_CAP_SECONDS = 5.0


# History, keys, waiting, policy: tab_actions.py; crash, hang: liveness.py. Evaluating, the dashboard's
# live view, service workers and performance counters: the shared components made in __init__.
class PlaywrightTab(TabActions, TabLiveness):
    def __init__(self, page: PWPage, index: int, events: TabEvents, policy: OriginPolicy | None = None,
                 network_conditions: Callable[[], NetworkConditions] | None = None, *,
                 response_sources: bool = True) -> None:
        self.page = page
        self.index = index
        self._events = events
        self._frame_keys: dict[PWFrame, str] = {}
        self._frames_seen = 0
        self.next_ref: dict[str, int] = {}  # per frame key; keeps counting across documents
        self._cdp: asyncio.Future[CDPSession] | None = None
        # Console messages are heard on the context (context.py), which knows workers from pages.
        page.on("pageerror", self._on_page_error)
        page.on("dialog", self._on_dialog)
        page.on("filechooser", self._on_file_chooser)  # listening makes Playwright intercept choosers
        self._watch_crash()
        # Told the moment the page asks for a new window (window.open, target=_blank), before the
        # new tab exists: the context counts it so an action can wait for the tab (context.py).
        self.on_window_open: Any = None
        self._window_watch = asyncio.ensure_future(self._watch_window_open())
        self._start_tracking(policy)  # requests in flight, action watches, the redirect guard
        # response sources, iframe console messages, service workers, network emulation
        self.devtools = TabDevtools(self._session, network_conditions, response_sources=response_sources)
        self.network_log = NetworkLog(page, events, index, self.devtools.claim_source)
        # The CDP work both drivers do alike, written once on the tab's session (engine/channel.py).
        self.channel = PlaywrightChannel(page, self._session)
        self.console = ConsoleJavaScript(self.channel)
        self.live_view = LiveView(self.channel, viewport_of(page))
        self.service_worker_actions = ServiceWorkerActions(self.channel, self.devtools.service_worker_registry,
                                                           self.console, lambda: self.url)
        self.performance = PerformanceCounters(self.channel, enabled=self.devtools.ready)

    # events -----------------------------------------------------------------------------------

    def _on_page_error(self, error: Any) -> None:
        if self._events.console:
            self._events.console(ConsoleEntry("pageerror", str(error), "", self.index))

    def _on_dialog(self, dialog: Any) -> None:
        if self._events.dialog:
            self._events.dialog(PlaywrightDialog(dialog, self.index))
        else:  # nobody to ask: behave like a headless browser and dismiss, so the page never hangs
            asyncio.ensure_future(PlaywrightDialog(dialog, self.index).dismiss(timeout=5))

    async def _watch_window_open(self) -> None:
        try:
            session = await self._session()
            session.on("Page.windowOpen", lambda _: self.on_window_open() if self.on_window_open else None)
            await session.send("Page.enable")
        except PWError:
            pass  # the page closed first; nothing to watch

    def _on_file_chooser(self, chooser: Any) -> None:
        if self._events.file_chooser:
            self._events.file_chooser(PlaywrightFileChooser(chooser, self.index))

    # basics -----------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.page.url

    @property
    def closed(self) -> bool:
        return self.page.is_closed() or self._ended

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
        await self.devtools.ready  # so that the sources of this page's responses are heard
        answered_with_file = False

        def watch(response: Any) -> None:
            nonlocal answered_with_file
            if response.request.is_navigation_request() and response.frame == self.page.main_frame:
                kind = (response.headers.get("content-disposition") or "").lower()
                answered_with_file |= kind.startswith("attachment") or \
                    response.headers.get("content-type", "").startswith("application/octet-stream")

        self.page.on("response", watch)
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
            self.page.remove_listener("response", watch)
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

    async def screenshot(self, *, full_page: bool, timeout: float) -> bytes:
        async with translated("Taking a screenshot", timeout):
            return await self.page.screenshot(full_page=full_page, type="png", timeout=timeout * 1000)

    async def set_viewport(self, width: int, height: int) -> None:
        async with translated("Resizing the viewport"):
            await self.page.set_viewport_size({"width": width, "height": height})

    async def close(self) -> None:
        try:
            await self.page.close()
        except PWError:
            pass

    async def bring_to_front(self) -> None:
        async with translated("Switching tabs"):
            await self.page.bring_to_front()

    async def pdf(self, *, timeout: float) -> bytes:
        try:
            return await asyncio.wait_for(self.page.pdf(print_background=True), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"Printing the page to PDF did not finish within {timeout:g} s.",
                                "Retry with a larger timeout, or take a screenshot instead.") from None
        except PWError as error:
            raise translate(error, "Printing the page to PDF", timeout) from None

    async def set_input_files(self, element: Any, paths: list[str], *, timeout: float) -> None:
        """Give files to an <input type=file> directly (no file chooser; works on hidden inputs too)."""
        async with translated(f"Setting the files of {element.ref}", timeout):
            await element.handle.set_input_files(paths, timeout=timeout * 1000)

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

    # frames and refs --------------------------------------------------------------------------
    def _key(self, frame: PWFrame) -> str:
        if frame == self.page.main_frame:
            return ""
        key = self._frame_keys.get(frame)
        if key is None:
            self._frames_seen += 1
            key = self._frame_keys[frame] = f"f{self._frames_seen}"
        return key

    async def frames(self) -> list[PlaywrightFrame]:
        """All live frames, parents before children, each with a key that never changes."""
        live = [f for f in self.page.frames if not f.is_detached()]
        for gone in [f for f in self._frame_keys if f not in live]:
            del self._frame_keys[gone]
        return [PlaywrightFrame(f, self._key(f), self._key(f.parent_frame) if f.parent_frame else None) for f in live]

    async def resolve(self, ref: str, *, timeout: float) -> PlaywrightElement:
        """The exact element a snapshot gave ``ref`` to, or ``RefNotFound``; never a look-alike."""
        match = _REF.match(ref.strip())
        if not match:
            raise RefNotFound(f"'{ref}' is not a ref.", "Refs look like e12 or f1e3; " + SNAPSHOT_AGAIN)
        frame_key, local = match.group(1) or "", match.group(2)
        frame = self.page.main_frame if not frame_key else next(
            (f for f, k in self._frame_keys.items() if k == frame_key and not f.is_detached()), None)
        if frame is None:
            raise RefNotFound(f"Ref {ref} is stale: its frame is gone.", SNAPSHOT_AGAIN)
        try:
            handle = await asyncio.wait_for(frame.evaluate_handle(
                "r => window.__webhand ? window.__webhand.resolve(r) : 'unknown'", local), timeout)
        except (PWError, asyncio.TimeoutError) as error:
            raise translate(error, f"Finding {ref}", timeout) from None
        element = handle.as_element()
        if element is None:
            reason = await handle.json_value()
            if reason == "removed":
                raise RefNotFound(f"Ref {ref} is stale: its element was removed or replaced since the snapshot.", SNAPSHOT_AGAIN)
            raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated or the ref was never issued).",
                              SNAPSHOT_AGAIN)
        return PlaywrightElement(element, ref, self._session)

    async def stable_selector(self, ref: str, *, timeout: float) -> str:
        match = _REF.match(ref.strip())
        if not match or match.group(1):  # a frame's element would need its frame's selector too
            return ""
        try:
            found = await asyncio.wait_for(self.page.main_frame.evaluate(SELECTOR_OF_REF, match.group(2)), timeout)
        except (PWError, asyncio.TimeoutError) as error:
            raise translate(error, f"Reading a selector for {ref}", timeout) from None
        return found if isinstance(found, str) else ""

    async def query(self, selector: str, *, timeout: float) -> PlaywrightElement:
        try:
            handle = await self.page.wait_for_selector(selector, state="attached", timeout=timeout * 1000)
        except PWTimeout:
            raise RefNotFound(f"No element matches the selector {selector!r}.",
                              "Call browser_snapshot and use a ref, or fix the selector.") from None
        except PWError as error:
            raise RefNotFound(f"The selector {selector!r} is not valid: {str(error).splitlines()[0]}",
                              "Use a CSS selector, or a ref from browser_snapshot.") from None
        assert handle is not None
        return PlaywrightElement(handle, selector, self._session)

    # the shared components (engine/console_javascript.py, live_view.py, service_workers.py, devtools.py)
    async def evaluate(self, expression: str, *, await_promise: bool, timeout: float) -> Any:
        return await self.console.evaluate(expression, await_promise=await_promise, timeout=timeout)

    async def thumbnail(self, *, width: int, timeout: float) -> bytes:
        return await self.live_view.thumbnail(width=width, timeout=timeout)

    async def start_screencast(self, on_frame: Callable[[ScreencastFrame], None], *, max_width: int,
                               max_height: int, quality: int) -> Screencast:
        return await self.live_view.start_screencast(on_frame, max_width=max_width, max_height=max_height,
                                                     quality=quality)

    async def dispatch_input(self, event: InputEvent, *, timeout: float) -> None:
        await self.live_view.dispatch_input(event, timeout=timeout)

    async def service_workers(self) -> list[ServiceWorkerRegistration]:
        return await self.service_worker_actions.service_workers()

    async def service_worker_action(self, action: str, scope: str, *, timeout: float) -> None:
        await self.service_worker_actions.service_worker_action(action, scope, timeout=timeout)

    async def performance_metrics(self, *, timeout: float) -> dict[str, float]:
        return await self.performance.read(timeout=timeout)

    # CDP ----------------------------------------------------------------------------------------
    async def _session(self) -> CDPSession:
        # One future, so that callers racing at the tab's start share one session.
        if self._cdp is None or (self._cdp.done() and (self._cdp.cancelled() or self._cdp.exception() is not None)):
            self._cdp = asyncio.ensure_future(self.page.context.new_cdp_session(self.page))
        return await asyncio.shield(self._cdp)
