"""One browser session: its tabs, the active tab, the console buffer and a lock.

A session is what a conversation (or one of its named sessions) keeps between calls. Calls on
one session are serialized by ``lock``; the manager runs different sessions in parallel.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from webhand.config import Settings
from webhand.engine.driver import Browser, ConsoleEntry, Context, Element, Tab, TabEvents
from webhand.errors import InvalidArgument, SessionClosed


if TYPE_CHECKING:  # only for the annotation: page code does not belong to a session's import
    from webhand.page.snapshot import Snapshot


@dataclass(frozen=True)
class SessionKey:
    conversation: str
    name: str = "default"

    def __str__(self) -> str:
        return self.name if self.name != "default" else "default session"


class Session:
    def __init__(self, key: SessionKey, settings: Settings, browser: Browser, context: Context,
                 events: TabEvents, *, owns_browser: bool) -> None:
        self.key = key
        self.settings = settings
        self.browser = browser
        self.context = context
        self.owns_browser = owns_browser
        self.console: deque[ConsoleEntry] = deque(maxlen=settings.console_buffer)
        self.console_seen = 0  # entries ever recorded; lets an action report what it caused
        self.lock = asyncio.Lock()
        self.created = time.monotonic()
        self.last_used = self.created
        self.notices: list[str] = []  # told to the model in the next reply, then cleared
        # Things the page did on its own (dialog opened, download finished, tab opened): an
        # action's reply lists those noted since the action began (see session/changes.py).
        self.events: deque[str] = deque(maxlen=200)
        self.events_seen = 0
        # What the model last saw of the page: an action's reply tells what changed since (page/diff.py).
        self.last_snapshot: Snapshot | None = None
        self.closed = False
        self.on_closed: list[object] = []  # callables run after close (the manager forgets the session)
        self._active: Tab | None = context.tabs[0] if context.tabs else None
        events.console = self._record_console

    # -- state ---------------------------------------------------------------------------------
    def _record_console(self, entry: ConsoleEntry) -> None:
        self.console.append(entry)
        self.console_seen += 1

    def note(self, text: str) -> None:
        """Record something the page did, for the reply of the action that caused it."""
        self.events.append(text)
        self.events_seen += 1

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def idle_for(self) -> float:
        return time.monotonic() - self.last_used

    @property
    def alive(self) -> bool:
        return not self.closed and self.browser.alive

    # -- tabs ----------------------------------------------------------------------------------
    async def tab(self) -> Tab:
        """The active tab; if the model closed it (or the page closed itself), the newest open one."""
        if self.closed:
            raise SessionClosed(f"The {self.key} is closed.", "Call the tool again to start a new one.")
        if self._active is None or self._active.closed:
            open_tabs = [t for t in self.context.tabs if not t.closed]
            self._active = open_tabs[-1] if open_tabs else await self.context.new_tab()
        return self._active

    def activate(self, tab: Tab) -> None:
        self._active = tab

    async def element(self, ref: str | None, selector: str | None) -> Element:
        """The element an action names: by ref (exact, never re-matched) or by CSS selector."""
        tab = await self.tab()
        timeout = self.settings.action_timeout
        if ref:
            return await tab.resolve(ref, timeout=timeout)
        if selector:
            return await tab.query(selector, timeout=timeout)
        raise InvalidArgument("Name the element with `ref` (from browser_snapshot) or `selector`.",
                              "Call browser_snapshot to get refs.")

    # -- end -----------------------------------------------------------------------------------
    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            await self.context.close()
            if self.owns_browser:
                await self.browser.close()
        finally:
            for callback in self.on_closed:
                callback()  # type: ignore[operator]
