"""The console: recent messages and page errors, from a ring buffer."""

from __future__ import annotations

import time

from pydantic import Field

from webhand.response import URL_LIMIT, Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

#: Longest console message shown in the list (a stack trace fits); the whole list may go to a file.
_ENTRY_LIMIT = 10_000


def clock_time(unix_time: float) -> str:
    """Local wall-clock time to the millisecond, as DevTools' console timestamps read: 12:03:04.123."""
    return time.strftime("%H:%M:%S", time.localtime(unix_time)) + f".{int(unix_time * 1000) % 1000:03d}"


class LogsArgs(PageArgs):
    limit: int = Field(100, ge=1, le=10_000, description="Most recent entries to return.")


@tool("browser_recent_console_logs", read_only=True)
async def recent_console_logs(session: Session, args: LogsArgs, response: Response) -> None:
    """Read the most recent console messages and uncaught page errors, oldest first; those of service workers,
    workers and iframes are tagged [sw], [worker], [frame]."""
    entries = list(session.console)[-args.limit:]
    if not entries:
        response.add("No console messages.")
        response.data({"entries": []})
        return
    # One entry per line, led by the local time the page logged it, as DevTools shows it: a message
    # over several lines (a stack trace) keeps them, each later one led by a mark no reply line
    # starts with (page text is data, never structure).
    lines = [f"{clock_time(e.logged_at)} " + (f"[{e.source}] " if e.source else "")
             + f"[{e.level}] {response.page_block(e.text, _ENTRY_LIMIT)}"
             + (f" ({response.page(e.location, URL_LIMIT)})" if e.location else "") for e in entries]
    response.large("\n".join(lines), what="console log", suffix=".log")
    response.data({"entries": [e.__dict__ for e in entries]})


@tool("browser_clear_console_logs", capability="extra")
async def clear_console_logs(session: Session, args: PageArgs, response: Response) -> None:
    """Empty the console log buffer."""
    count = len(session.console)
    session.console.clear()
    response.add(f"Cleared {count} console log entries.")
