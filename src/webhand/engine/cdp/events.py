"""What a tab hears from its page over CDP, handed to the session: console calls and page errors,
requests (for the network log and the settle rules), dialogs, file choosers, new windows.

A mixin of ``CdpTab`` (tab.py), kept apart so that each file stays short.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING, Any

from webhand.engine.cdp.connection import CdpConnection, guarded
from webhand.engine.cdp.frames import FrameTree
from webhand.engine.cdp.network_log import CdpNetworkLog
from webhand.engine.console_events import console_api_entry, exception_entry
from webhand.engine.driver import NetworkEntry, TabEvents
from webhand.engine.settle import RequestTracker, TrackedRequest

if TYPE_CHECKING:
    from webhand.engine.cdp.context import CdpContext

#: Each logged request's number, unique in the process: what browser_network_request takes.
_IDS = itertools.count(1)


class CdpDialog:
    def __init__(self, tab: TabEventsMixin, params: dict[str, Any]) -> None:
        self._tab = tab
        self.kind = params.get("type", "alert")
        self.message = params.get("message", "")
        self.default_value = params.get("defaultPrompt", "")
        self.tab = tab.index

    async def accept(self, prompt_text: str | None, *, timeout: float) -> None:
        commits = self._tab.tracker.commits
        await self._answer(True, prompt_text, timeout)
        if self.kind == "beforeunload":
            # Leaving was allowed: return once the navigation that asked has committed, so the
            # reply can say where the tab went (capped: a page may also just stay).
            await self._tab.tracker.until(lambda: self._tab.tracker.commits > commits, timeout)

    async def dismiss(self, *, timeout: float) -> None:
        await self._answer(False, None, timeout)

    async def _answer(self, accept: bool, prompt_text: str | None, timeout: float) -> None:
        params: dict[str, Any] = {"accept": accept}
        if prompt_text is not None:
            params["promptText"] = prompt_text
        try:
            async with guarded(f"Answering the {self.kind} dialog", timeout):
                await self._tab.connection.send.Page.handleJavaScriptDialog(params=params, session_id=self._tab.session_id)  # type: ignore[arg-type]
        except Exception as error:
            text = str(error).lower()
            if "no dialog is showing" in text or "closed" in text:
                return  # the page went away, or the dialog closed itself: nothing is left to answer
            raise


class CdpFileChooser:
    def __init__(self, tab: TabEventsMixin, params: dict[str, Any], session_id: str) -> None:
        self._tab = tab
        self._node = params.get("backendNodeId")
        self._session = session_id
        self.tab = tab.index
        self.multiple = params.get("mode") == "selectMultiple"

    async def set_files(self, paths: list[str], *, timeout: float) -> None:
        async with guarded("Choosing the files", timeout):
            await self._tab.connection.send.DOM.setFileInputFiles(
                params={"files": paths, "backendNodeId": self._node}, session_id=self._session)  # type: ignore[typeddict-item]


class TabEventsMixin:
    connection: CdpConnection
    session_id: str
    index: int
    frame_tree: FrameTree
    tracker: RequestTracker
    _events: TabEvents
    _context: CdpContext

    def _start_events(self) -> None:
        self._requests: dict[tuple[str, str], tuple[TrackedRequest, dict[str, Any]]] = {}
        self._favicons: set[tuple[str, str]] = set()  # the browser's own icon requests, not tracked
        self.on_window_open: Any = None
        self.network_log = CdpNetworkLog(self.connection)  # requests in full (browser_network_request)

    def _listen_events(self, session_id: str) -> None:
        self.network_log.listen(session_id)  # first: it must hear a request's events before _done logs it
        on = self.connection.on
        on("Runtime.consoleAPICalled", session_id, lambda p: self._on_console(p, session_id))
        on("Runtime.exceptionThrown", session_id, self._on_exception)
        on("Network.requestWillBeSent", session_id, lambda p: self._on_request(p, session_id))
        on("Network.responseReceived", session_id, lambda p: self._on_response(p, session_id))
        on("Network.loadingFinished", session_id, lambda p: self._on_finished(p, session_id))
        on("Network.loadingFailed", session_id, lambda p: self._on_failed(p, session_id))
        on("Page.fileChooserOpened", session_id, lambda p: self._on_file_chooser(p, session_id))
        on("Network.webSocketCreated", session_id, self._on_websocket)
        if session_id == self.session_id:
            on("Page.javascriptDialogOpening", session_id, self._on_dialog)
            on("Page.windowOpen", session_id, lambda _: self.on_window_open() if self.on_window_open else None)

    # console -----------------------------------------------------------------------------------
    def _on_console(self, params: dict[str, Any], session_id: str) -> None:
        if self._events.console:
            source = self.frame_tree.console_source(params.get("executionContextId"), session_id, self.session_id)
            self._events.console(console_api_entry(params, self.index, source))

    def _on_exception(self, params: dict[str, Any]) -> None:
        if self._events.console:
            self._events.console(exception_entry(params, self.index))

    def _on_websocket(self, params: dict[str, Any]) -> None:
        # Nothing in the browser can stop a WebSocket (the policy proxy refuses its tunnel), but
        # the page names its URL here, before it connects: the reply can say which one was refused.
        policy, refusals = self.tracker.policy, self.tracker.refusals
        reason = policy.check(params["url"]) if policy is not None else None
        if reason and refusals is not None:
            refusals.add("WebSocket", params["url"], reason)

    # dialogs, choosers -------------------------------------------------------------------------
    def _on_dialog(self, params: dict[str, Any]) -> None:
        dialog = CdpDialog(self, params)
        if self._events.dialog:
            self._events.dialog(dialog)
        else:  # nobody to ask: behave like a headless browser and dismiss, so the page never hangs
            asyncio.ensure_future(dialog.dismiss(timeout=5))

    def _on_file_chooser(self, params: dict[str, Any], session_id: str) -> None:
        if self._events.file_chooser:
            self._events.file_chooser(CdpFileChooser(self, params, session_id))

    # requests ----------------------------------------------------------------------------------
    def _on_request(self, params: dict[str, Any], session_id: str) -> None:
        key = (session_id, params["requestId"])
        if params.get("redirectResponse") and key in self._requests:
            redirect = params["redirectResponse"]
            self._response_of(key, redirect)
            self._done(key, "")
        request = params["request"]
        resource = str(params.get("type", "Other")).lower()
        if key in self._favicons or (resource == "other" and request["url"].endswith("/favicon.ico")):
            # The browser's own request for the tab's icon, after "load": not the page's. Nothing
            # waits for it and no reply names it (a site without one answers 404); Playwright
            # hides it the same way. Its redirects keep its request id.
            self._favicons.add(key)
            return
        main = resource == "document" and params.get("frameId") == self.frame_tree.main_id \
            and params.get("loaderId") == params["requestId"] and session_id == self.session_id
        tracked = TrackedRequest(request["url"] + request.get("urlFragment", ""), request.get("method", "GET"), resource, main)
        self._requests[key] = (tracked, {"status": None})
        self.tracker.request_started(tracked)

    def _on_response(self, params: dict[str, Any], session_id: str) -> None:
        key = (session_id, params["requestId"])
        if key in self._requests:
            self._response_of(key, params["response"])
        if params.get("type") == "Document":
            headers = {k.lower(): v for k, v in (params["response"].get("headers") or {}).items()}
            disposition = headers.get("content-disposition", "").lower()
            if disposition.startswith("attachment"):
                self._context.announce_download()
            self._document_responses[params["requestId"]] = (params["response"].get("status"), headers)

    def _response_of(self, key: tuple[str, str], response: dict[str, Any]) -> None:
        tracked, info = self._requests[key]
        status = int(response.get("status") or 0)
        info["status"] = status
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        self.tracker.response(tracked, status, headers)

    def _on_finished(self, params: dict[str, Any], session_id: str) -> None:
        self._favicons.discard((session_id, params["requestId"]))
        self._done((session_id, params["requestId"]), "")

    def _on_failed(self, params: dict[str, Any], session_id: str) -> None:
        self._favicons.discard((session_id, params["requestId"]))
        reason = params.get("errorText") or "failed"
        if params.get("blockedReason") and "BLOCKED" not in reason:
            reason = f"{reason} ({params['blockedReason']})"
        self._done((session_id, params["requestId"]), reason)

    def _done(self, key: tuple[str, str], failure: str) -> None:
        found = self._requests.pop(key, None)
        if found is None:
            return
        tracked, info = found
        if failure:
            self.tracker.failed(tracked, failure)
        else:
            self.tracker.finished(tracked)
        entry = NetworkEntry(tracked.method, tracked.url, info["status"], tracked.resource_type, failure, self.index,
                             id=next(_IDS))
        self.network_log.keep(key, entry)
        if self._events.request:
            self._events.request(entry)

    _document_responses: dict[str, tuple[int | None, dict[str, str]]]
