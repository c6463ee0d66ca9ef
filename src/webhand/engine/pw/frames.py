"""Frames and refs: the live frames of one page in order, each with a key that never changes,
resolving a ref a snapshot gave to the exact element it named, and CSS queries."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError
from playwright.async_api import Frame as PWFrame
from playwright.async_api import Page as PWPage
from playwright.async_api import TimeoutError as PWTimeout

from webhand.engine.page_scripts import SELECTOR_OF_REF
from webhand.engine.pw.element import PlaywrightElement
from webhand.engine.pw.errors import SNAPSHOT_AGAIN, translate, translated
from webhand.errors import RefNotFound

_REF = re.compile(r"^(?:(f\d+))?(e\d+)$")


class PlaywrightFrame:
    def __init__(self, frame: PWFrame, key: str, parent_key: str | None) -> None:
        self.frame = frame
        self.key = key
        self.parent_key = parent_key

    async def evaluate(self, script: str, arg: Any = None) -> Any:
        async with translated(f"Reading frame {self.key or 'main'}"):
            return await self.frame.evaluate(script, arg)

    async def owner_marker(self, script: str) -> Any:
        try:
            owner = await self.frame.frame_element()
            try:
                return await owner.evaluate(script)
            finally:
                await owner.dispose()
        except PWError:
            return None


class PlaywrightFrameTree:
    """One page's frames and the refs in them: the tab's ``refs`` component (engine/driver.py's
    ``Refs``). The main frame's key is ""; every other frame gets
    "f1", "f2"… the first time it is seen, and keeps it while it lives, so that a ref ("f2e7")
    names its frame across snapshots."""

    def __init__(self, page: PWPage, session: Callable[[], Awaitable[CDPSession]]) -> None:
        self._page = page
        self._session = session  # the tab's CDP session, handed to its elements (typing in one message)
        self._frame_keys: dict[PWFrame, str] = {}
        self._frames_seen = 0

    def _key(self, frame: PWFrame) -> str:
        if frame == self._page.main_frame:
            return ""
        key = self._frame_keys.get(frame)
        if key is None:
            self._frames_seen += 1
            key = self._frame_keys[frame] = f"f{self._frames_seen}"
        return key

    async def frames(self) -> list[PlaywrightFrame]:
        """All live frames, parents before children, each with a key that never changes."""
        live = [f for f in self._page.frames if not f.is_detached()]
        for gone in [f for f in self._frame_keys if f not in live]:
            del self._frame_keys[gone]
        return [PlaywrightFrame(f, self._key(f), self._key(f.parent_frame) if f.parent_frame else None) for f in live]

    async def resolve(self, ref: str, *, timeout: float) -> PlaywrightElement:
        """The exact element a snapshot gave ``ref`` to, or ``RefNotFound``; never a look-alike."""
        match = _REF.match(ref.strip())
        if not match:
            raise RefNotFound(f"'{ref}' is not a ref.", "Refs look like e12 or f1e3; " + SNAPSHOT_AGAIN)
        frame_key, local = match.group(1) or "", match.group(2)
        frame = self._page.main_frame if not frame_key else next(
            (f for f, k in self._frame_keys.items() if k == frame_key and not f.is_detached()), None)
        if frame is None:
            raise RefNotFound(f"Ref {ref} is stale: its frame is gone.", SNAPSHOT_AGAIN)
        try:
            handle = await asyncio.wait_for(frame.evaluate_handle(
                "r => window.__webhand ? window.__webhand.resolve(r) : 'unknown'", local), timeout)
        except (PWError, asyncio.TimeoutError) as error:
            raise translate(error, f"Finding {ref}", timeout) from None
        element = handle.as_element()
        if element is None:
            reason = await handle.json_value()
            if reason == "removed":
                raise RefNotFound(f"Ref {ref} is stale: its element was removed or replaced since the snapshot.", SNAPSHOT_AGAIN)
            raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated or the ref was never issued).",
                              SNAPSHOT_AGAIN)
        return PlaywrightElement(element, ref, self._session)

    async def stable_selector(self, ref: str, *, timeout: float) -> str:
        match = _REF.match(ref.strip())
        if not match or match.group(1):  # a frame's element would need its frame's selector too
            return ""
        try:
            found = await asyncio.wait_for(self._page.main_frame.evaluate(SELECTOR_OF_REF, match.group(2)), timeout)
        except (PWError, asyncio.TimeoutError) as error:
            raise translate(error, f"Reading a selector for {ref}", timeout) from None
        return found if isinstance(found, str) else ""

    async def query(self, selector: str, *, timeout: float) -> PlaywrightElement:
        try:
            handle = await self._page.wait_for_selector(selector, state="attached", timeout=timeout * 1000)
        except PWTimeout:
            raise RefNotFound(f"No element matches the selector {selector!r}.",
                              "Call browser_snapshot and use a ref, or fix the selector.") from None
        except PWError as error:
            raise RefNotFound(f"The selector {selector!r} is not valid: {str(error).splitlines()[0]}",
                              "Use a CSS selector, or a ref from browser_snapshot.") from None
        assert handle is not None
        return PlaywrightElement(handle, selector, self._session)
