"""A tab's frames over raw CDP: the frame tree across sessions (out-of-process iframes have their
own), each frame's main-world execution context, and running a function in a frame.

Same-process frames share their tab's session; an out-of-process iframe arrives as a target
of its own (``Target.setAutoAttach`` with ``flatten``), and its frames live on that session.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded, message
from webhand.engine.settle import DocumentReplaced, PageGone
from webhand.errors import PageCrashed, WebhandError

if TYPE_CHECKING:
    from webhand.engine.cdp.tab import CdpTab

#: The browser's words when the document a call ran in went away mid-call.
_REPLACED = ("execution context was destroyed", "cannot find context with specified id", "inspected target navigated",
             "cannot find default execution context", "uniqueContextId not found")


@dataclass
class FrameState:
    frame_id: str
    parent_id: str | None
    session_id: str
    url: str = ""
    context_id: int | None = None  # the main world's execution context, once the document has one
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    key: str | None = None


def replaced(error: BaseException) -> bool:
    text = message(error).lower()
    return any(needle.lower() in text for needle in _REPLACED)


class FrameTree:
    """Every live frame of one tab, whichever session it is on."""

    def __init__(self, connection: CdpConnection) -> None:
        self.connection = connection
        self.frames: dict[str, FrameState] = {}
        self.main_id = ""
        self._seen = 0
        # Set when the page crashed or closed: a call in flight then never gets its answer.
        self.gone = asyncio.Event()

    # fed by events ------------------------------------------------------------------------------
    def attached(self, frame_id: str, parent_id: str | None, session_id: str) -> None:
        state = self.frames.get(frame_id)
        if state is None:
            self.frames[frame_id] = FrameState(frame_id, parent_id, session_id)
        else:  # an iframe that went out of process keeps its place, on its new session
            state.session_id = session_id
            state.parent_id = parent_id if parent_id is not None else state.parent_id

    def navigated(self, frame: dict[str, Any], session_id: str) -> None:
        self.attached(frame["id"], frame.get("parentId"), session_id)
        state = self.frames[frame["id"]]
        state.url = frame.get("url", "") + frame.get("urlFragment", "")
        if frame.get("parentId") is None and session_id == self.main_session_of(frame["id"]):
            self.main_id = self.main_id or frame["id"]

    def main_session_of(self, frame_id: str) -> str:
        return self.frames[frame_id].session_id if frame_id in self.frames else ""

    def detached(self, frame_id: str, reason: str = "remove") -> None:
        if reason == "swap":
            return  # it moves to another process: its target attaches next
        for child in [f for f in self.frames.values() if f.parent_id == frame_id]:
            self.detached(child.frame_id)
        self.frames.pop(frame_id, None)

    def context_created(self, context: dict[str, Any], session_id: str) -> None:
        aux = context.get("auxData") or {}
        if not aux.get("isDefault") or not aux.get("frameId"):
            return
        if aux["frameId"] not in self.frames:  # reported before the frame tree was read: keep it
            self.attached(aux["frameId"], None, session_id)
        state = self.frames[aux["frameId"]]
        if state.session_id == session_id:
            state.context_id = context["id"]
            state.ready.set()

    def context_destroyed(self, context_id: int, session_id: str) -> None:
        for state in self.frames.values():
            if state.context_id == context_id and state.session_id == session_id:
                state.context_id = None
                state.ready.clear()

    def contexts_cleared(self, session_id: str) -> None:
        for state in self.frames.values():
            if state.session_id == session_id:
                state.context_id = None
                state.ready.clear()

    def session_gone(self, session_id: str) -> None:
        for frame_id in [f.frame_id for f in self.frames.values() if f.session_id == session_id]:
            if frame_id in self.frames and frame_id != self.main_id:
                self.detached(frame_id)

    # reading ------------------------------------------------------------------------------------
    def ordered(self) -> list[FrameState]:
        """Parents before children, each with a key that never changes while the frame lives."""
        out: list[FrameState] = []
        queue = [self.frames[self.main_id]] if self.main_id in self.frames else []
        while queue:
            state = queue.pop(0)
            out.append(state)
            if state.key is None:
                if state.frame_id == self.main_id:
                    state.key = ""
                else:
                    self._seen += 1
                    state.key = f"f{self._seen}"
            queue += [f for f in self.frames.values() if f.parent_id == state.frame_id]
        return out

    def by_key(self, key: str) -> FrameState | None:
        if key == "":
            return self.frames.get(self.main_id)
        return next((f for f in self.frames.values() if f.key == key), None)

    def console_source(self, context_id: int | None, session_id: str, page_session: str) -> str:
        """"frame" for a console call made in an iframe, "" for the page's own (as Playwright tags them)."""
        frame = next((f.frame_id for f in self.frames.values()
                      if f.context_id == context_id and f.session_id == session_id), None)
        if frame is None:  # not a main world webhand knows: an out-of-process iframe's session is a frame's
            return "" if session_id == page_session else "frame"
        return "" if frame == self.main_id else "frame"

    def origin_of(self, frame_id: str) -> str:
        """The frame's origin from its URL, climbing to the parent for about:blank/srcdoc frames."""
        state = self.frames.get(frame_id)
        while state is not None:
            parts = urlsplit(state.url.removeprefix("blob:"))
            if parts.scheme == "about":
                state = self.frames.get(state.parent_id) if state.parent_id else None
                continue
            if parts.scheme in ("http", "https") and parts.hostname:
                host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
                return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")
            break
        return "null"

    # running code -------------------------------------------------------------------------------
    async def context_of(self, state: FrameState, timeout: float) -> int:
        if state.context_id is None:
            root = state.parent_id is None or self.frames.get(state.parent_id, state).session_id != state.session_id
            if root:
                # A fresh about:blank has no context until a script needs one: evaluating in the
                # session's main frame makes it (and reports it as executionContextCreated).
                try:
                    await asyncio.wait_for(self.connection.send.Runtime.evaluate(
                        params={"expression": "0"}, session_id=state.session_id), timeout)
                except PROTOCOL_ERRORS:
                    pass
            await asyncio.wait_for(state.ready.wait(), timeout)
        assert state.context_id is not None
        return state.context_id

    async def call(self, state: FrameState, function: str, *args: Any, by_value: bool = True,
                   timeout: float = 30.0) -> dict[str, Any]:
        """Call ``function`` with JSON ``args`` in the frame's main world, awaiting a promise it returns.

        Returns the protocol's ``RemoteObject``; ``DocumentReplaced`` when the document went away,
        ``PageGone`` when the page did, a ``WebhandError`` when the function threw.
        """
        try:
            context_id = await self.context_of(state, timeout)
        except TimeoutError:
            raise DocumentReplaced() from None
        try:
            reply = await self.unless_gone(self.connection.send.Runtime.callFunctionOn(params={
                "functionDeclaration": function, "executionContextId": context_id,
                "arguments": [{"value": a} for a in args], "returnByValue": by_value, "awaitPromise": True},
                session_id=state.session_id))
        except PROTOCOL_ERRORS as error:
            if isinstance(error, ConnectionError) or "session with given id not found" in message(error).lower():
                raise PageGone() from None
            if replaced(error):
                if state.context_id == context_id:
                    state.context_id = None
                    state.ready.clear()
                raise DocumentReplaced() from None
            raise WebhandError(f"Running a script in the page failed: {message(error)}",
                               "Call browser_snapshot to see the page state.") from None
        details = reply.get("exceptionDetails")
        if details:
            exception = details.get("exception") or {}
            what = exception.get("description") or details.get("text") or "Error"
            raise WebhandError(f"The page's script failed: {what.splitlines()[0]}",
                               "Call browser_snapshot to see the page state.")
        return dict(reply["result"])

    async def unless_gone(self, command: Any) -> Any:
        """Await a command, or raise ``PageGone`` as soon as the page crashes or closes."""
        if self.gone.is_set():
            command.close()
            raise PageGone()
        sent = asyncio.ensure_future(command)
        sent.add_done_callback(lambda done: done.cancelled() or done.exception())  # an answer after giving up
        gone = asyncio.ensure_future(self.gone.wait())
        try:
            await asyncio.wait({sent, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if not sent.done():
            sent.cancel()
            raise PageGone()
        return sent.result()

    async def evaluate(self, state: FrameState, function: str, *args: Any, timeout: float = 30.0) -> Any:
        return (await self.call(state, function, *args, timeout=timeout)).get("value")


class CdpFrame:
    """One frame of a tab, as the snapshot and readers see it (the Driver's ``Frame``)."""

    def __init__(self, tab: CdpTab, state: FrameState) -> None:
        self.tab = tab
        self.state = state
        self.key = state.key or ""
        parent = tab.frame_tree.frames.get(state.parent_id) if state.parent_id else None
        self.parent_key = (parent.key or "") if parent is not None else None

    async def evaluate(self, script: str, arg: Any = None) -> Any:
        doing = f"Reading frame {self.key or 'main'}"
        try:
            async with guarded(doing):
                if arg is None:
                    return await self.tab.frame_tree.evaluate(self.state, script)
                return await self.tab.frame_tree.evaluate(self.state, script, arg)
        except (DocumentReplaced, PageGone):
            if self.tab.crashed:
                raise PageCrashed(f"{doing} failed: the page crashed.", "Call the tool again: it runs in a fresh tab.") from None
            raise WebhandError(f"{doing} failed: the frame navigated or closed meanwhile.",
                               "Call browser_snapshot again.") from None

    async def owner_marker(self, script: str) -> Any:
        """Evaluate ``script`` (a function of the iframe element) in the parent frame."""
        try:
            owner = await self.tab.frame_owner(self.state)
            if owner is None:
                return None
            session, object_id = owner
            reply = await self.tab.connection.send.Runtime.callFunctionOn(params={
                "functionDeclaration": script, "objectId": object_id, "arguments": [{"objectId": object_id}],
                "returnByValue": True, "awaitPromise": True}, session_id=session)
            await self.tab.release(session, object_id)
            return None if reply.get("exceptionDetails") else reply["result"].get("value")
        except (*PROTOCOL_ERRORS, WebhandError):
            return None
