"""A CDP tab's frames and refs: the frames in order, a ref resolved to its exact element, a
selector waited for, and where a frame sits in the tab's viewport. A mixin of ``CdpTab`` (tab.py)."""

from __future__ import annotations

import re

from webhand.engine.cdp.actionability import FRAME_POINT, QUERY
from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded, message
from webhand.engine.cdp.element import SNAPSHOT_AGAIN, CdpElement
from webhand.engine.cdp.frames import CdpFrame, FrameState, FrameTree
from webhand.engine.page_scripts import SELECTOR_OF_REF
from webhand.engine.settle import DocumentReplaced, PageGone
from webhand.errors import RefNotFound, WebhandError

_REF = re.compile(r"^(?:(f\d+))?(e\d+)$")
_RESOLVE = "r => window.__webhand ? window.__webhand.resolve(r) : 'unknown'"


class TabRefsMixin:
    connection: CdpConnection
    frame_tree: FrameTree

    # frames and refs --------------------------------------------------------------------------
    async def frames(self) -> list[CdpFrame]:
        return [CdpFrame(self, state) for state in self.frame_tree.ordered()]  # type: ignore[arg-type]

    async def frame_owner(self, state: FrameState) -> tuple[str, str] | None:
        """The iframe element that holds ``state``: (its session, its object id)."""
        parent = self.frame_tree.frames.get(state.parent_id or "")
        if parent is None:
            return None
        owner = await self.connection.send.DOM.getFrameOwner(params={"frameId": state.frame_id}, session_id=parent.session_id)
        context_id = await self.frame_tree.context_of(parent, 5)
        node = await self.connection.send.DOM.resolveNode(params={
            "backendNodeId": owner["backendNodeId"], "executionContextId": context_id}, session_id=parent.session_id)
        return parent.session_id, node["object"]["objectId"]

    async def frame_point(self, state: FrameState, x: float, y: float) -> tuple[float, float, bool]:
        """The point (x, y) of the frame's viewport in the tab's viewport (plus the content boxes of
        the iframes above it), and whether it shows through every box that clips those iframes."""
        shown = True
        while state.parent_id and state.frame_id != self.frame_tree.main_id:
            owner = await self.frame_owner(state)
            parent = self.frame_tree.frames.get(state.parent_id)
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

    async def resolve(self, ref: str, *, timeout: float) -> CdpElement:
        """The exact element a snapshot gave ``ref`` to, or ``RefNotFound``; never a look-alike."""
        match = _REF.match(ref.strip())
        if not match:
            raise RefNotFound(f"'{ref}' is not a ref.", "Refs look like e12 or f1e3; " + SNAPSHOT_AGAIN)
        frame_key, local = match.group(1) or "", match.group(2)
        state = self.frame_tree.by_key(frame_key)
        if state is None:
            raise RefNotFound(f"Ref {ref} is stale: its frame is gone.", SNAPSHOT_AGAIN)
        try:
            async with guarded(f"Finding {ref}", timeout):
                remote = await self.frame_tree.call(state, _RESOLVE, local, by_value=False, timeout=timeout)
        except (DocumentReplaced, PageGone):
            raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated).", SNAPSHOT_AGAIN) from None
        if remote.get("subtype") == "node" and remote.get("objectId"):
            return CdpElement(self, state, remote["objectId"], ref)
        if remote.get("value") == "removed":
            raise RefNotFound(f"Ref {ref} is stale: its element was removed or replaced since the snapshot.", SNAPSHOT_AGAIN)
        raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated or the ref was never issued).",
                          SNAPSHOT_AGAIN)

    async def stable_selector(self, ref: str, *, timeout: float) -> str:
        match = _REF.match(ref.strip())
        state = self.frame_tree.by_key("")
        if not match or match.group(1) or state is None:  # a frame's element would need its frame's selector too
            return ""
        try:
            async with guarded(f"Reading a selector for {ref}", timeout):
                found = await self.frame_tree.evaluate(state, SELECTOR_OF_REF, match.group(2), timeout=timeout)
        except (DocumentReplaced, PageGone):
            return ""
        return found if isinstance(found, str) else ""

    async def query(self, selector: str, *, timeout: float) -> CdpElement:
        state = self.frame_tree.frames.get(self.frame_tree.main_id)
        try:
            if state is None:
                raise DocumentReplaced()
            async with guarded(f"Finding {selector!r}", timeout + 1):
                remote = await self.frame_tree.call(state, QUERY, selector, int(timeout * 1000), by_value=False, timeout=timeout)
        except (DocumentReplaced, PageGone):
            remote = {}
        except WebhandError as error:
            raise RefNotFound(f"The selector {selector!r} is not valid: {message(error).split(': ', 1)[-1]}",
                              "Use a CSS selector, or a ref from browser_snapshot.") from None
        if remote.get("subtype") != "node" or state is None:
            raise RefNotFound(f"No element matches the selector {selector!r}.",
                              "Call browser_snapshot and use a ref, or fix the selector.")
        return CdpElement(self, state, remote["objectId"], selector)
