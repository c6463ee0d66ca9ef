"""The host side: one ``Webhand`` per process, one ``Conversation`` per conversation.

A host (an MCP server, the CLI daemon, an agent framework) creates a ``Webhand``, and for each
conversation a ``Conversation`` bound to that conversation's id. The model only ever sends a tool
name and arguments; it can never choose the conversation, so it can never reach another
conversation's browser.

Private module: import its public names from ``webhand`` (``webhand.__all__``); the module's path may
change in any release.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from functools import cached_property
from typing import TYPE_CHECKING, Any

from webhand.caller import NO_CALLER, Caller, ProgressTicker
from webhand.config import Settings
from webhand.errors import ActionTimeout, UnknownTool, WebhandError
from webhand.session import call_deadline
from webhand.response import Response, ToolResult
from webhand.session.conversation import ConversationSessions
from webhand.conversation_files import ConversationFiles
from webhand.session.manager import SessionManager

if TYPE_CHECKING:
    from webhand.tools import Tool

log = logging.getLogger("webhand")

#: Time a call may take beyond its own timeout (a navigation plus the reply's bookkeeping).
_CALL_MARGIN_SECONDS = 10.0
#: A dashboard page refreshes every few seconds; this long after its last request, nobody is looking.
_DASHBOARD_WATCH_SECONDS = 30.0


class Webhand:
    """Owns the settings, the sessions and the served tools. Use as ``async with Webhand() as wh``."""

    def __init__(self, settings: Settings | None = None, *, capabilities: list[str] | None = None) -> None:
        self.settings = settings or Settings.from_sources()
        self.sessions = SessionManager(self.settings)
        self._capabilities = capabilities
        if capabilities is not None:  # where responses came from is asked only when the network tools are served
            self.sessions.driver.response_sources = bool({"network", "all"} & set(capabilities))
        self._opening: set[asyncio.Task[Any]] = set()
        #: When a dashboard page last asked for anything (monotonic): while someone looks, each call's
        #: history entry gets a thumbnail of the page after it; nobody looking costs nothing.
        self.dashboard_seen = float("-inf")

    @property
    def dashboard_url(self) -> str | None:
        """Where a dashboard serves this Webhand's sessions (surfaces/dashboard/), once one does."""
        return self.sessions.dashboard_url

    @dashboard_url.setter
    def dashboard_url(self, url: str | None) -> None:
        self.sessions.dashboard_url = url

    def dashboard_watched(self) -> bool:
        return time.monotonic() - self.dashboard_seen < _DASHBOARD_WATCH_SECONDS

    @cached_property
    def tools(self) -> dict[str, "Tool"]:
        """The served tools, by name. Imported on first use: an MCP server answers ``initialize``
        before it needs the catalog."""
        from webhand.tools import enabled_tools

        return {t.name: t for t in enabled_tools(self.settings, self._capabilities)}

    async def start(self) -> "Webhand":
        await self.sessions.start()
        return self

    async def close(self) -> None:
        from webhand.page.convert import end_spare_worker  # light: the converting libraries load in the worker

        await self.sessions.shutdown_all()
        end_spare_worker()

    async def __aenter__(self) -> "Webhand":
        return await self.start()

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def open_soon(self, conversation_id: str) -> None:
        """Start opening the conversation's default session now, in the background. A stdio server
        knows its one conversation when it starts, so its browser launches while the client is
        still initializing. A failure is left to the first call, which opens it again and says why."""
        if (launcher := self.sessions.launcher) is not None:
            launcher.prelaunch()  # beside the driver's start-up
        task = asyncio.create_task(self.sessions.get_or_create(conversation_id), name="webhand-open-soon")
        self._opening.add(task)
        task.add_done_callback(self._opened)

    def _opened(self, task: "asyncio.Task[Any]") -> None:
        self._opening.discard(task)
        if not task.cancelled():
            with contextlib.suppress(Exception):
                task.exception()  # retrieved here: the first call reports the same failure

    def conversation(self, conversation_id: str) -> "Conversation":
        """One conversation, to run its tool calls; the id comes from the host, never the model."""
        if not conversation_id:
            raise ValueError("conversation_id must be a non-empty string")
        return Conversation(self, conversation_id)

    #: The old name of ``conversation`` (before issue 39's vocabulary), kept for hosts written against it.
    context = conversation

    async def end_conversation(self, conversation_id: str) -> int:
        """Close every session of a conversation that ended; returns how many were closed."""
        return await self.sessions.kill_conversation(conversation_id)


