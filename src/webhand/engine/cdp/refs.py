"""The tab's ``refs`` (engine/driver.py's ``Refs``) over raw CDP: its frames, and the elements refs
and selectors name in them.

The frame tree (frames.py) does the finding: it knows every frame across the tab's sessions and
finds the remote object a ref or a selector names. This wraps what it finds as the Driver's
objects: a frame as a ``CdpFrame``, a remote object as a ``CdpElement`` (element.py), which acts
through the tab's sessions (its ``ElementTab``).
"""

from __future__ import annotations

from collections.abc import Callable

from webhand.engine.cdp.element import CdpElement, ElementTab
from webhand.engine.cdp.frames import CdpFrame, FrameTree


class TabRefs:
    def __init__(self, frame_tree: FrameTree, tab: ElementTab, crashed: Callable[[], bool]) -> None:
        self._frame_tree = frame_tree
        self._tab = tab  # what its elements act through
        self._crashed = crashed  # whether the tab's page crashed (its liveness knows)

    async def frames(self) -> list[CdpFrame]:
        return [CdpFrame(self._frame_tree, state, self._crashed) for state in self._frame_tree.ordered()]

    async def resolve(self, ref: str, *, timeout: float) -> CdpElement:
        """The exact element a snapshot gave ``ref`` to, or ``RefNotFound``; never a look-alike."""
        state, object_id = await self._frame_tree.find_ref(ref, timeout=timeout)
        return CdpElement(self._tab, state, object_id, ref)

    async def stable_selector(self, ref: str, *, timeout: float) -> str:
        return await self._frame_tree.stable_selector(ref, timeout=timeout)

    async def query(self, selector: str, *, timeout: float) -> CdpElement:
        state, object_id = await self._frame_tree.find_selector(selector, timeout=timeout)
        return CdpElement(self._tab, state, object_id, selector)
