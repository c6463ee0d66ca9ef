"""One page over raw CDP: its CDP session(s), navigation, scrolling, settling; its components.

The tab's page is a flattened session on the browser's connection; each out-of-process iframe
(and worker) attaches as a session of its own (``Target.setAutoAttach`` with flatten), paused
until its listeners and domains are set up, so no early event is missed.

The tab owns its collaborators, each given what it needs when the tab is made: the frame tree,
which also resolves refs (frames.py); the request tracker of the settle rules (engine/settle.py);
the page's events (events.py) and network log (network.py); its workers (workers.py). Its
components (engine/driver.py), which callers reach as attributes: ``liveness`` (liveness.py), and
the ones written once for both Chromium drivers on the tab's CDP session: ``console``
(engine/console_javascript.py), ``live_view`` (engine/live_view.py), ``service_workers``
(engine/service_workers.py), ``performance`` (engine/devtools.py); and ``keyboard`` (keyboard.py) and
``capture`` (capture.py), each on the page's CDP session; ``refs`` (refs.py), on the frame tree;
``history`` (history.py), back, forward and reload.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

from webhand.engine import settle
from webhand.engine.cdp import stealth
from webhand.engine.cdp.capture import PageCapture
from webhand.engine.cdp.channel import CdpSessionChannel
from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded
from webhand.engine.cdp.events import CdpPageEvents
from webhand.engine.cdp.history import CdpHistory
from webhand.engine.cdp.keyboard import CdpKeyboard
from webhand.engine.cdp.frames import FrameState, FrameTree
from webhand.engine.cdp.refs import TabRefs
from webhand.engine.cdp.liveness import Liveness
from webhand.engine.cdp.network import CdpNetworkLog
from webhand.engine.cdp.waits import wait_for
from webhand.engine.cdp.workers import TabWorkers
from webhand.engine.devtools import PerformanceCounters
from webhand.engine.driver import (NavigationResult, SettleCaps,
                                   TabEvents, WaitCondition, WaitUntil)
from webhand.engine.live_view import LiveView
from webhand.engine.console_javascript import ConsoleJavaScript
from webhand.engine.isolated_world import IsolatedScripts
from webhand.engine.net_errors import net_failure
from webhand.engine.page_scripts import SCROLL, WEB_STORAGE
from webhand.engine.policy import before_navigation, navigation_refusal, refused_navigation
from webhand.engine.page_tools import ChromiumPageTools
from webhand.engine.service_workers import ServiceWorkerActions
from webhand.engine.settle import DocumentReplaced, PageGone, PageSettling
from webhand.errors import ActionTimeout, NavigationFailed, PolicyRefused, WebhandError

if TYPE_CHECKING:
    from webhand.engine.policy import OriginPolicy
    from webhand.engine.stealth import StealthProfile


_CONTENT_LOADED = """() => document.readyState !== 'loading' ||
  new Promise(resolve => document.addEventListener('DOMContentLoaded', () => resolve(true), {once: true}))"""
_LIFECYCLE = {"load": "load", "domcontentloaded": "DOMContentLoaded", "networkidle": "networkIdle"}


class TabContext(Protocol):
    """What a tab asks of the browser context it belongs to (``CdpContext``): what each new session
    of its page gets before it runs (the context's interception and network emulation, and its
    disguise), and the context's count of the origins, downloads and windows its pages open."""

    stealth: StealthProfile | None
    downloads_begun: int

    def session_setup(self, session_id: str, *, worker: bool = False, routed: bool = True) -> list[Awaitable[Any]]: ...

    def note_origin(self, origin: str) -> None: ...

    def announce_download(self) -> None: ...

    def announce_tab(self) -> None: ...

    def expecting_download(self) -> bool: ...


