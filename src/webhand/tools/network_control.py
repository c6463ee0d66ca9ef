"""Changing what the page's requests get: network emulation (offline, latency, throughput) and
mocks (block a URL pattern, or answer it with a given response).

Both hold for the whole session (every tab, and its service workers) until changed. A mock never
lets a request past the origin policy: a request the policy refuses is refused still.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from webhand.engine.driver import NetworkConditions, RouteRule
from webhand.durations import Timeout
from webhand.errors import InvalidArgument
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool
from webhand.tools.network import describe_conditions, describe_route

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE = re.compile(r"[\r\n\x00]")
#: Longest mocked body: a mock stands in for an API answer or a small file, not a download.
MAX_ROUTE_BODY = 1_000_000


class ConditionsArgs(PageArgs):
    offline: bool | None = Field(None, description="true: the session is offline; false: online again.")
    latency_ms: float | None = Field(None, ge=0, le=60_000,
                                     description="Delay added to every request, in ms (0: none).")
    download_kbps: float | None = Field(None, ge=0, le=1_000_000, description="Download limit in KB/s (0: no limit).")
    upload_kbps: float | None = Field(None, ge=0, le=1_000_000, description="Upload limit in KB/s (0: no limit).")
    reset: bool = Field(False, description="Back to online with no throttling (other fields are then ignored).")
    timeout: Timeout = None


@tool("browser_network_conditions", capability="network")
async def network_conditions(session: Session, args: ConditionsArgs, response: Response) -> None:
    """Set or read the session's network: offline, latency, throughput. Omitted fields keep their value; no field
    only reads it.

    Offline holds for every tab and service worker of the session. The browser's own update check of a
    service worker's script still goes out (Chromium sends it outside the emulated network).
    """
    current = session.context.network_conditions
    wanted = NetworkConditions() if args.reset else NetworkConditions(
        current.offline if args.offline is None else args.offline,
        current.latency_ms if args.latency_ms is None else args.latency_ms,
        current.download_kbps if args.download_kbps is None else args.download_kbps,
        current.upload_kbps if args.upload_kbps is None else args.upload_kbps)
    if wanted != current:
        await session.context.set_network_conditions(wanted)
        response.add(f"Network of this session is now: {describe_conditions(wanted)} "
                     f"(was: {describe_conditions(current)}).")
    else:
        response.add(f"Network of this session: {describe_conditions(wanted)} (unchanged).")
    response.data({"offline": wanted.offline, "latency_ms": wanted.latency_ms,
                   "download_kbps": wanted.download_kbps, "upload_kbps": wanted.upload_kbps})


class RouteArgs(PageArgs):
    pattern: str = Field(min_length=1, max_length=2000,
                         description="URL glob: * within a path part, ** across parts, e.g. **/api/user or **/*.png.")
    action: Literal["block", "fulfill"] = Field("fulfill", description="block: the request fails; fulfill: answer it.")
    status: int = Field(200, ge=100, le=599, description="HTTP status of the answer (fulfill).")
    headers: dict[str, str] = Field(default_factory=dict, description="Response headers of the answer (fulfill).")
    body: str = Field("", description="Response body of the answer (fulfill).")
    content_type: str | None = Field(None, description="Content-Type of the answer, e.g. application/json (fulfill).")
    timeout: Timeout = None


@tool("browser_route", capability="network")
async def route(session: Session, args: RouteArgs, response: Response) -> None:
    """Mock requests matching a URL pattern for this session: block them, or answer with a status, headers and body.
    Replaces a route with the same pattern."""
    if len(args.body.encode()) > MAX_ROUTE_BODY:
        raise InvalidArgument(f"The body is {len(args.body.encode()):,} bytes; a route's body holds at most "
                              f"{MAX_ROUTE_BODY:,}.", "Give a shorter body.")
    if args.action == "block" and (args.body or args.headers or args.content_type or args.status != 200):
        raise InvalidArgument("A blocking route sends no answer, so status, headers, body and content_type do not "
                              "apply.", "Call again with action fulfill to answer, or without them to block.")
    for name, value in args.headers.items():
        # A header the browser cannot send would fail the answer, and the page's request would hang.
        if not _TOKEN.fullmatch(name) or _BAD_VALUE.search(value):
            raise InvalidArgument(f"The response header {name[:100]!r} is not a valid HTTP header (a name is letters, "
                                  "digits and !#$%&'*+-.^_`|~; a value has no line breaks or NUL).", "Fix the header.")
    headers = {name.lower(): value for name, value in args.headers.items()}
    if args.content_type:
        headers["content-type"] = args.content_type
    rule = RouteRule(args.pattern, args.action, args.status, headers, args.body)
    await session.context.add_route(rule)
    response.add(f"Route set: {describe_route(rule, response)}. It holds for every tab of this session until "
                 "browser_unroute; browser_network_requests lists the routes. While a route is set, the browser's "
                 "HTTP cache is off.")
    response.data({"routes": [_route_data(r) for r in session.context.routes]})


class UnrouteArgs(PageArgs):
    pattern: str | None = Field(None, description="The pattern of the route to remove; omit to remove every route.")
    timeout: Timeout = None


@tool("browser_unroute", capability="network")
async def unroute(session: Session, args: UnrouteArgs, response: Response) -> None:
    """Remove a mock set with browser_route (or all of them): matching requests reach the network again."""
    routes = session.context.routes
    if args.pattern is not None and all(r.pattern != args.pattern for r in routes):
        listed = ", ".join(response.clip(r.pattern, 200) for r in routes) or "none"
        raise InvalidArgument(f"No route has the pattern {args.pattern!r} (routes: {listed}).",
                              "Give one of those patterns exactly, or omit pattern to remove them all.")
    removed = await session.context.remove_routes(args.pattern)
    response.add(f"Removed {len(removed)} route{'' if len(removed) == 1 else 's'}: "
                 + ("; ".join(describe_route(r, response) for r in removed) or "there were none") + ".")
    left = session.context.routes
    response.add(f"{len(left)} route{'' if len(left) == 1 else 's'} left." if left else "No routes left.")
    response.data({"routes": [_route_data(r) for r in left]})


def _route_data(rule: RouteRule) -> dict[str, object]:
    return {"pattern": rule.pattern, "action": rule.action, "status": rule.status, "hits": rule.hits}