class Conversation:
    """Runs tool calls for one conversation.

    A call flows one way: a surface (surfaces/) names the tool and its arguments, ``call`` parses
    them and keeps the call's deadline, progress and error replies, and the conversation's sessions
    run it (``ConversationSessions.run_tool``, session/conversation.py), down to the tool's handler
    and the driver.
    """

    def __init__(self, webhand: Webhand, conversation_id: str) -> None:
        self.webhand = webhand
        self.conversation_id = conversation_id

    @property
    def files(self) -> ConversationFiles:
        """This conversation's own folder (``files.folder``), where its screenshots, PDFs and downloads go."""
        return self.webhand.sessions.files_of(self.conversation_id)

    @cached_property
    def sessions(self) -> ConversationSessions:
        """This conversation's sessions: where its calls run."""
        return ConversationSessions(self.webhand.sessions, self.conversation_id)

    async def call(self, name: str, arguments: dict[str, Any] | None = None, caller: Caller = NO_CALLER, *,
                   called_as: str | None = None) -> ToolResult:
        """Run one tool call. Never raises for anything the model sent: failures become error replies.
        ``caller``: what the surface's client can do meanwhile (hear progress, answer its person).
        ``called_as``: the name the model used, when the surface read another design's tool name as
        ``name`` (surfaces/exposure.py's ``by_name``): the reply names the tool as the model called it."""
        settings = self.webhand.settings
        reply_name = called_as or name
        response = Response(settings, reply_name, self.files, caller)
        response.served = self.webhand.tools.keys()
        if caller.progress is None:
            return await self._call(name, arguments, response)
        async with ProgressTicker(caller.progress, f"{reply_name} running") as ticker:
            response.ticker = ticker
            return await self._call(name, arguments, response)

    async def _call(self, name: str, arguments: dict[str, Any] | None, response: Response) -> ToolResult:
        settings = self.webhand.settings
        try:
            tool, arguments = self._tool(name, arguments)
            args = tool.parse(arguments)
            for note in args.reading_notes:  # e.g. a timeout read as milliseconds
                response.add(note)
            own_timeout = float(getattr(args, "timeout", None) or settings.timeout)
            timeout = own_timeout + _CALL_MARGIN_SECONDS
            try:
                async with asyncio.timeout(timeout) as deadline:
                    with call_deadline.counting(deadline):  # a browser launch on the way is not counted
                        await self.sessions.run_tool(tool, args, response, timeout=own_timeout,
                                                     thumbnail=self.webhand.dashboard_watched())
            except TimeoutError:
                raise ActionTimeout(f"{response.tool} did not finish within {timeout:g} s.",
                                    "The page may be hung: call browser_snapshot, or browser_close to start over.") from None
        except WebhandError as error:
            response.fail(error)
        except Exception as error:  # noqa: BLE001 - a bug must not take the server down
            log.exception("tool %s failed unexpectedly", response.tool)
            response.fail(WebhandError(f"{response.tool} failed unexpectedly: {type(error).__name__}: {error}.",
                                       "This is a webhand bug; the session is still usable. Try again or call browser_close."))
        return response.result()

    def _tool(self, name: str, arguments: dict[str, Any] | None) -> "tuple[Tool, dict[str, Any] | None]":
        """The served tool of that name. Surfaces pass webhand's names (they read other designs'
        names themselves, ``surfaces/exposure.by_name``); a Python caller may still name another
        design's tool, read here by the same function (``other_designs.our_call``)."""
        tool = self.webhand.tools.get(name)
        if tool is None:
            from webhand.tools.other_designs import our_call

            ours, arguments = our_call(name, arguments, self.webhand.tools)
            tool = self.webhand.tools.get(ours)
        if tool is None:
            from webhand.tools import CATALOG

            known = "not enabled here" if name in CATALOG else "unknown"
            raise UnknownTool(f"Tool {name!r} is {known}.", "Available tools: " + ", ".join(sorted(self.webhand.tools)) + ".")
        return tool, arguments


#: The old public name of ``Conversation`` (before issue 39's vocabulary), kept for hosts written against it.
ToolContext = Conversation
