"""What a tab hears from its page over CDP, handed to the session: console calls and page errors,
requests (for the network log and the settle rules), dialogs, file choosers, new windows.

``CdpPageEvents`` is owned by ``CdpTab`` (tab.py), which has it listen on each session of its page
(the page's own and each out-of-process frame's) as the session is set up.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

from webhand.engine.cdp.connection import CdpConnection, guarded
from webhand.engine.cdp.frames import FrameTree
from webhand.engine.cdp.network import CdpNetworkLog
from webhand.engine.console_events import console_api_entry, exception_entry
from webhand.engine.driver import NetworkEntry, TabEvents
from webhand.engine.settle import RequestTracker, TrackedRequest

#: Each logged request's number, unique in the process: what browser_network_request takes.
_IDS = itertools.count(1)


class CdpDialog:
    def __init__(self, connection: CdpConnection, session_id: str, tracker: RequestTracker, tab: int,
                 params: dict[str, Any]) -> None:
        self._connection = connection
        self._session = session_id
        self._tracker = tracker
        self.kind = params.get("type", "alert")
        self.message = params.get("message", "")
        self.default_value = params.get("defaultPrompt", "")
        self.tab = tab

    async def accept(self, prompt_text: str | None, *, timeout: float) -> None:
        commits = self._tracker.commits
        await self._answer(True, prompt_text, timeout)
        if self.kind == "beforeunload":
            # Leaving was allowed: return once the navigation that asked has committed, so the
            # reply can say where the tab went (capped: a page may also just stay).
            await self._tracker.until(lambda: self._tracker.commits > commits, timeout)

    async def dismiss(self, *, timeout: float) -> None:
        await self._answer(False, None, timeout)

    async def _answer(self, accept: bool, prompt_text: str | None, timeout: float) -> None:
        params: dict[str, Any] = {"accept": accept}
        if prompt_text is not None:
            params["promptText"] = prompt_text
        try:
            async with guarded(f"Answering the {self.kind} dialog", timeout):
                await self._connection.send.Page.handleJavaScriptDialog(params=params, session_id=self._session)  # type: ignore[arg-type]
        except Exception as error:
            text = str(error).lower()
            if "no dialog is showing" in text or "closed" in text:
                return  # the page went away, or the dialog closed itself: nothing is left to answer
            raise


class CdpFileChooser:
    def __init__(self, connection: CdpConnection, tab: int, params: dict[str, Any], session_id: str) -> None:
        self._connection = connection
        self._node = params.get("backendNodeId")
        self._session = session_id
        self.tab = tab
        self.multiple = params.get("mode") == "selectMultiple"

    async def set_files(self, paths: list[str], *, timeout: float) -> None:
        async with guarded("Choosing the files", timeout):
            await self._connection.send.DOM.setFileInputFiles(
                params={"files": paths, "backendNodeId": self._node}, session_id=self._session)  # type: ignore[typeddict-item]


class CdpPageEvents:
    """One tab's listener: it hands what its page says to ``events`` (the session's callbacks), feeds
    the tab's request tracker and network log, and tells the tab's context of a download (a document
    answered as an attachment) or a new window (``window_opened``) about to come."""

    def __init__(self, connection: CdpConnection, session_id: str, index: int, frame_tree: FrameTree,
                 tracker: RequestTracker, network_log: CdpNetworkLog, events: TabEvents, *,
                 download_announced: Callable[[], None], window_opened: Callable[[], None]) -> None:
        self.connection = connection
        self.session_id = session_id  # the page's own session (not an out-of-process frame's)
        self.index = index
        self.frame_tree = frame_tree
        self.tracker = tracker
        self.network_log = network_log
        self._events = events
        self._download_announced = download_announced
        self._window_opened = window_opened
        self._requests: dict[tuple[str, str], tuple[TrackedRequest, dict[str, Any]]] = {}
        self._favicons: set[tuple[str, str]] = set()  # the browser's own icon requests, not tracked
        # Each document response's status and headers, by loader id: what a navigation reports.
        self.document_responses: dict[str, tuple[int | None, dict[str, str]]] = {}

    def listen(self, session_id: str) -> None:
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
            on("Page.windowOpen", session_id, lambda _: self._window_opened())

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
        dialog = CdpDialog(self.connection, self.session_id, self.tracker, self.index, params)
        if self._events.dialog:
            self._events.dialog(dialog)
        else:  # nobody to ask: behave like a headless browser and dismiss, so the page never hangs
            asyncio.ensure_future(dialog.dismiss(timeout=5))

    def _on_file_chooser(self, params: dict[str, Any], session_id: str) -> None:
        if self._events.file_chooser:
            self._events.file_chooser(CdpFileChooser(self.connection, self.index, params, session_id))

    # requests ----------------------------------------------------------------------------------
    def _on_request(self, params: dict[str, Any], session_id: str) -> None:
        key = (session_id, params["requestId"])
        if params.get("redirectResponse") and key in self._requests:
            redirect = params["redirectResponse"]
            self._response_of(key, redirect)
            self._done(key, "", params)  # the hop ends as the next request is sent (params' timestamp)
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
        # No loader: a worker's or shared worker's script, whose answer goes to the worker's own
        # session; the page's would wait for it until the cap.
        no_document = params.get("loaderId") == "" and resource != "document"
        tracked = TrackedRequest(request["url"] + request.get("urlFragment", ""), request.get("method", "GET"), resource, main,
                                 awaited=not no_document)
        self._requests[key] = (tracked, {"status": None, "started": float(params.get("wallTime") or time.time()),
                                         "sent": params.get("timestamp")})
        self.tracker.request_started(tracked)

    def _on_response(self, params: dict[str, Any], session_id: str) -> None:
        key = (session_id, params["requestId"])
        if key in self._requests:
            self._response_of(key, params["response"])
        if params.get("type") == "Document":
            headers = {k.lower(): v for k, v in (params["response"].get("headers") or {}).items()}
            disposition = headers.get("content-disposition", "").lower()
            if disposition.startswith("attachment"):
                self._download_announced()
            self.document_responses[params["requestId"]] = (params["response"].get("status"), headers)

    def _response_of(self, key: tuple[str, str], response: dict[str, Any]) -> None:
        tracked, info = self._requests[key]
        status = int(response.get("status") or 0)
        info["status"] = status
        info["mime_type"] = str(response.get("mimeType") or "")
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        self.tracker.response(tracked, status, headers)

    def _on_finished(self, params: dict[str, Any], session_id: str) -> None:
        self._favicons.discard((session_id, params["requestId"]))
        self._done((session_id, params["requestId"]), "", params)

    def _on_failed(self, params: dict[str, Any], session_id: str) -> None:
        self._favicons.discard((session_id, params["requestId"]))
        reason = params.get("errorText") or "failed"
        if params.get("blockedReason") and "BLOCKED" not in reason:
            reason = f"{reason} ({params['blockedReason']})"
        self._done((session_id, params["requestId"]), reason, params)

    def _done(self, key: tuple[str, str], failure: str, params: dict[str, Any]) -> None:
        found = self._requests.pop(key, None)
        if found is None:
            return
        tracked, info = found
        if failure:
            self.tracker.failed(tracked, failure)
        else:
            self.tracker.finished(tracked)
        sent, ended = info.get("sent"), params.get("timestamp")
        entry = NetworkEntry(tracked.method, tracked.url, info["status"], tracked.resource_type, failure, self.index,
                             id=next(_IDS), started=info["started"], mime_type=info.get("mime_type", ""),
                             duration=max(0.0, ended - sent) if isinstance(sent, float | int) and isinstance(ended, float | int) else None,
                             size=int(params["encodedDataLength"]) if "encodedDataLength" in params else None)
        self.network_log.keep(key, entry)
        if self._events.request:
            self._events.request(entry)
