"""The tab's ``refs`` (engine/driver.py's ``Refs``) on Firefox: its frames, and the elements refs and
selectors name in them.

In BiDi each frame is a browsing context of its own (``browsingContext.getTree`` lists them); a
child frame gets a key ("f1", "f2"...) the first time it is seen and keeps it while it lives, so a
ref ("f2e7") names its frame across snapshots. A ref resolves in its frame's page agent (the
sandbox realm) to the node, which BiDi hands back by ``sharedId`` and which becomes a
``BidiElement`` (element.py) acting through the tab (its ``ElementTab``).
"""

from __future__ import annotations

import re
from typing import Any

from webhand.engine.bidi.connection import guarded
from webhand.engine.bidi.element import SNAPSHOT_AGAIN, BidiElement, ElementTab
from webhand.engine.bidi.frames import BidiFrame
from webhand.engine.page_scripts import SELECTOR_OF_REF
from webhand.engine.waits import POLL
from webhand.errors import EvaluationFailed, RefNotFound, WebhandError

_RESOLVE = "r => window.__webhand ? window.__webhand.resolve(r) : 'unknown'"
_REF = re.compile(r"^(?:(f\d+))?(e\d+)$")


class BidiRefs:
    def __init__(self, tab: ElementTab) -> None:
        self._tab = tab  # runs the page agent, and what its elements act through
        #: A child frame's browsing context -> its key ("f1"); the tab routes events by it too.
        self.frame_keys: dict[str, str] = {}

    async def frames(self) -> list[BidiFrame]:
        """The tab's frames, parents before children; a frame keeps its key while it lives."""
        async with guarded("Reading the tab's frames", 10):
            tree = await self._tab.connection.send("browsingContext.getTree", {"root": self._tab.context_id})
        frames: list[BidiFrame] = []
        queue: list[tuple[dict[str, Any], BidiFrame | None]] = [(info, None) for info in tree.get("contexts", [])]
        while queue:
            info, parent = queue.pop(0)
            context_id = info["context"]
            if parent is None:
                key = ""
            elif context_id not in self.frame_keys:
                self.frame_keys[context_id] = key = f"f{len(self.frame_keys) + 1}"
            else:
                key = self.frame_keys[context_id]
            frame = BidiFrame(self._tab, context_id, key, parent)
            frames.append(frame)
            queue += [(child, frame) for child in info.get("children") or []]
        return frames

    async def resolve(self, ref: str, *, timeout: float) -> BidiElement:
        """The exact element a snapshot gave ``ref`` to, or ``RefNotFound``; never a look-alike."""
        match = _REF.match(ref.strip())
        if not match:
            raise RefNotFound(f"'{ref}' is not a ref.", "Refs look like e12 or f1e3; " + SNAPSHOT_AGAIN)
        frame_key, local = match.group(1) or "", match.group(2)
        context = self._tab.context_id if not frame_key else next(
            (c for c, k in self.frame_keys.items() if k == frame_key), None)
        if context is None:
            raise RefNotFound(f"Ref {ref} is stale: its frame is gone.", SNAPSHOT_AGAIN)
        try:
            node = await self._tab.call(_RESOLVE, [local], doing=f"Finding {ref}", timeout=timeout, context=context)
        except RefNotFound:
            raise
        except WebhandError:
            raise RefNotFound(f"Ref {ref} is not on the current page (its frame navigated or is gone).",
                              SNAPSHOT_AGAIN) from None
        if isinstance(node, dict) and "sharedId" in node:
            return BidiElement(self._tab, ref, node, context)
        if node == "removed":
            raise RefNotFound(f"Ref {ref} is stale: its element was removed or replaced since the snapshot.", SNAPSHOT_AGAIN)
        raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated or the ref was never issued).",
                          SNAPSHOT_AGAIN)

    async def stable_selector(self, ref: str, *, timeout: float) -> str:
        return str(await self._tab.call(SELECTOR_OF_REF, [ref], doing=f"Describing {ref}", timeout=timeout) or "")

    async def query(self, selector: str, *, timeout: float) -> BidiElement:
        """The first element matching ``selector`` in the main frame, waited for up to ``timeout``."""
        wait = ("(s, ms) => { document.querySelector(s); return (" + POLL + ")(s => !!document.querySelector(s), s, ms)"
                ".then(() => document.querySelector(s)); }")
        try:
            node = await self._tab.call(wait, [selector, int(max(1, timeout * 1000))], doing=f"Finding {selector!r}",
                                   timeout=timeout + 1)
        except EvaluationFailed as error:
            raise RefNotFound(f"The selector {selector!r} is not valid: {error.message.split(': ', 1)[-1]}",
                              "Use a CSS selector, or a ref from browser_snapshot.") from None
        if not isinstance(node, dict) or "sharedId" not in node:
            raise RefNotFound(f"No element matches the selector {selector!r}.",
                              "Call browser_snapshot and use a ref, or fix the selector.")
        return BidiElement(self._tab, selector, node, self._tab.context_id)