class CdpTab:
    def __init__(self, context: TabContext, connection: CdpConnection, target_id: str, session_id: str,
                 index: int, events: TabEvents, policy: OriginPolicy | None) -> None:
        self._context = context
        self.connection = connection
        self.target_id = target_id
        self.session_id = session_id
        self.index = index
        self._policy = policy
        self._refusals_before = 0  # the refusal log's count when the current navigation began
        self.next_ref: dict[str, int] = {}
        # The page's session, its out-of-process frames' and its dedicated workers': the listeners
        # of each go when it detaches; the context's emulation and routes reach each.
        self.sessions: set[str] = {session_id}
        self._lifecycle: dict[str, set[str]] = {}  # loader id -> lifecycle events seen
        self._main_loader = ""
        self.frame_tree = FrameTree(connection)
        refusals = policy.log_for(context) if policy is not None else None
        self.tracker = settle.RequestTracker(self, policy, refusals)
        self.liveness = Liveness(connection, session_id, target_id, self.frame_tree, self.tracker)
        self.network_log = CdpNetworkLog(connection)  # requests in full (browser_network_request)
        self.page_events = CdpPageEvents(connection, session_id, index, self.frame_tree, self.tracker, self.network_log,
                                      events, download_announced=context.announce_download,
                                      window_opened=context.announce_tab)
        self.workers = TabWorkers(connection, session_id, index, events, self.sessions)
        # The CDP work both Chromium drivers do alike, written once on the tab's session (engine/channel.py).
        self.channel = CdpSessionChannel(connection, session_id, target_id)
        self.console = ConsoleJavaScript(self.channel)
        self.live_view = LiveView(self.channel)
        self.service_workers = ServiceWorkerActions(self.channel, self.workers.registry, self.console,
                                                    lambda: self.url)
        self.performance = PerformanceCounters(self.channel)
        self.isolated = IsolatedScripts(self.channel)  # webhand's own scripts, out of the page's reach
        self.keyboard = CdpKeyboard(connection, session_id)  # keyboard.py
        self.capture = PageCapture(connection, session_id)  # capture.py
        self.refs = TabRefs(self.frame_tree, self, lambda: self.liveness.crashed)  # refs.py
        self.history = CdpHistory(connection, session_id, self)  # history.py
        self.page_tools = ChromiumPageTools(self.channel)  # the page's own tools (WebMCP)

    # set-up ------------------------------------------------------------------------------------
    async def start(self, *, width: int, height: int) -> None:
        """Listen, enable the domains, size the viewport, then let the page run."""
        tree = await self._attach_session(self.session_id, main=True, width=width, height=height)
        self._adopt_tree(tree["frameTree"], self.session_id)

    def _adopt_tree(self, node: dict[str, Any], session_id: str) -> None:
        """The frames that existed before the listeners did. Events may have come meanwhile (the
        page ran as soon as it was resumed): what they said is newer, and kept."""
        frame = node["frame"]
        known = frame["id"] in self.frame_tree.frames and self.frame_tree.frames[frame["id"]].url
        if not known:
            self.frame_tree.navigated(frame, session_id)
        if frame.get("parentId") is None and session_id == self.session_id:
            self.frame_tree.main_id = frame["id"]
            self._main_loader = self._main_loader or frame.get("loaderId", "")
        for child in node.get("childFrames", []):
            self._adopt_tree(child, session_id)

    async def _attach_session(self, session_id: str, *, main: bool, width: int = 0, height: int = 0) -> dict[str, Any]:
        """Set up one session of the tab; returns its frame tree."""
        self._listen(session_id)
        send = self.connection.send
        commands = [
            send.Page.enable(session_id=session_id),
            send.Page.setLifecycleEventsEnabled(params={"enabled": True}, session_id=session_id),
            send.Runtime.enable(session_id=session_id),
            send.Inspector.enable(session_id=session_id),  # for Inspector.targetCrashed
            send.Network.enable(session_id=session_id),
            send.Page.setInterceptFileChooserDialog(params={"enabled": True}, session_id=session_id),
            send.Target.setAutoAttach(params={"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
                                      session_id=session_id),
        ]
        if main and width:  # width 0: a tab of the person's own browser keeps its window's size
            commands.append(send.Emulation.setDeviceMetricsOverride(
                params={"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                session_id=session_id))
        if main:
            commands += [
                # A tab that is not in front still gets focus events and :focus, as in Playwright.
                send.Emulation.setFocusEmulationEnabled(params={"enabled": True}, session_id=session_id),
            ]
        commands += self._context.session_setup(session_id)  # the policy's and routes' Fetch, emulation
        commands += stealth.session_commands(self.connection, self._context.stealth, session_id)
        commands.append(send.Page.getFrameTree(session_id=session_id))
        # All sent at once, the resume last: a popup shares its opener's renderer, which stays
        # paused (and answers nothing) until the resume arrives; the browser runs them in order.
        tasks = [asyncio.ensure_future(command) for command in commands]
        tasks.append(asyncio.ensure_future(send.Runtime.runIfWaitingForDebugger(session_id=session_id)))
        results = await asyncio.gather(*tasks)
        return dict(results[-2])

    def _listen(self, session_id: str) -> None:
        on = self.connection.on
        on("Page.frameAttached", session_id, lambda p: self.frame_tree.attached(p["frameId"], p.get("parentFrameId"), session_id))
        on("Page.frameNavigated", session_id, lambda p: self._on_navigated(p, session_id))
        on("Page.navigatedWithinDocument", session_id, self._on_same_document)
        on("Page.frameDetached", session_id, lambda p: self._on_frame_detached(p))
        on("Page.lifecycleEvent", session_id, lambda p: self._on_lifecycle(p, session_id))
        on("Runtime.executionContextCreated", session_id, lambda p: self._context_created(p, session_id))
        on("Runtime.executionContextDestroyed", session_id,
           lambda p: self.frame_tree.context_destroyed(p["executionContextId"], session_id))
        on("Runtime.executionContextsCleared", session_id, lambda p: self.frame_tree.contexts_cleared(session_id))
        on("Target.attachedToTarget", session_id, lambda p: asyncio.ensure_future(self._on_child(p)))
        on("Target.detachedFromTarget", session_id, self._on_child_detached)
        on("Inspector.targetCrashed", session_id, lambda p: self.on_crash() if session_id == self.session_id else None)
        self.page_events.listen(session_id)

    # events ------------------------------------------------------------------------------------
    def _on_navigated(self, params: dict[str, Any], session_id: str) -> None:
        frame = params["frame"]
        self.frame_tree.navigated(frame, session_id)
        if frame.get("parentId") is None and session_id == self.session_id:
            self.frame_tree.main_id = frame["id"]
            self._main_loader = frame.get("loaderId", "")
            self.tracker.main_committed()
        else:
            self.tracker.frame_committed()
        self._context.note_origin(self.frame_tree.origin_of(frame["id"]))

    def _on_same_document(self, params: dict[str, Any]) -> None:
        state = self.frame_tree.frames.get(params["frameId"])
        if state is not None:
            state.url = params["url"]
        self.tracker.frame_committed()

    def _on_frame_detached(self, params: dict[str, Any]) -> None:
        self.frame_tree.detached(params["frameId"], params.get("reason", "remove"))
        self.tracker.frame_committed()

    def _on_lifecycle(self, params: dict[str, Any], session_id: str) -> None:
        if params["frameId"] == self.frame_tree.main_id and session_id == self.session_id:
            self._lifecycle.setdefault(params["loaderId"], set()).add(params["name"])
            if params["name"] == "load":
                self.tracker.loaded()
            self.tracker.activity.set()

    def _context_created(self, params: dict[str, Any], session_id: str) -> None:
        self.frame_tree.context_created(params["context"], session_id)
        self.tracker.activity.set()

    async def _on_child(self, params: dict[str, Any]) -> None:
        """An out-of-process iframe or a worker of this page: set it up, then let it run."""
        child, info = params["sessionId"], params["targetInfo"]
        try:
            if info["type"] == "iframe":
                self.sessions.add(child)
                self.frame_tree.attached(info["targetId"], self.frame_tree.frames.get(info["targetId"], FrameState(
                    info["targetId"], None, child)).parent_id, child)
                tree = await self._attach_session(child, main=False)
                self._adopt_tree(tree["frameTree"], child)
            else:
                tasks = []
                if info["type"] in ("worker", "service_worker"):
                    tasks += [asyncio.ensure_future(c) for c in self._context.session_setup(child, worker=True)]
                tasks += self.workers.hear(child, info)
                tasks.append(asyncio.ensure_future(self.connection.send.Runtime.runIfWaitingForDebugger(session_id=child)))
                await asyncio.gather(*tasks)
        except PROTOCOL_ERRORS:
            pass  # it went away while it was being set up

    def _on_child_detached(self, params: dict[str, Any]) -> None:
        child = params.get("sessionId", "")
        if child in self.sessions and child != self.session_id:
            self.sessions.discard(child)
            self.frame_tree.session_gone(child)
            self.connection.forget_session(child)
            self.tracker.activity.set()

    def on_crash(self) -> None:
        self.liveness.on_crash()

    def detached(self) -> None:
        """The page's target is gone (closed by anyone)."""
        self.liveness.on_target_gone()
        for session in self.sessions:
            self.connection.forget_session(session)

    # PageProbe (settle rules) ------------------------------------------------------------------
    async def main_evaluate(self, script: str, arg: Any = None) -> Any:
        state = self.frame_tree.frames.get(self.frame_tree.main_id)
        if state is None or self.closed or self.liveness.crashed:
            raise PageGone()
        if arg is None:
            return await self.frame_tree.evaluate(state, script, timeout=3600)
        return await self.frame_tree.evaluate(state, script, arg, timeout=3600)

    async def events_caught_up(self) -> None:
        """At once: the page's events (a request it starts) come on its session before the answer
        to a script that ran after them."""

    async def next_event(self, cap: float) -> None:
        """Wait for any page event, at most ``cap`` seconds (a retry loop's pause)."""
        self.tracker.activity.clear()
        try:
            await asyncio.wait_for(self.tracker.activity.wait(), cap)
        except TimeoutError:
            pass

    # basics -----------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        state = self.frame_tree.frames.get(self.frame_tree.main_id)
        return state.url if state else ""

    @property
    def closed(self) -> bool:
        return self.liveness.closed

    async def title(self) -> str:
        try:
            history = await self.connection.send.Page.getNavigationHistory(session_id=self.session_id)
            return history["entries"][history["currentIndex"]].get("title", "")
        except (*PROTOCOL_ERRORS, KeyError, IndexError):
            return ""

    async def warm_up(self) -> None:
        """Nothing to prepare: the session is open from the start."""

    # the origin policy ---------------------------------------------------------------------------
    async def _before_navigation(self, url: str) -> None:
        self._refusals_before = before_navigation(self._policy, url, self.tracker.refusals)

    def _refused(self, url: str, error_text: str) -> PolicyRefused | None:
        return navigation_refusal(self._policy, url, error_text, self.tracker.refusals, self._refusals_before)

    # navigation ------------------------------------------------------------------------------
    async def navigate(self, url: str, *, wait_until: WaitUntil = "load", timeout: float,
                       title: bool = True) -> NavigationResult:
        await self._before_navigation(url)  # the origin policy refuses before anything loads
        commits, downloads = self.tracker.commits, self._context.downloads_begun
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            async with guarded(f"Navigation to {url}", timeout):
                result = await self.connection.send.Page.navigate(params={"url": url}, session_id=self.session_id)
        except ActionTimeout:
            raise ActionTimeout(f"Navigation to {url} did not finish within {timeout:g} s.",
                                "Retry with wait_until='domcontentloaded' or a larger timeout; browser_snapshot shows what loaded.") from None
        except WebhandError as error:
            raise net_failure(str(error), url) or error from None
        error_text = result.get("errorText", "")
        loader = result.get("loaderId", "")
        if error_text:
            if "ERR_ABORTED" in error_text and (self._context.downloads_begun > downloads or
                                                 self._answered_with_file(loader) or self._context.expecting_download()):
                return NavigationResult(self.url, None, await self.title(), download=True)
            if "ERR_ABORTED" not in error_text:
                await self._error_page_shown(commits, timeout)
            refused = self._refused(url, error_text)
            raise refused or net_failure(error_text, url) or NavigationFailed(
                f"Navigation to {url} failed: {error_text}.", "Check the URL, then call browser_navigate again.")
        if loader:
            await self._wait_lifecycle(url, loader, wait_until, deadline, timeout)
        status, headers = self.page_events.document_responses.pop(loader, (None, {})) if loader else (None, {})
        proxy_refusal = self._policy.refused_response(url, headers) if self._policy and headers else None
        if proxy_refusal:  # the policy proxy answered in the server's place
            raise refused_navigation(url, proxy_refusal)
        if not url.lower().startswith(("http:", "https:")):
            status = None  # data:, about:, file: documents have no HTTP status (as Playwright reports)
        return NavigationResult(self.url, status, await self.title() if title else "")

    def _answered_with_file(self, loader: str) -> bool:
        _, headers = self.page_events.document_responses.get(loader, (None, {}))
        return headers.get("content-disposition", "").lower().startswith("attachment") or \
            headers.get("content-type", "").startswith("application/octet-stream")

    async def _wait_lifecycle(self, url: str, loader: str, wait_until: str, deadline: float, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        if wait_until == "commit":
            done = lambda: self._main_loader == loader or self.closed
        else:
            name = _LIFECYCLE[wait_until]
            done = lambda: name in self._lifecycle.get(loader, ()) or self.closed
        if not await self.tracker.until(done, max(0.0, deadline - loop.time())):
            if self._main_loader != loader and self._context.downloads_begun:
                return
            raise ActionTimeout(f"Navigation to {url} did not finish within {timeout:g} s.",
                                "Retry with wait_until='domcontentloaded' or a larger timeout; browser_snapshot shows what loaded.")

    async def _error_page_shown(self, commits: int, timeout: float) -> None:
        """Wait (capped) for the error page Chromium shows after a network failure, so that a
        navigation or snapshot made next is not cut off by it."""
        cap = min(timeout, 5.0)
        if await self.tracker.until(lambda: self.tracker.commits > commits, cap):
            try:
                await settle.document_loaded(self, cap)
            except (settle.LoadTimeout, PageGone):
                pass

    async def wait_for_load(self, *, timeout: float) -> None:
        """Wait for the current document's DOMContentLoaded (returns at once if it came). A tab's
        first about:blank may have fired it before the tab was listening: its readyState says so."""
        if "DOMContentLoaded" in self._lifecycle.get(self._main_loader, ()):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (remaining := deadline - loop.time()) > 0 and not self.closed:
            try:
                await asyncio.wait_for(self.main_evaluate(_CONTENT_LOADED), remaining)
                return
            except (TimeoutError, PageGone):
                return  # a slow page still gets its reply; the reply says where the tab is
            except DocumentReplaced:
                continue  # wait on the document that replaced it

    # history (history.py) and scrolling -----------------------------------------------------------------
    def main_document_status(self) -> int | None:
        """The HTTP status of the main frame's current document, when its response was seen (taken:
        history.py asks once per navigation)."""
        loader = self._main_loader
        if loader in self.page_events.document_responses:
            return self.page_events.document_responses.pop(loader)[0]
        return None

    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str:
        state = self.frame_tree.frames[self.frame_tree.main_id]
        async with guarded("Scrolling the page", timeout):
            left, top, width, height = await self.frame_tree.evaluate(state, SCROLL, [x, y], timeout=timeout)
        return f"The page is scrolled to x={left}, y={top} (page size {width}x{height})."

    def settling(self, caps: SettleCaps) -> PageSettling:
        return PageSettling(self.tracker, caps)

    # the page ------------------------------------------------------------------------------
    async def set_viewport(self, width: int, height: int, device_scale: float = 1.0) -> None:
        async with guarded("Resizing the viewport", 30):
            await self.connection.send.Emulation.setDeviceMetricsOverride(params={
                "width": width, "height": height, "deviceScaleFactor": device_scale, "mobile": False}, session_id=self.session_id)

    async def close(self) -> None:
        if self.closed:
            return
        try:
            await asyncio.wait_for(self.connection.send.Target.closeTarget(params={"targetId": self.target_id}), 5)
        except (TimeoutError, *PROTOCOL_ERRORS):
            pass
        await self.tracker.until(lambda: self.liveness.target_gone, 2)

    async def bring_to_front(self) -> None:
        async with guarded("Switching tabs", 30):
            await self.connection.send.Page.bringToFront(session_id=self.session_id)

    async def web_storage(self, area: str, operation: str, key: str | None = None, value: str | None = None,
                          *, timeout: float) -> dict[str, str]:
        state = self.frame_tree.frames.get(self.frame_tree.main_id)
        try:
            if state is None:
                raise DocumentReplaced()
            return await asyncio.wait_for(self.frame_tree.evaluate(state, WEB_STORAGE, [area, operation, key, value]), timeout)
        except TimeoutError:
            raise ActionTimeout(f"Reading {area}Storage did not finish within {timeout:g} s.",
                                "The page may be busy: call browser_snapshot, then try again.") from None
        except (DocumentReplaced, PageGone):
            raise WebhandError(f"Using {area}Storage failed: the page navigated or closed meanwhile.",
                               "Call browser_snapshot, then try again.") from None
        except WebhandError as error:
            if "access is denied" in str(error).lower() or "securityerror" in str(error).lower():
                raise WebhandError(f"This page ({self.url}) has no {area}Storage (about:blank, data: and "
                                   "sandboxed pages have none).", "Navigate to a page of the site first.") from None
            raise

    async def wait_for(self, condition: WaitCondition, *, timeout: float) -> str:
        return await wait_for(self, condition, timeout)


__all__ = ["CdpTab"]
