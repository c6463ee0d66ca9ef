"""ConversationSessions: the sessions of one conversation, as its tools see them (manager.py holds all)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal

from webhand.config import Viewport
from webhand.errors import SessionClosed
from webhand.session.recording import CallRecord, record_call
from webhand.session import placing, recovery
from webhand.session.control import agent_turn
from webhand.session.session import Session

if TYPE_CHECKING:
    from webhand.response import Response
    from webhand.session.manager import SessionInfo, SessionManager

#: What a tool runs on, stated by its handler's first parameter (tools/definition.py): a page tool
#: on one session, a sessions tool on the conversation's ``ConversationSessions``, a plain tool on
#: the settings alone.
ToolKind = Literal["page", "sessions", "plain"]


class ConversationSessions:
    """The sessions of one conversation, for the tools that manage them (browser_session_*).

    Bound to the conversation by the host, so a tool can never name another conversation's sessions.
    """

    def __init__(self, manager: SessionManager, conversation_id: str) -> None:
        self._manager = manager
        self.conversation_id = conversation_id
        self.settings = manager.settings

    async def create(self, name: str, viewport: Viewport | None = None, *, profile: str | None = None) -> Session:
        return await self._manager.create(self.conversation_id, name, viewport=viewport, profile=profile)

    def list(self) -> list[SessionInfo]:
        return self._manager.list(self.conversation_id)

    async def run(self, name: str | None, work: Callable[[Session], Awaitable[None]], response: Response, *,
                  during_dialog: bool = False, timeout: float, record: CallRecord | None = None) -> None:
        """Run ``work`` on the named session (the default one when None), started when needed: one
        call at a time per session, with its notices first, through ``Session.run`` so that a
        dialog, a crash or a hung page can never hang the call."""
        session = await self._manager.get_or_create(self.conversation_id, name)
        # Waits while a person has control in the dashboard (session/control.py), within the call's timeout.
        async with agent_turn(session, timeout, response):
            if not session.place_lost:
                await self._run_on(session, work, response, during_dialog, timeout, record)
                return
        # Its pool endpoint was drained while this call waited for its turn (behind a call the drain
        # stopped, which told the loss): this call runs in the session placed afresh.
        session = await self._manager.get_or_create(self.conversation_id, name)
        async with agent_turn(session, timeout, response):
            await self._run_on(session, work, response, during_dialog, timeout, record)

    async def _run_on(self, session: Session, work: Callable[[Session], Awaitable[None]], response: Response,
                      during_dialog: bool, timeout: float, record: CallRecord | None) -> None:
        session.touch()
        if session.after_cancel is not None:  # the previous call was cancelled: its clean-up first
            cleanup, session.after_cancel = session.after_cancel, None
            with contextlib.suppress(Exception):
                async with asyncio.timeout(recovery.CANCEL_CLEANUP_SECONDS + 1):
                    session.notices.append(await asyncio.shield(cleanup))
        for notice in session.notices:
            response.add(notice)
        session.notices.clear()
        try:
            # A host's call is recorded in the session's history (session/recording.py).
            async with record_call(session, record, response) if record else contextlib.nullcontext():
                await session.run(lambda: work(session), response, during_dialog=during_dialog, timeout=timeout)
        except SessionClosed as error:  # its pool endpoint went away mid-call? (session/placing.py)
            raise await placing.explain_closed(session, error) from None
        except asyncio.CancelledError:
            # The client cancelled the call (MCP's notifications/cancelled cancels its task, again at
            # every await): what it started is stopped in a task of its own, which the next call waits
            # for while it holds the session, then says where the page is.
            session.after_cancel = asyncio.get_running_loop().create_task(
                recovery.stop_cancelled(session.active_tab, response.tool))
            raise
        finally:
            session.touch()
            session.first_call_done.set()

    async def open_default(self, *, profile: str | None = None) -> Session:
        """The conversation's default session, started now when it is not open yet (on ``profile``,
        else the configured one)."""
        return await self._manager.get_or_create(self.conversation_id, profile=profile)

    def find(self, name: str | None) -> Session | None:
        """This conversation's open session of that name (the default one for None), if any."""
        return self._manager.find(self.conversation_id, name)

    async def destroy(self, name: str) -> bool:
        return await self._manager.kill_session(self.conversation_id, name)
