"""Idle reaping: close the sessions nobody called for ``idle_timeout`` seconds, and tell each one's
next call what happened (it lands in a fresh browser session)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict

from webhand.config import Settings
from webhand.errors import shorten
from webhand.session.session import Session, SessionKey

log = logging.getLogger("webhand.sessions")

#: How many idle-closed sessions are remembered, to tell their next call what happened.
_IDLE_NOTICES_KEPT = 1000


class IdleReaper:
    """Reaps the session manager's open ``sessions`` (its own dict: a session closed here leaves it)."""

    def __init__(self, settings: Settings, sessions: dict[SessionKey, Session]) -> None:
        self.settings = settings
        self._sessions = sessions
        self._task: asyncio.Task[None] | None = None
        # Sessions closed for idleness, and what to tell the next call that reaches for them
        # (oldest dropped first: a conversation that never comes back must not grow this forever).
        self._closed: OrderedDict[SessionKey, str] = OrderedDict()

    def start(self) -> None:
        self._task = asyncio.create_task(self._reap(), name="webhand-idle-reaper")

    def stop(self) -> None:
        if self._task:
            self._task.cancel()

    def take_notice(self, key: SessionKey) -> str | None:
        """What the next call of session ``key`` must hear, once: why it was closed; None if it was not."""
        return self._closed.pop(key, None)

    def forget_conversation(self, conversation_id: str) -> None:
        """The conversation ended: no next call to tell."""
        for key in [k for k in self._closed if k.conversation == conversation_id]:
            del self._closed[key]

    async def _reap(self) -> None:
        """Every ``idle_check_interval`` seconds, close sessions idle longer than ``idle_timeout``."""
        while True:
            await asyncio.sleep(self.settings.idle_check_interval)
            for key, session in list(self._sessions.items()):
                if session.lock.locked() or session.control.held or session.idle_for() < self.settings.idle_timeout:
                    continue
                log.info("closing %s of %s after %.0f s idle", key.name, key.conversation, session.idle_for())
                self._remember(key, session)
                self._sessions.pop(key, None)
                with contextlib.suppress(Exception):
                    await session.close()

    def _remember(self, key: SessionKey, session: Session) -> None:
        """Keep what the next call of this session must hear: it will land in a fresh browser."""
        tab = session.active_tab
        where = f" (its page was {shorten(tab.url)})" if tab is not None and not tab.closed and tab.url else ""
        gone = (f"its pages{where} are closed; profile {session.profile!r} keeps its cookies and storage"
                if session.profile else f"its pages{where}, cookies and storage are gone")
        self._closed[key] = (
            f"The browser session {key.name!r} was closed after {session.idle_for():.0f} s without a call "
            f"(idle_timeout is {self.settings.idle_timeout:g} s): {gone}.")
        while len(self._closed) > _IDLE_NOTICES_KEPT:
            self._closed.popitem(last=False)
