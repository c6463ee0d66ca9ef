"""MCP over streamable HTTP: one conversation (and browser) per MCP session, behind safe defaults.

Safety: the HTTP checks it shares with the dashboard (``surfaces/http_security``: loopback by
default, a bearer token beyond it, Host and Origin allow lists, capped bodies); malformed JSON-RPC
gets a JSON-RPC error (``jsonrpc_guard``). Sessions whose client went away end after the idle
timeout, or sooner when a new client needs their place (``http_sessions``); ending a session
(DELETE, idle, shutdown) ends its conversation, which closes its browser.
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server.transport_security import RequestBodyLimitMiddleware
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp

from webhand.config import Settings
from webhand.host import Conversation, Webhand
from webhand.security.origins import OWN_ENDPOINTS
from webhand.surfaces.dashboard import OPEN_PATHS, dashboard_mount
from webhand.surfaces.http_security import (
    BearerTokenGate,
    HttpOptions,
    SessionBrowserGate,
    bind,
    check_options,
    is_loopback,
    transport_security,
)
from webhand.surfaces.mcp.http_sessions import SessionReclaimer
from webhand.surfaces.mcp.jsonrpc_guard import JsonRpcGuard
from webhand.surfaces.mcp.server import build_server

log = logging.getLogger("webhand")

MCP_PATH = "/mcp"


def settings_for_address(settings: Settings, host: str) -> Settings:
    """The settings a server on ``host`` runs with: beyond loopback, JavaScript evaluation is off
    unless the config, the environment or a flag set ``evaluate_enabled`` (on for local use).

    Every client of such a server holds a token, but ``browser_eval`` runs any script in a page
    that may hold the user's logins: a remote caller gets it only when someone chose that."""
    if is_loopback(host) or "evaluate_enabled" in settings.model_fields_set:
        return settings
    return settings.model_copy(update={"evaluate_enabled": False})


def conversation_of(session_id: str) -> str:
    """The conversation of one MCP session (the id comes from the SDK, never from the model)."""
    return f"mcp-{session_id}"


def session_context_for(webhand: Webhand) -> Callable[[Any], Conversation]:
    """Map an MCP request to the conversation of its MCP session, created on first use."""

    def context_for(ctx: Any) -> Conversation:
        # The SDK keeps per-connection state and teardown on the Connection; ServerRequestContext
        # does not expose it publicly in mcp 2.3 (pinned in constraints.txt), so reach it here only.
        connection = getattr(ctx.session, "_connection", None)
        if connection is None or not connection.session_id:
            raise MCPError(code=types.INVALID_REQUEST, message=(
                "This request has no MCP session. webhand gives each MCP session its own browser: connect with "
                "the initialize handshake (protocol 2025-11-25) so the server assigns one."))
        context = connection.state.get("webhand_context")
        if context is None:
            context = webhand.conversation(conversation_of(connection.session_id))
            connection.state["webhand_context"] = context
            # Unwound when the session ends for any reason: client DELETE, idle timeout, shutdown.
            connection.exit_stack.push_async_callback(webhand.end_conversation, context.conversation_id)
        return context

    return context_for


def build_app(webhand: Webhand, options: HttpOptions, on_ready: Callable[[], None] | None = None) -> ASGIApp:
    check_options(options)
    settings = webhand.settings
    security = transport_security(options)
    server = build_server(webhand, session_context_for(webhand), style=options.style)
    # Called for the SDK's session manager (server.session_manager) only: the route is ours, so
    # that its requests pass the JSON-RPC guard and the session reclaimer first.
    server.streamable_http_app(
        streamable_http_path=MCP_PATH, transport_security=security, host=options.host,
        max_request_body_size=options.max_body_bytes, session_idle_timeout=settings.idle_timeout,
        max_sessions=settings.max_sessions)
    sessions = SessionReclaimer(
        server.session_manager.handle_request, path=MCP_PATH, max_sessions=settings.max_sessions,
        abandoned_after=settings.abandoned_after, idle_timeout=settings.idle_timeout,
        queue_timeout=settings.queue_timeout,
        end_conversation=lambda session_id: webhand.end_conversation(conversation_of(session_id)))
    endpoint = RequestBodyLimitMiddleware(JsonRpcGuard(sessions, security), options.max_body_bytes)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # Browsers start with the server and die with it; MCP sessions end first, so each
        # conversation is closed by its own session's teardown before the rest are shut down.
        async with webhand, server.session_manager.run():
            if on_ready:
                on_ready()
            yield

    app: ASGIApp = Starlette(routes=[Route(MCP_PATH, endpoint=endpoint), dashboard_mount(webhand, options)],
                             lifespan=lifespan)
    if options.token:
        app = BearerTokenGate(app, options.token, open_paths=OPEN_PATHS)
    return SessionBrowserGate(app, options, open_paths=OPEN_PATHS)


async def serve_http(webhand: Webhand, options: HttpOptions) -> None:
    """Serve until SIGTERM/SIGINT; prints ``webhand MCP listening on <url>`` to stderr when ready."""
    import uvicorn

    check_options(options)
    sock = bind(options.host, options.port)
    port = sock.getsockname()[1]
    shown = f"[{options.host}]" if ":" in options.host else options.host
    url = f"http://{shown}:{port}{MCP_PATH}"

    def ready() -> None:
        webhand.dashboard_url = f"http://{shown}:{port}"  # browser_request_human gives its link
        print(f"webhand MCP listening on {url}", file=sys.stderr, flush=True)
        print(f"webhand dashboard on {webhand.dashboard_url}/dashboard/", file=sys.stderr, flush=True)
        if not is_loopback(options.host) and not options.allowed_hosts:
            print("webhand: requests must name an allowed Host (DNS-rebinding protection); clients reaching this "
                  "server by another name or address need --allow-host NAME:PORT (or NAME:*).", file=sys.stderr, flush=True)

    app = build_app(webhand, options, ready)
    OWN_ENDPOINTS.add(options.host, port)  # before any browser starts: none of its pages may reach it
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5,
                            ws="none", proxy_headers=False, server_header=False)
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal under the handler that
    # was there before it; a no-op one makes a requested stop end as a normal exit (status 0).
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        OWN_ENDPOINTS.remove(port)
