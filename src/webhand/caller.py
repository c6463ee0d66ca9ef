"""What the client behind a surface can do while one call runs: hear how it is going, answer a
question the call asks its person.

A surface fills a ``Caller`` for each call from what its client declared (MCP: a progress token,
the elicitation capability; the CLI: a terminal on stderr) and gives it to ``Conversation.call``;
the call's ``Response`` carries it to the handler. A surface that offers nothing passes none, and
every call behaves as before. Standard library only.

Private module: import its public names from ``webhand`` (``webhand.__all__``); the module's path may
change in any release.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger("webhand")

#: Sends one progress report: seconds elapsed since the call started, and what it waits for.
ProgressSink = Callable[[float, str], Awaitable[None]]
#: Asks the person behind the client to do something at a link, then confirm: "accept" (done),
#: "decline" or "cancel".
AskPerson = Callable[[str, str], Awaitable[str]]

#: How often a running call reports its progress.
PROGRESS_INTERVAL = 1.0


@dataclass(frozen=True)
class Caller:
    """The client's side channels for one call; each one ``None`` when the client has no such thing."""

    progress: ProgressSink | None = None
    ask_person: AskPerson | None = None
    #: What the client calls this conversation's default session, when it names it (the CLI's
    #: ``--session NAME`` is a conversation of its own): replies that name the session use it.
    session_name: str | None = None
    #: The folder the client's command ran in (the CLI's current folder): the call's relative paths
    #: start there, and it may use the files there (``ConversationFiles.with_working_folder``).
    working_folder: str | None = None


NO_CALLER = Caller()


class ProgressTicker:
    """While a call runs, tells its client every ``interval`` seconds what the call waits for and for
    how long so far. Handlers name what they wait for (``Response.waiting_for``); until one does,
    the tool's name stands for it. A report that cannot be sent (the client went away) ends the
    ticking, never the call."""

    def __init__(self, send: ProgressSink, what: str, *, interval: float = PROGRESS_INTERVAL) -> None:
        self.what = what
        self._send = send
        self._interval = interval
        self._stopped = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> ProgressTicker:
        self._task = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stopped.set()
        if self._task is not None:
            await self._task

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        while True:
            try:
                await asyncio.wait_for(self._stopped.wait(), self._interval)
                return
            except TimeoutError:
                pass
            elapsed = loop.time() - started
            try:
                async with asyncio.timeout(self._interval):
                    await self._send(elapsed, f"{self.what} ({elapsed:.0f} s so far)")
            except Exception as error:  # noqa: BLE001 - progress is a courtesy: the call goes on
                log.debug("progress report not sent: %s", error)
                return
