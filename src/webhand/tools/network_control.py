"""Changing what the page's requests get: network emulation (offline, latency, throughput) and
routes (block a URL pattern, answer it with a given response, or change the request and send it on).

Both hold for the whole session (every tab, and its service workers) until changed. A mock never
lets a request past the origin policy: a request the policy refuses is refused still, and a
rewritten request is checked again at its new URL.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field

from webhand.engine.driver import NetworkConditions, RouteRule
from webhand.durations import Timeout
from webhand.errors import EvaluationDisabled, InvalidArgument
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool
from webhand.tools.network import describe_conditions, describe_route

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE = re.compile(r"[\r\n\x00]")
#: Longest mocked body: a mock stands in for an API answer or a small file, not a download.
MAX_ROUTE_BODY = 1_000_000
#: Request headers a route may not set: those a page cannot set either (the Fetch standard's forbidden
#: names, and the user agent, which Chromium keeps too). A server decides on them who is asking: a
#: webhand server refuses a browser it drives by its user agent, Origin and Sec-Fetch-*, and a
#: Cookie would speak for the user's sign-in.
_FORBIDDEN_REQUEST_HEADERS = frozenset({
    "user-agent", "origin", "cookie", "cookie2", "host", "referer", "accept-charset", "accept-encoding",
    "access-control-request-headers", "access-control-request-method", "connection", "content-length", "date",
    "dnt", "expect", "keep-alive", "set-cookie", "te", "trailer", "transfer-encoding", "upgrade", "via"})
_FORBIDDEN_REQUEST_PREFIXES = ("sec-", "proxy-")
#: What a mock may answer with while ``evaluate_enabled = false``: types no browser runs as code
#: (no document, script or stylesheet that scripts). Sent with ``X-Content-Type-Options: nosniff``,
#: so that no browser reads them as another type (a ``<script src>`` runs text/plain otherwise).
INERT_TYPES = ("application/json", "text/plain", "text/css", "text/csv", "image/png", "image/jpeg", "image/gif",
               "image/webp", "image/avif", "image/bmp", "image/x-icon", "image/vnd.microsoft.icon", "font/woff",
               "font/woff2", "font/ttf", "font/otf")


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
    action: Literal["block", "fulfill", "continue"] = Field(
        "fulfill", description="block: the request fails; fulfill: answer it; continue: change it (url, method, "
                               "headers, body) and send it on.")
    status: int = Field(200, ge=100, le=599, description="HTTP status of the answer (fulfill).")
    headers: dict[str, str] = Field(default_factory=dict, description="fulfill: the answer's headers; continue: headers "
                                                                      "set on the request (others kept).")
    body: str | None = Field(None, description="fulfill: the answer's body; continue: the request's new body.")
    content_type: str | None = Field(None, description="Content-Type of the answer, e.g. application/json (fulfill).")
    url: str | None = Field(None, max_length=8000, description="continue: send the request to this URL instead "
                                                               "(same scheme; the origin policy applies to it).")
    method: str | None = Field(None, max_length=20, description="continue: send it with this method instead, e.g. POST.")
    timeout: Timeout = None


@tool("browser_route", capability="network")
async def route(session: Session, args: RouteArgs, response: Response) -> None:
    """Route requests matching a URL pattern for this session: block them, answer with a status, headers and body,
    or change their URL, method, headers or body and let them continue. Replaces a route with the same pattern."""
    body = args.body or ""
    if len(body.encode()) > MAX_ROUTE_BODY:
        raise InvalidArgument(f"The body is {len(body.encode()):,} bytes; a route's body holds at most "
                              f"{MAX_ROUTE_BODY:,}.", "Give a shorter body.")
    if args.action == "block" and (args.body or args.headers or args.content_type or args.status != 200
                                   or args.url or args.method):
        raise InvalidArgument("A blocking route sends no answer, so status, headers, body and content_type do not "
                              "apply.", "Call again with action fulfill to answer, or without them to block.")
    if args.action != "continue" and (args.url or args.method):
        raise InvalidArgument("url and method change a request that goes on: they go with action continue.",
                              "Call again with action continue (or without url and method to answer it).")
    for name, value in args.headers.items():
        # A header the browser cannot send would fail the answer, and the page's request would hang.
        if not _TOKEN.fullmatch(name) or _BAD_VALUE.search(value):
            raise InvalidArgument(f"The header {name[:100]!r} is not a valid HTTP header (a name is letters, "
                                  "digits and !#$%&'*+-.^_`|~; a value has no line breaks or NUL).", "Fix the header.")
    headers = {name.lower(): value for name, value in args.headers.items()}
    if args.action == "continue":
        rule = _rewrite(args, headers)
    else:
        if args.content_type:
            headers["content-type"] = args.content_type
        if args.action == "fulfill" and not session.settings.evaluate_enabled:
            _inert_only(headers, body)
        rule = RouteRule(args.pattern, args.action, args.status, headers, body)
    await session.context.add_route(rule)
    response.add(f"Route set: {describe_route(rule, response)}. It holds for every tab of this session until "
                 "browser_unroute; browser_network_requests lists the routes. While a route is set, the browser's "
                 "HTTP cache is off.")
    response.data({"routes": [_route_data(r) for r in session.context.routes]})


def _inert_only(headers: dict[str, str], body: str) -> None:
    """With ``evaluate_enabled = false``, a mock's answer is refused when a browser could run it: a
    document (HTML, XHTML, SVG, XML), a script, or a body with no type, which the browser sniffs. A
    mock is code as much as browser_eval is. The answer is marked ``nosniff`` (set here, over any
    the model gave), so that its type is the one the browser reads."""
    given = headers.get("content-type", "")
    essence = given.split(";", 1)[0].strip().lower()
    inert = essence in INERT_TYPES or essence.startswith("application/") and essence.endswith("+json")
    if not inert and (body or essence):
        what = f"the type {given[:80]!r}" if essence else "a body with no content_type (the browser would guess it)"
        raise EvaluationDisabled(
            f"A mock cannot answer with {what}: a browser may run it as a page or a script, and JavaScript is "
            "disabled by configuration (evaluate_enabled = false).",
            "Answer with an inert content_type (" + ", ".join(INERT_TYPES) + ", or any application/*+json), "
            "or block the request instead.")
    headers["x-content-type-options"] = "nosniff"


def _rewrite(args: RouteArgs, headers: dict[str, str]) -> RouteRule:
    """A ``continue`` route, its changes checked: a URL the browser can send to, a method that is a token."""
    if args.status != 200 or args.content_type:
        raise InvalidArgument("A continuing request gets the server's answer, so status and content_type do not "
                              "apply.", "Call again without them, or with action fulfill to answer it yourself.")
    forbidden = sorted(name for name in headers
                       if name in _FORBIDDEN_REQUEST_HEADERS or name.startswith(_FORBIDDEN_REQUEST_PREFIXES))
    if forbidden:
        raise InvalidArgument(f"A route cannot set the request header{'s' if len(forbidden) > 1 else ''} "
                              + ", ".join(name[:100] for name in forbidden) + ": the browser sets "
                              f"{'them' if len(forbidden) > 1 else 'it'} (as no page may), and servers rely on "
                              f"{'them' if len(forbidden) > 1 else 'it'} to know who is asking.",
                              "Set other headers, or none; to sign in, use the site's own login.")
    if not (args.url or args.method or headers or args.body is not None):
        raise InvalidArgument("A continue route changes the request: give url, method, headers or body.",
                              "Call again with what to change.")
    if args.url is not None:
        parts = urlsplit(args.url)
        if parts.scheme not in ("http", "https") or not parts.netloc or _BAD_VALUE.search(args.url):
            raise InvalidArgument(f"The url {args.url[:200]!r} is not an absolute http(s) URL.",
                                  "Give the whole URL, e.g. https://example.com/api/v2/items.")
    if args.method is not None and not _TOKEN.fullmatch(args.method):
        raise InvalidArgument(f"The method {args.method[:20]!r} is not an HTTP method.", "Give one such as GET or POST.")
    return RouteRule(args.pattern, "continue", headers=headers, url=args.url,
                     method=args.method.upper() if args.method else None, post_data=args.body)


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
    if rule.action == "continue":
        return {"pattern": rule.pattern, "action": rule.action, "url": rule.url, "method": rule.method,
                "headers": sorted(rule.headers), "hits": rule.hits}
    return {"pattern": rule.pattern, "action": rule.action, "status": rule.status, "hits": rule.hits}
