"""A tab's frames and refs over raw CDP: the frame tree across sessions (out-of-process iframes have
their own), each frame's main-world execution context, running a function in a frame, a ref (or
selector) resolved to its exact element, and where a frame sits in the tab's viewport.

Same-process frames share their tab's session; an out-of-process iframe arrives as a target
of its own (``Target.setAutoAttach`` with ``flatten``), and its frames live on that session.
The tree finds the remote object a ref names; the tab (tab.py) wraps it as an element (element.py).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from webhand.engine.cdp.actionability import FRAME_POINT, QUERY
from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded, message
from webhand.engine.page_scripts import SELECTOR_OF_REF
from webhand.engine.settle import DocumentReplaced, PageGone
from webhand.errors import PageCrashed, RefNotFound, WebhandError

SNAPSHOT_AGAIN = "Call browser_snapshot and use the new refs."
_REF = re.compile(r"^(?:(f\d+))?(e\d+)$")
_RESOLVE = "r => window.__webhand ? window.__webhand.resolve(r) : 'unknown'"
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

    # where a frame sits ---------------------------------------------------------------------------
    async def frame_owner(self, state: FrameState) -> tuple[str, str] | None:
        """The iframe element that holds ``state``: (its session, its object id)."""
        parent = self.frames.get(state.parent_id or "")
        if parent is None:
            return None
        owner = await self.connection.send.DOM.getFrameOwner(params={"frameId": state.frame_id}, session_id=parent.session_id)
        context_id = await self.context_of(parent, 5)
        node = await self.connection.send.DOM.resolveNode(params={
            "backendNodeId": owner["backendNodeId"], "executionContextId": context_id}, session_id=parent.session_id)
        return parent.session_id, node["object"]["objectId"]

    async def frame_point(self, state: FrameState, x: float, y: float) -> tuple[float, float, bool]:
        """The point (x, y) of the frame's viewport in the tab's viewport (plus the content boxes of
        the iframes above it), and whether it shows through every box that clips those iframes."""
        shown = True
        while state.parent_id and state.frame_id != self.main_id:
            owner = await self.frame_owner(state)
            parent = self.frames.get(state.parent_id)
            if owner is None or parent is None:
                break
            session, object_id = owner
            reply = await self.connection.send.Runtime.callFunctionOn(params={
                "functionDeclaration": FRAME_POINT, "objectId": object_id, "returnByValue": True,
                "arguments": [{"value": x}, {"value": y}]}, session_id=session)
            await self.release(session, object_id)
            dx, dy, here = reply["result"]["value"]
            x, y, shown, state = x + dx, y + dy, shown and here, parent
        return x, y, shown

    async def release(self, session_id: str, object_id: str) -> None:
        try:
            await self.connection.send.Runtime.releaseObject(params={"objectId": object_id}, session_id=session_id)
        except PROTOCOL_ERRORS:
            pass  # the document is gone, and the object with it

    # refs and selectors -----------------------------------------------------------------------------
    async def find_ref(self, ref: str, *, timeout: float) -> tuple[FrameState, str]:
        """The frame and remote object of the exact element a snapshot gave ``ref`` to, or
        ``RefNotFound``; never a look-alike."""
        match = _REF.match(ref.strip())
        if not match:
            raise RefNotFound(f"'{ref}' is not a ref.", "Refs look like e12 or f1e3; " + SNAPSHOT_AGAIN)
        frame_key, local = match.group(1) or "", match.group(2)
        state = self.by_key(frame_key)
        if state is None:
            raise RefNotFound(f"Ref {ref} is stale: its frame is gone.", SNAPSHOT_AGAIN)
        try:
            async with guarded(f"Finding {ref}", timeout):
                remote = await self.call(state, _RESOLVE, local, by_value=False, timeout=timeout)
        except (DocumentReplaced, PageGone):
            raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated).", SNAPSHOT_AGAIN) from None
        if remote.get("subtype") == "node" and remote.get("objectId"):
            return state, remote["objectId"]
        if remote.get("value") == "removed":
            raise RefNotFound(f"Ref {ref} is stale: its element was removed or replaced since the snapshot.", SNAPSHOT_AGAIN)
        raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated or the ref was never issued).",
                          SNAPSHOT_AGAIN)

    async def stable_selector(self, ref: str, *, timeout: float) -> str:
        match = _REF.match(ref.strip())
        state = self.by_key("")
        if not match or match.group(1) or state is None:  # a frame's element would need its frame's selector too
            return ""
        try:
            async with guarded(f"Reading a selector for {ref}", timeout):
                found = await self.evaluate(state, SELECTOR_OF_REF, match.group(2), timeout=timeout)
        except (DocumentReplaced, PageGone):
            return ""
        return found if isinstance(found, str) else ""

    async def find_selector(self, selector: str, *, timeout: float) -> tuple[FrameState, str]:
        """The main frame and remote object of the first element matching ``selector`` (waited for
        up to ``timeout``), or ``RefNotFound``."""
        state = self.frames.get(self.main_id)
        try:
            if state is None:
                raise DocumentReplaced()
            async with guarded(f"Finding {selector!r}", timeout + 1):
                remote = await self.call(state, QUERY, selector, int(timeout * 1000), by_value=False, timeout=timeout)
        except (DocumentReplaced, PageGone):
            remote = {}
        except WebhandError as error:
            raise RefNotFound(f"The selector {selector!r} is not valid: {message(error).split(': ', 1)[-1]}",
                              "Use a CSS selector, or a ref from browser_snapshot.") from None
        if remote.get("subtype") != "node" or state is None:
            raise RefNotFound(f"No element matches the selector {selector!r}.",
                              "Call browser_snapshot and use a ref, or fix the selector.")
        return state, remote["objectId"]


class CdpFrame:
    """One frame of a tab, as the snapshot and readers see it (the Driver's ``Frame``); ``crashed``
    tells whether the tab's page crashed (the tab's liveness knows)."""

    def __init__(self, tree: FrameTree, state: FrameState, crashed: Callable[[], bool]) -> None:
        self.tree = tree
        self.state = state
        self.crashed = crashed
        self.key = state.key or ""
        parent = tree.frames.get(state.parent_id) if state.parent_id else None
        self.parent_key = (parent.key or "") if parent is not None else None

    async def evaluate(self, script: str, arg: Any = None) -> Any:
        doing = f"Reading frame {self.key or 'main'}"
        try:
            async with guarded(doing):
                if arg is None:
                    return await self.tree.evaluate(self.state, script)
                return await self.tree.evaluate(self.state, script, arg)
        except (DocumentReplaced, PageGone):
            if self.crashed():
                raise PageCrashed(f"{doing} failed: the page crashed.", "Call the tool again: it runs in a fresh tab.") from None
            raise WebhandError(f"{doing} failed: the frame navigated or closed meanwhile.",
                               "Call browser_snapshot again.") from None

    async def owner_marker(self, script: str) -> Any:
        """Evaluate ``script`` (a function of the iframe element) in the parent frame."""
        try:
            owner = await self.tree.frame_owner(self.state)
            if owner is None:
                return None
            session, object_id = owner
            reply = await self.tree.connection.send.Runtime.callFunctionOn(params={
                "functionDeclaration": script, "objectId": object_id, "arguments": [{"objectId": object_id}],
                "returnByValue": True, "awaitPromise": True}, session_id=session)
            await self.tree.release(session, object_id)
            return None if reply.get("exceptionDetails") else reply["result"].get("value")
        except (*PROTOCOL_ERRORS, WebhandError):
            return None
