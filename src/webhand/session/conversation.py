"""ConversationSessions: the sessions of one conversation, as its tools see them (manager.py holds all).

``run_tool`` is where a host's tool call enters the session layer (host.py's ``Conversation.call``
calls it once per call). From there the call reads top-down:

    run_tool                    the tool's kind says what it runs on (plain: the settings; sessions:
                                this object; page: one session, the rest of this list)
      _turn                     the session (``args.session``, else the default), started when
                                needed, once it is this call's turn (one call at a time, none while
                                a person has control: control.py)
        _run_on                 its notices first, the call recorded in its history (recording.py),
                                a cancelled call's clean-up handed to the next one
          Session.run           dialogs, crashes and hung pages can never hang the call (session.py)
            _run_page_tool      the viewport given with the call, then the tool's handler
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel

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


class RunnableTool(Protocol):
    """What ``run_tool`` needs of a tool (tools/definition.py's ``Tool``; tools/ builds on this
    layer, so the tool is named here by what it offers)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> ToolKind: ...

    @property
    def during_dialog(self) -> bool: ...

    @property
    def read_only(self) -> bool: ...

    async def run(self, target: Any, args: Any, response: Response) -> None: ...


class ConversationSessions:
    """The sessions of one conversation: the way each of its tool calls reaches a session
    (``run_tool``), and what the tools that manage sessions (browser_session_*) use.

    Bound to the conversation by the host, so a tool can never name another conversation's sessions.
    """

    def __init__(self, manager: SessionManager, conversation_id: str) -> None:
        self._manager = manager
        self.conversation_id = conversation_id
        self.settings = manager.settings

    async def run_tool(self, tool: RunnableTool, args: BaseModel, response: Response, *, timeout: float,
                       thumbnail: bool = False) -> None:
        """Run one parsed tool call of this conversation (see the module's docstring for the way
        down). ``timeout``: the call's own, which a page's hang is measured against and a person's
        control is waited for; ``thumbnail``: a dashboard is looking, so the call's history entry
        gets a picture of the page after it."""
        if tool.kind == "plain":
            await tool.run(self.settings, args, response)
            return
        if tool.kind == "sessions":
            await tool.run(self, args, response)
            return
        # Recorded in the session's history here, once for every surface.
        record = CallRecord(tool.name, args.model_dump(exclude_unset=True, exclude={"session"}), thumbnail=thumbnail,
                            acts=not tool.read_only)
        async with self._turn(getattr(args, "session", None), response, timeout) as session:
            await self._run_on(session, functools.partial(_run_page_tool, session, tool, args, response), response,
                               tool.during_dialog, timeout, record)

    async def run(self, name: str | None, work: Callable[[Session], Awaitable[None]], response: Response, *,
                  timeout: float, during_dialog: bool = False) -> None:
        """Run ``work`` on the named session (the default one when None) as a page tool runs: for
        a sessions tool that works in a session on the way (web_fetch's fallback to the browser, a
        flow's bookkeeping between its steps). ``during_dialog``: ``work`` may run while a
        JavaScript dialog is open (it then reads no page)."""
        async with self._turn(name, response, timeout) as session:
            await self._run_on(session, functools.partial(work, session), response, during_dialog, timeout, None)

    @contextlib.asynccontextmanager
    async def _turn(self, name: str | None, response: Response, timeout: float) -> AsyncIterator[Session]:
        """The named session (the default one when None), started when needed, held for this call:
        its lock, once no person has control in the dashboard (control.py), within ``timeout``."""
        session = await self._manager.get_or_create(self.conversation_id, name)
        async with agent_turn(session, timeout, response):
            if not session.place_lost:
                yield session
                return
        # Its pool endpoint was drained while this call waited for its turn (behind a call the drain
        # stopped, which told the loss): this call runs in the session placed afresh.
        session = await self._manager.get_or_create(self.conversation_id, name)
        async with agent_turn(session, timeout, response):
            yield session

    async def _run_on(self, session: Session, work: Callable[[], Awaitable[None]], response: Response,
                      during_dialog: bool, timeout: float, record: CallRecord | None) -> None:
        """Run ``work`` on ``session``, whose turn this call holds: its notices first, the call
        recorded in its history (when ``record``), watched by ``Session.run``."""
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
                await session.run(work, response, during_dialog=during_dialog, timeout=timeout)
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

    async def create(self, name: str, viewport: Viewport | None = None, *, profile: str | None = None) -> Session:
        return await self._manager.create(self.conversation_id, name, viewport=viewport, profile=profile)

    def list(self) -> list[SessionInfo]:
        return self._manager.list(self.conversation_id)

    async def open_default(self, *, profile: str | None = None) -> Session:
        """The conversation's default session, started now when it is not open yet (on ``profile``,
        else the configured one)."""
        return await self._manager.get_or_create(self.conversation_id, profile=profile)

    def find(self, name: str | None) -> Session | None:
        """This conversation's open session of that name (the default one for None), if any."""
        return self._manager.find(self.conversation_id, name)

    async def destroy(self, name: str) -> bool:
        return await self._manager.kill_session(self.conversation_id, name)


async def _run_page_tool(session: Session, tool: RunnableTool, args: BaseModel, response: Response) -> None:
    """A page tool's handler on ``session``; a viewport given with the call (``viewport_width``/
    ``viewport_height``, the Python/Playwright design's form) is set on the tab first."""
    width, height = getattr(args, "viewport_width", None), getattr(args, "viewport_height", None)
    if width or height:
        tab = await session.tab()
        now = session.settings.viewport
        await tab.set_viewport(width or now.width, height or now.height)
        response.add(f"Viewport is now {width or now.width}x{height or now.height}.")
    await tool.run(session, args, response)
