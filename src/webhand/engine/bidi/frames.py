"""One frame of a Firefox tab (the Driver's ``Frame``): a browsing context of its own in BiDi."""

from __future__ import annotations

from typing import Any, Protocol

from webhand.errors import WebhandError

_FRAME_ELEMENTS = "[...document.querySelectorAll('iframe, frame')]"
_FRAME_WINDOWS = f"() => {_FRAME_ELEMENTS}.map(f => f.contentWindow)"


class FrameTab(Protocol):
    """What a frame needs of its tab (tab.py's ``BidiTab``): running the page agent in a browsing context."""

    async def call(self, function: str, args: list[Any], *, doing: str, timeout: float, this: Any = None,
                   sandbox: bool = True, context: str | None = None) -> Any: ...


class BidiFrame:
    """One frame of a tab: a browsing context of its own in BiDi (the main frame is the tab's)."""

    def __init__(self, tab: FrameTab, context_id: str, key: str, parent: "BidiFrame | None") -> None:
        self._tab = tab
        self.context_id = context_id
        self.key = key
        self.parent = parent
        self.parent_key: str | None = parent.key if parent is not None else None

    async def evaluate(self, script: str, arg: Any = None) -> Any:
        return await self._tab.call(script, [arg], doing="Running the page agent", timeout=30, context=self.context_id)

    async def owner_marker(self, script: str) -> Any:
        """Run ``script`` on this frame's iframe element, in the parent frame's sandbox: the parent's
        frame elements' windows name their browsing contexts, which finds the one that holds us."""
        if self.parent is None:
            return None
        try:
            windows = await self._tab.call(_FRAME_WINDOWS, [], doing="Finding a frame's element", timeout=10,
                                           context=self.parent.context_id)
            index = next((i for i, w in enumerate(windows or [])
                          if isinstance(w, dict) and (w.get("value") or {}).get("context") == self.context_id), None)
            if index is None:
                return None
            return await self._tab.call(f"(i) => ({script})({_FRAME_ELEMENTS}[i])", [index],
                                        doing="Reading a frame's element", timeout=10, context=self.parent.context_id)
        except WebhandError:
            return None
