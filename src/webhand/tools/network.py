"""The requests the page made: what a model checks when a page misbehaves (a 500 from an API)."""

from __future__ import annotations

from pydantic import Field

from webhand.engine.driver import NetworkEntry
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

# Files that make up the page rather than its data; hidden unless asked for.
_STATIC = {"image", "stylesheet", "font", "script", "media", "manifest", "texttrack"}


class NetworkArgs(PageArgs):
    limit: int = Field(50, ge=1, le=10_000, description="Most recent requests to list.")
    failed_only: bool = Field(False, description="Only requests that failed or got an HTTP error.")
    url_contains: str | None = Field(None, description="Only requests whose URL contains this text.")
    include_static: bool = Field(False, description="Also images, styles, scripts and fonts.")


def _failed(entry: NetworkEntry) -> bool:
    return bool(entry.failure) or (entry.status is not None and entry.status >= 400)


def _line(entry: NetworkEntry, response: Response) -> str:
    url = response.clip(entry.url, 160)
    return f"{entry.method} {entry.failure or entry.status} {url} ({entry.resource_type})"


@tool("browser_network_requests", capability="network", read_only=True)
async def network_requests(session: Session, args: NetworkArgs, response: Response) -> None:
    """List the requests the page made, newest last: method, status or error, URL, kind."""
    entries = [e for e in session.network
               if (args.include_static or e.resource_type not in _STATIC)
               and (not args.failed_only or _failed(e))
               and (not args.url_contains or args.url_contains in e.url)][-args.limit:]
    if not entries:
        response.add("No matching requests." + ("" if args.include_static else " (Static files are hidden: include_static=true.)"))
        response.data({"requests": []})
        return
    response.large("\n".join(_line(e, response) for e in entries), what="request list", suffix=".log")
    response.data({"requests": [e.__dict__ for e in entries]})
