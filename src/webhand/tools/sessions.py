"""Ending a session."""

from __future__ import annotations

from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool


@tool("browser_close", destructive=True)
async def close(session: Session, args: PageArgs, response: Response) -> None:
    """Close the browser session and its browser. The next browser call starts a fresh one."""
    await session.close()
    response.add(f"Closed the {session.key}. The next browser call starts a new one.")
