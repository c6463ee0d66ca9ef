"""The requests the page made: what a model checks when a page misbehaves (a 500 from an API).

The list says where each answer came from (a service worker, a cache, a prefetch); one request
in full (headers, bodies) is read on demand with browser_network_request.
"""

from __future__ import annotations

import asyncio
import json

from pydantic import Field

from webhand.engine.driver import NetworkConditions, NetworkEntry, RequestDetail, RouteRule
from webhand.errors import WebhandError
from webhand.session.har import har_log
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

# Files that make up the page rather than its data; hidden unless asked for.
_STATIC = {"image", "stylesheet", "font", "script", "media", "manifest", "texttrack"}


#: Requests listed in the reply itself; a longer list is written whole to a file, the newest shown.
INLINE_REQUESTS = 25


class NetworkArgs(PageArgs):
    limit: int = Field(50, ge=1, le=10_000, description="Most recent requests to list.")
    failed_only: bool = Field(False, description="Only requests that failed or got an HTTP error.")
    url_contains: str | None = Field(None, description="Only requests whose URL contains this text.")
    include_static: bool = Field(False, description="Also images, styles, scripts and fonts.")
    har: bool = Field(False, description="Also save the listed requests, with their headers, as a HAR 1.2 file in your "
                                         "folder (Chrome DevTools imports it).")


def _failed(entry: NetworkEntry) -> bool:
    return bool(entry.failure) or (entry.status is not None and entry.status >= 400)


def _line(entry: NetworkEntry, response: Response) -> str:
    url = response.clip(entry.url, 160)
    kind = entry.resource_type if entry.source == "network" else f"{entry.resource_type}, from {entry.source}"
    return f"#{entry.id} {entry.method} {entry.failure or entry.status} {url} ({kind})"


def describe_route(rule: RouteRule, response: Response) -> str:
    if rule.action == "block":
        what = "blocked"
    elif rule.action == "continue":
        changes = ([f"url {response.clip(rule.url, 300)}"] if rule.url else []) \
            + ([f"method {rule.method}"] if rule.method else []) \
            + ([f"headers {', '.join(response.clip(name, 100) for name in rule.headers)}"] if rule.headers else []) \
            + ([f"{len(rule.post_data.encode()):,}-byte body"] if rule.post_data is not None else [])
        what = "sent on changed (" + "; ".join(changes) + ")"
    else:
        what = f"answered {rule.status} ({len(rule.body.encode()):,}-byte body)"
    hits = f"{rule.hits} request{'' if rule.hits == 1 else 's'}"
    return f"{response.clip(rule.pattern, 200)} → {what}, {hits} so far"


def describe_conditions(conditions: NetworkConditions) -> str:
    if conditions == NetworkConditions():
        return "online, no throttling"
    limits = [f"latency {conditions.latency_ms:g} ms" if conditions.latency_ms else "",
              f"download {conditions.download_kbps:g} KB/s" if conditions.download_kbps else "",
              f"upload {conditions.upload_kbps:g} KB/s" if conditions.upload_kbps else ""]
    state = "offline" if conditions.offline else "online"
    return ", ".join([state] + [limit for limit in limits if limit])


def network_header(session: Session, response: Response) -> list[str]:
    """What changes every answer the page gets: the session's mocks and network emulation."""
    lines = []
    if session.context.network_conditions != NetworkConditions():
        lines.append(f"Network: {describe_conditions(session.context.network_conditions)} (browser_network_conditions)")
    if session.context.routes:
        lines.append("Routes (browser_unroute removes them):")
        lines += [f"- {describe_route(rule, response)}" for rule in session.context.routes]
    return lines


@tool("browser_network_requests", capability="network", read_only=True)
async def network_requests(session: Session, args: NetworkArgs, response: Response) -> None:
    """List the requests the page made, newest last: #id, method, status or error, URL, kind, and where the answer
    came from (service worker, cache, prefetch) when not the network."""
    for line in network_header(session, response):
        response.add(line)
    entries = [e for e in session.network
               if (args.include_static or e.resource_type not in _STATIC)
               and (not args.failed_only or _failed(e))
               and (not args.url_contains or args.url_contains in e.url)][-args.limit:]
    if not entries:
        response.add("No matching requests." + ("" if args.include_static else " (Static files are hidden: include_static=true.)"))
        response.data({"requests": []})
        return
    lines = [_line(e, response) for e in entries]
    if len(lines) > INLINE_REQUESTS:  # capped by whole entries, never mid-line; the file has every one
        path = response.write_file("\n".join(lines), "request-list", ".log")
        response.add(f"{len(lines)} requests; the {len(lines) - INLINE_REQUESTS} older ones are only in {path}, "
                     f"the newest {INLINE_REQUESTS} follow (browser_network_request with an #id shows one in full):")
        lines = lines[-INLINE_REQUESTS:]
    response.add("\n".join(lines))
    response.data({"requests": [e.__dict__ for e in entries]})
    if args.har:
        await _save_har(session, entries, response)


async def _save_har(session: Session, entries: list[NetworkEntry], response: Response) -> None:
    """The listed requests as HAR, with the headers the browser still keeps (within the timeout)."""
    timeout = session.settings.timeout

    async def detail(entry: NetworkEntry) -> RequestDetail | None:
        try:
            return await session.context.request_detail(entry.id, timeout=timeout)
        except (WebhandError, asyncio.TimeoutError):
            return None  # the entry is written without headers

    response.waiting_for(f"the headers of {len(entries)} requests for the HAR file")
    details = await asyncio.gather(*(detail(e) for e in entries))
    document = har_log(list(zip(entries, details)), response.masker)
    path = response.write_file(json.dumps(document, indent=1, ensure_ascii=False), "network", ".har")
    response.add(f"Saved {len(entries)} requests as HAR 1.2: {path} (Chrome DevTools: Network, Import HAR).")
