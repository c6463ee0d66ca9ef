"""One Firefox tab over WebDriver BiDi: a top-level browsing context, its page agent, refs and input.

The page agent (page/snapshot.js) runs in a sandbox realm (``script.callFunction`` with
``sandbox``): the page's own scripts cannot see or replace it. A ref resolves there to the node,
which BiDi hands back by ``sharedId``; later calls pass that id as ``this``. Input goes through
``input.performActions`` (a pointer moved to the element's box centre, pressed, released; keys).
The settle rules are engine/settle.py's, fed with the tab's ``network`` events.

One class per file, as in engine/cdp/: the tab here; its elements (element.py), frames (frames.py)
and dialogs (dialogs.py); its components (engine/driver.py's ``liveness``, ``live_view``, ...) in
liveness.py, screen_capture.py, service_workers.py, performance.py, javascript.py, keyboard.py, capture.py,
refs.py (frames and refs) and history.py.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Literal, Protocol

from webhand.engine import settle
from webhand.engine.bidi import console, javascript, screen_capture, service_workers, values
from webhand.engine.bidi.waits import wait_for
from webhand.engine.bidi.capture import BidiCapture
from webhand.engine.bidi.connection import PROTOCOL_ERRORS, BidiConnection, BidiError, guarded, translate
from webhand.engine.bidi.dialogs import BidiDialog
from webhand.engine.bidi.files import SessionDownloads
from webhand.engine.bidi.history import BidiHistory
from webhand.engine.bidi.isolated_world import BidiIsolatedScripts
from webhand.engine.bidi.keyboard import BidiKeyboard
from webhand.engine.bidi.liveness import Liveness
from webhand.engine.bidi.network import SessionNetwork, TabNetworkLog, resource_type
from webhand.engine.bidi.page_requests import announced
from webhand.engine.bidi.page_tools import NoPageTools
from webhand.engine.bidi.performance import NoPerformanceCounters
from webhand.engine.bidi.policy import BidiPolicy, TabPolicy
from webhand.engine.bidi.point_input import PointInput
from webhand.engine.bidi.refs import BidiRefs
from webhand.engine.bidi.realms import WorkerScripts
from webhand.engine.driver import ConsoleEntry, NavigationResult, SettleCaps, TabEvents, WaitCondition, WaitUntil
from webhand.engine.net_errors import net_failure
from webhand.engine.policy import RefusalLog
from webhand.engine.page_scripts import SCROLL, WEB_STORAGE
from webhand.errors import (ActionTimeout, EvaluationFailed, NavigationFailed, WebhandError)

SANDBOX = "webhand"
_WAIT = {"load": "complete", "domcontentloaded": "interactive", "commit": "none", "networkidle": "complete"}
#: Recent console entries kept untagged in case a dedicated worker's realm is reported after them.
_UNTAGGED_KEPT = 20


class TabOwner(Protocol):
    """What a tab needs of its context (browser.py's ``BidiContext``)."""

    connection: BidiConnection
    events: TabEvents
    policy: BidiPolicy | None
    refusals: RefusalLog | None
    network: SessionNetwork
    files: SessionDownloads
    workers: WorkerScripts

    def tab_closed(self, tab: "BidiTab") -> None: ...

    def note_origin(self, url: str) -> None: ...


class BidiTab:
    """One tab: a top-level browsing context of the session's user context."""

    def __init__(self, context: TabOwner, context_id: str, index: int, url: str = "about:blank") -> None:
        self.context = context
        self.connection: BidiConnection = context.connection
        self.context_id = context_id
        self.index = index
        self.next_ref: dict[str, int] = {}
        self._url = url
        self._closed = False
        self.tracker = settle.RequestTracker(self, context.policy, context.refusals)
        self.policy = TabPolicy(context.policy, context.refusals)  # its navigations' checks (policy.py)
        self.network_log = TabNetworkLog(self.connection, context.events, index, lambda: context.network,
                                         context.files.announce)
        self._requests: dict[str, settle.TrackedRequest] = {}
        self._answered: set[settle.TrackedRequest] = set()  # in _requests, its responseStarted seen
        self._document_status: dict[str, int | None] = {}  # navigation id -> its document's HTTP status
        # The last main document's URL and status: a reload Firefox revalidates answers 304, but the
        # document it shows is the cached one, with its status (as Chromium reports it).
        self._shown: tuple[str, int | None] = ("", None)
        self._frame_contexts: set[str] = set()  # every frame's browsing context seen created (events route by it)
        self._navigations_started = 0  # browsingContext.navigationStarted events seen, and the last one's URL
        self._started_url = ""
        self._prompt = asyncio.Event()  # a user prompt opened (``perform`` stops waiting for its input then)
        self.point_input = PointInput(lambda actions, doing, timeout: self.perform(actions, doing, timeout, release=False))
        # Console entries a dedicated worker may have logged before its realm was reported: (entry,
        # browsing context, script URL), tagged when it is (``worker_started``).
        self._untagged: deque[tuple[ConsoleEntry, str, str]] = deque(maxlen=_UNTAGGED_KEPT)
        # The browsing contexts (the tab's, its frames') whose document has had input from webhand.
        self._interacted: set[str] = set()
        # Its components (engine/driver.py), each in a module of its own here.
        self.console = javascript.BidiConsole(self)
        self.liveness = Liveness(self, self.tracker, lambda: self._navigations_started, lambda: self._closed)
        self.live_view = screen_capture.BidiLiveView(self, self.point_input)
        self.service_workers = service_workers.BidiServiceWorkers(self)
        self.performance = NoPerformanceCounters()
        self.keyboard = BidiKeyboard(self.perform)
        self.capture = BidiCapture(self.connection, context_id)
        self.refs = BidiRefs(self)
        self.history = BidiHistory(self)
        self.isolated = BidiIsolatedScripts(self)  # webhand's own scripts, in a sandbox of their own
        self.page_tools = NoPageTools()  # Firefox has no WebMCP (page_tools.py)

    @property
    def events(self) -> TabEvents:
        return self.context.events

    # fed by the browser's events (browser.py routes them here) --------------------------------
    def on_event(self, method: str, params: dict[str, Any]) -> None:
        if method == "browsingContext.navigationCommitted":
            self._interacted.discard(params.get("context", ""))  # a new document: no input yet
        if method.startswith("network."):
            self.network_log.on_event(method, params)  # the network tools' log (network.py)
        if method == "log.entryAdded":
            self._console(params)
        elif method == "browsingContext.userPromptOpened":
            self._prompt.set()
            dialog = BidiDialog(self, params)
            if self.events.dialog is not None:
                self.events.dialog(dialog)
            else:  # nobody to answer it: dismissed, as a headless browser would
                asyncio.ensure_future(self._dismiss_quietly(dialog))
        elif method == "network.beforeRequestSent":
            request = params.get("request", {})
            main = params.get("navigation") is not None and params.get("context") == self.context_id
            tracked = settle.TrackedRequest(request.get("url", ""), request.get("method", "GET"),
                                            "document" if main else resource_type(request), main)
            self._answered.discard(self._requests.get(request.get("request", "")))  # a redirect's next hop
            self._requests[request.get("request", "")] = tracked
            self.tracker.request_started(tracked)
        elif method == "network.responseStarted":
            # The response's status is known here; Firefox may end the request without a
            # responseCompleted (an <img> from another host answered 404: ORB aborts it, a
            # fetchError NS_BINDING_ABORTED), so its HTTP failure is reported now, as Chromium's
            # responseReceived does.
            tracked = self._requests.get(params.get("request", {}).get("request", ""))
            if tracked is not None and tracked not in self._answered:
                self._answered.add(tracked)
                self.tracker.response(tracked, int(params.get("response", {}).get("status", 0)),
                                      _headers(params.get("response", {})))
        elif method == "network.responseCompleted":
            tracked = self._requests.pop(params.get("request", {}).get("request", ""), None)
            response = params.get("response", {})
            if params.get("navigation") and params.get("context") == self.context_id:
                status = int(response.get("status", 0)) or None
                url = response.get("url", "")
                if status == 304 and self._shown[0] == url:
                    status = self._shown[1]  # revalidated: the document shown is the cached response
                self._shown = (url, status)
                self._document_status[params["navigation"]] = status
            if tracked is not None:
                if tracked in self._answered:
                    self._answered.discard(tracked)
                else:
                    self.tracker.response(tracked, int(response.get("status", 0)), _headers(response))
                self.tracker.finished(tracked)
        elif method == "network.fetchError":
            tracked = self._requests.pop(params.get("request", {}).get("request", ""), None)
            self._answered.discard(tracked)
            if tracked is not None:
                reason = params.get("errorText", "failed")
                # Cancelled by the page or by a navigation (Chromium's net::ERR_ABORTED): not a failure.
                self.tracker.failed(tracked, "net::ERR_ABORTED" if reason == "NS_BINDING_ABORTED" else reason)
        elif method in ("browsingContext.fragmentNavigated", "browsingContext.historyUpdated"):
            if params.get("context") == self.context_id:
                self._url = params.get("url", self._url)
                self.tracker.activity.set()
        elif method.startswith("browsingContext.") and params.get("context") != self.context_id:
            # A frame's navigation: its origin's storage is the session's; the tab's URL and load are the main frame's.
            if method == "browsingContext.navigationCommitted":
                self.context.note_origin(params.get("url", ""))
                self.tracker.frame_committed()
        elif method == "browsingContext.navigationStarted":
            self._navigations_started += 1
            self._started_url = params.get("url", "")
            self.tracker.activity.set()
        elif self.liveness.shows(params.get("url") or ""):
            self.tracker.activity.set()  # the page crashed: Firefox shows its crash page (the tab's URL stays the lost page's)
        elif method == "browsingContext.navigationCommitted" or method == "browsingContext.domContentLoaded":
            self._url = params.get("url", self._url)
            if method == "browsingContext.navigationCommitted":
                self.context.note_origin(params.get("url", ""))
                self.tracker.main_committed()
        elif method == "browsingContext.load":
            self._url = params.get("url", self._url)
            self.tracker.loaded()

    def _console(self, params: dict[str, Any]) -> None:
        """A console message, tagged as the Chromium drivers tag it: "worker" for a dedicated
        worker's (realms.py), "frame" for an iframe's, nothing for the page's own."""
        if self.events.console is None:
            return
        context = (params.get("source") or {}).get("context") or self.context_id
        script = console.script_url(params)
        worker = bool(script) and self.context.workers.runs(context, script)
        entry = console.entry(params, self.index, "worker" if worker else "frame" if context != self.context_id else "")
        if script and not worker:
            self._untagged.append((entry, context, script))
        self.events.console(entry)

    def worker_started(self, context: str, script: str) -> None:
        """A dedicated worker of ``context`` runs ``script``: messages it logged before are its."""
        for entry, logged_in, url in self._untagged:
            if (logged_in, url) == (context, script):
                entry.source = "worker"

    async def _dismiss_quietly(self, dialog: BidiDialog) -> None:
        try:
            await dialog.dismiss(timeout=5)
        except WebhandError:
            pass

    def owns(self, context_id: str) -> bool:
        """Whether ``context_id`` is this tab's browsing context or one of its frames'."""
        return context_id == self.context_id or context_id in self.refs.frame_keys or context_id in self._frame_contexts

    def frame_created(self, context_id: str) -> None:
        """A frame appeared in this tab (``browsingContext.contextCreated`` with a parent of ours)."""
        self._frame_contexts.add(context_id)

    # running scripts ---------------------------------------------------------------------------
    async def call(self, function: str, args: list[Any], *, doing: str, timeout: float, this: Any = None,
                   sandbox: bool = True, context: str | None = None) -> Any:
        """Call ``function`` with ``args`` in the page agent's sandbox (or the page's own realm) of
        the main frame, or of the frame whose browsing context is ``context``."""
        target: dict[str, Any] = {"context": context or self.context_id}
        if sandbox:
            target["sandbox"] = SANDBOX
        params: dict[str, Any] = {"functionDeclaration": function, "target": target, "awaitPromise": True,
                                  "arguments": [values.to_local(a) for a in args], "resultOwnership": "none",
                                  "serializationOptions": {"maxObjectDepth": 20, "maxDomDepth": 0}}
        if this is not None:
            params["this"] = values.to_local(this)
        await self.liveness.before_command()
        try:
            async with guarded(doing, timeout):
                result = await self.connection.send("script.callFunction", params)
        except WebhandError as error:
            raise await self.liveness.explain(error, doing) from None
        if result.get("type") == "exception":
            details = result.get("exceptionDetails") or {}
            raise EvaluationFailed(f"{doing} failed in the page: {details.get('text', 'an exception')}",
                                   "Take a browser_snapshot; the page may have changed.")
        return values.from_remote(result.get("result") or {})

    async def perform(self, actions: list[dict[str, Any]], doing: str, timeout: float, *,
                      context: str | None = None, release: bool = True) -> None:
        """Run input actions, then release what they hold (``release=False`` keeps buttons and keys
        held: input at points, point_input.py). Firefox answers once the page has handled them,
        which it cannot while a dialog the input opened blocks the page: then the action is done
        when the dialog opens, and Firefox's answer comes (unread) after the dialog is answered."""
        if self.tracker.settling is not None:
            # Firefox runs commands to different realms side by side, not in the order sent: the
            # action's settling (settle.WORK_HUB, in the page's realm) must be in place before the input.
            await self.tracker.settling.begun()
        self._prompt.clear()
        async with guarded(doing, timeout):
            acting = asyncio.ensure_future(self.connection.send("input.performActions",
                                                                {"context": context or self.context_id, "actions": actions}))
            prompted = asyncio.ensure_future(self._prompt.wait())
            try:
                await asyncio.wait({acting, prompted}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                prompted.cancel()
            if not acting.done():  # a dialog opened: the page is blocked until it is answered
                acting.add_done_callback(lambda done: done.cancelled() or done.exception())
                return
            acting.result()
            self._interacted.add(context or self.context_id)
            if release:
                await self.connection.send("input.releaseActions", {"context": self.context_id})
                self.point_input.forget()

    def interacted(self, context_id: str) -> bool:
        """Whether the document in ``context_id`` has had input from webhand (``perform``)."""
        return context_id in self._interacted

    # settle's PageProbe --------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    async def events_caught_up(self) -> None:
        """Firefox announces a request well after the page started it, often after the answer to a
        later script: wait (capped) until the fetch/XHR requests the page says it has in flight are
        known (page_requests.py)."""
        await announced(self)

    async def main_evaluate(self, script: str, arg: Any = None) -> Any:
        try:
            return await self.call(script, [arg], doing="Waiting for the page", timeout=60, sandbox=False)
        except EvaluationFailed:
            raise
        except WebhandError as error:
            if self._closed:
                raise settle.PageGone() from error
            raise settle.DocumentReplaced() from error

    def settling(self, caps: SettleCaps) -> settle.PageSettling:
        return settle.PageSettling(self.tracker, caps)

    # the Tab interface ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self._url

    async def title(self) -> str:
        return str(await self.call("() => document.title", [], doing="Reading the title", timeout=10) or "")

    async def navigate(self, url: str, *, wait_until: WaitUntil, timeout: float, title: bool = True) -> NavigationResult:
        self.policy.before_navigation(url)  # the origin policy refuses before anything loads
        downloads = self.context.files.begun
        try:
            async with asyncio.timeout(timeout):
                result = await self.connection.send("browsingContext.navigate",
                                                    {"context": self.context_id, "url": url, "wait": _WAIT[wait_until]})
        except TimeoutError:
            # A timeout, as on Chromium: the session then asks whether the page still answers, and
            # ends a page whose load never ends (a load handler stuck in a loop, session/recovery.py).
            raise ActionTimeout(f"Loading {url} did not finish within {timeout:.0f} s.",
                                "The page may still be loading: take a browser_snapshot, or raise the timeout.") from None
        except BidiError as error:
            raise self.policy.navigation_refused(url, error.message) or net_failure(error.message, url) or NavigationFailed(
                f"Could not load {url}: {error.message or error.error}.",
                "Check the URL and that the server is reachable.") from None
        except PROTOCOL_ERRORS as error:
            raise translate(error, f"Loading {url}", timeout) from None
        if self.context.files.begun > downloads or self.context.files.expecting():
            # The URL was a file: Firefox downloads it and the tab stays where it was (files.py).
            self._document_status.clear()
            return NavigationResult(url=self._url, status=None, title=await self.title() if title else "", download=True)
        self._url = result.get("url", url)
        status = self._document_status.pop(result.get("navigation") or "", None)
        self._document_status.clear()  # only the last navigation's is ever read
        refused = self.policy.response_refused(url, self.network_log.document_headers.pop(result.get("navigation") or "", {}))
        if refused:  # the policy proxy answered in the server's place
            raise refused
        return NavigationResult(url=self._url, status=status, title=await self.title() if title else "")

    async def wait_for_load(self, *, timeout: float) -> None:
        await self.call(settle.LOADED, [], doing="Waiting for the page to load", timeout=timeout, sandbox=False)

    async def warm_up(self) -> None:
        """Nothing to prepare: the sandbox realm is made by the first call."""

    async def set_viewport(self, width: int, height: int, device_scale: float = 1.0) -> None:
        async with guarded("Sizing the viewport", 10):
            await self.connection.send("browsingContext.setViewport", {
                "context": self.context_id, "viewport": {"width": width, "height": height},
                "devicePixelRatio": device_scale})

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            async with guarded("Closing a tab", 10):
                await self.connection.send("browsingContext.close", {"context": self.context_id, "promptUnload": False})
        except WebhandError:
            pass
        self.context.tab_closed(self)

    async def bring_to_front(self) -> None:
        async with guarded("Bringing a tab to the front", 10):
            await self.connection.send("browsingContext.activate", {"context": self.context_id})

    async def web_storage(self, area: Literal["local", "session"], operation: Literal["get", "set", "delete", "clear"],
                          key: str | None = None, value: str | None = None, *, timeout: float) -> dict[str, str]:
        try:
            return dict(await self.call(WEB_STORAGE, [[area, operation, key, value]], doing=f"Using {area}Storage",
                                        timeout=timeout) or {})
        except EvaluationFailed as error:
            if "securityerror" in str(error).lower():
                raise WebhandError(f"This page ({self.url}) has no {area}Storage (about:blank, data: and "
                                   "sandboxed pages have none).", "Navigate to a page of the site first.") from None
            raise

    # what history.py asks (its HistoryTab) ------------------------------------------------------
    @property
    def navigations_started(self) -> int:
        return self._navigations_started

    @property
    def started_url(self) -> str:
        return self._started_url

    def arrived(self, url: str) -> None:
        self._url = url

    def document_status(self, navigation: str) -> int | None:
        return self._document_status.pop(navigation, None)

    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str:
        left, top, width, height = await self.call(SCROLL, [[x, y]], doing="Scrolling the page", timeout=timeout)
        return f"The page is scrolled to x={left}, y={top} (page size {width}x{height})."

    async def wait_for(self, condition: WaitCondition, *, timeout: float) -> str:
        return await wait_for(self, condition, timeout)


def _headers(response: dict[str, Any]) -> dict[str, str]:
    return {h["name"]: h["value"].get("value", "") for h in response.get("headers", [])}
