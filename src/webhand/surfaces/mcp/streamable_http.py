"""MCP over streamable HTTP: one conversation (and browser) per MCP session, behind safe defaults.

Safety: loopback by default; any other address (or ``require_token``) needs a bearer token,
checked on every request; Host and Origin headers must be on an allow list (DNS-rebinding
protection, done by the SDK); request bodies are capped; malformed JSON-RPC gets a JSON-RPC error
(``jsonrpc_guard``). Sessions whose client went away end after the idle timeout, or sooner when
a new client needs their place (``http_sessions``); ending a session (DELETE, idle, shutdown)
ends its conversation, which closes its browser.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from webhand.config import Settings
from webhand.errors import ConfigError
from webhand.host import ToolContext, Webhand
from webhand.security.host_names import InvalidHost, normalize_host, same_place
from webhand.security.host_names import is_loopback as host_is_loopback
from webhand.security.origins import OWN_ENDPOINTS
from webhand.surfaces.mcp.http_sessions import SessionReclaimer
from webhand.surfaces.mcp.jsonrpc_guard import JsonRpcGuard
from webhand.surfaces.mcp.server import build_server

log = logging.getLogger("webhand")

MCP_PATH = "/mcp"
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


@dataclass
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = 8931
    token: str | None = None
    #: Refuse to start without a token even on loopback, where any local user could otherwise connect.
    require_token: bool = False
    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    style: str = "multi"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def settings_for_address(settings: Settings, host: str) -> Settings:
    """The settings a server on ``host`` runs with: beyond loopback, JavaScript evaluation is off
    unless the config, the environment or a flag set ``evaluate_enabled`` (on for local use).

    Every client of such a server holds a token, but ``browser_eval`` runs any script in a page
    that may hold the user's logins: a remote caller gets it only when someone chose that."""
    if is_loopback(host) or "evaluate_enabled" in settings.model_fields_set:
        return settings
    return settings.model_copy(update={"evaluate_enabled": False})


def check_options(options: HttpOptions) -> None:
    """Refuse to start unsafe: a non-loopback address, or ``require_token``, without a token."""
    if options.require_token and not options.token:
        raise ConfigError("--require-token is set but no token was given.",
                          "Pass --token-file PATH (a file holding the token) or set WEBHAND_TOKEN.")
    if not is_loopback(options.host) and not options.token:
        raise ConfigError(f"Refusing to serve MCP on {options.host} without a token: anyone who can reach it "
                          "could drive your browser.",
                          "Pass --token-file PATH or set WEBHAND_TOKEN, or serve on 127.0.0.1.")
    if options.max_body_bytes <= 0:
        raise ConfigError(f"max_body_bytes={options.max_body_bytes}: must be a positive number of bytes.", "Fix the flag.")


class BearerTokenGate:
    """Rejects any request without ``Authorization: Bearer <token>`` (compared in constant time)."""

    def __init__(self, app: ASGIApp, token: str, open_paths: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.open_paths = open_paths  # static pages that hold no data (the dashboard's page asks for the token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not (scope["method"] == "GET" and scope["path"] in self.open_paths):
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error": "missing or wrong bearer token: send Authorization: Bearer <WEBHAND_TOKEN>"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


#: What marks a request as coming from a browser webhand drives: every headless Chromium names
#: itself in its user agent. A person's browser does not (stealth hides it from documents, not
#: workers; a headful or stealth browser is kept out by the origin policy, ``origins.OWN_ENDPOINTS``).
SESSION_BROWSER_MARKER = b"HeadlessChrome"


class SessionBrowserGate:
    """Refuses requests that a page could have made, before any token is looked at (a page never
    holds one, but a person's logged-in dashboard tab could be framed or redirected to):

    - any request whose user agent carries ``SESSION_BROWSER_MARKER`` (a browser webhand drives);
    - an ``Origin`` other than this server's own (its port, on the address it listens on) or one the
      operator allowed (``--allow-origin``);
    - beyond the dashboard's static page, a browser request that is not a same-origin fetch: a
      navigation, a frame, an image, a cross-site fetch (``Sec-Fetch-*``, which pages cannot forge).
    """

    def __init__(self, app: ASGIApp, options: HttpOptions, open_paths: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.options = options
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            why = self.refusal(scope)
            if why:
                body = json.dumps({"error": f"Refused: {why}. A page in a browser webhand drives may never reach "
                                            "webhand's dashboard or MCP endpoint; open the dashboard in your own "
                                            "browser, from the link webhand printed."}).encode()
                log.warning("Refused %s %s: %s.", scope["method"], scope["path"], why)
                await send({"type": "http.response.start", "status": 403,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> str | None:
        headers = dict(scope["headers"])
        if SESSION_BROWSER_MARKER in headers.get(b"user-agent", b""):
            return "the request comes from a headless browser (its user agent says HeadlessChrome)"
        origin = headers.get(b"origin", b"").decode("latin-1")
        allowed = origin and (self._own(origin, scope) or _origin_allowed(origin, self.options.allowed_origins))
        if origin and not allowed:
            return f"its Origin {origin[:100]} is not this server's own"
        static = scope["method"] == "GET" and (scope["path"] in self.open_paths or scope["path"] == "/favicon.ico")
        site, mode = headers.get(b"sec-fetch-site"), headers.get(b"sec-fetch-mode")
        if not static and site is not None and site != b"same-origin" and not allowed:
            return f"a browser request from another site (Sec-Fetch-Site: {site.decode('latin-1')[:20]})"
        if not static and mode in (b"navigate", b"nested-navigate", b"no-cors"):
            return ("browsers may only fetch this path, not load it as a page, frame or resource "
                    f"(Sec-Fetch-Mode: {mode.decode('latin-1')[:20]})")
        return None

    def _own(self, origin: str, scope: Scope) -> bool:
        """Whether ``origin`` is this server's: http, its port, and the address it listens on (any
        loopback spelling for a loopback or wildcard address)."""
        server = scope.get("server") or (None, None)
        try:
            parts = urlsplit(origin)
            port = parts.port or 80
            host = normalize_host(parts.hostname or "")
        except (ValueError, InvalidHost):
            return False
        bound = self.options.host.strip("[]")
        bound_loopback = is_loopback(bound) or bound in ("0.0.0.0", "::", "")
        return (parts.scheme == "http" and port == server[1]
                and (host_is_loopback(host) if bound_loopback else host in same_place(normalize_host(
                    f"[{bound}]" if ":" in bound else bound))))


def _origin_allowed(origin: str, patterns: list[str]) -> bool:
    """The SDK's rule for ``allowed_origins``: exact, or ``scheme://host:*`` for any port."""
    for pattern in patterns:
        if origin == pattern or pattern.endswith(":*") and origin.rsplit(":", 1)[0] == pattern[:-2]:
            return True
    return False


def _security(options: HttpOptions) -> TransportSecuritySettings:
    hosts = list(_LOOPBACK_HOSTS) + list(options.allowed_hosts)
    origins = list(_LOOPBACK_ORIGINS) + list(options.allowed_origins)
    if options.host not in ("0.0.0.0", "::", "") and not is_loopback(options.host):
        shown = f"[{options.host}]" if ":" in options.host else options.host
        hosts.append(f"{shown}:*")
        origins += [f"http://{shown}:*", f"https://{shown}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def read_token_file(path: str) -> str:
    """The token in ``path`` (surrounding whitespace removed); refused if unreadable or empty."""
    file = Path(path).expanduser()
    try:
        token = file.read_text(encoding="utf-8").strip()
        shared = file.stat().st_mode & 0o077
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or "not UTF-8 text"
        raise ConfigError(f"Cannot read the token file {path}: {reason}.", "Fix the path or the file's permissions.") from None
    if not token:
        raise ConfigError(f"The token file {path} is empty.", "Write the token into it (e.g. from `openssl rand -hex 32`).")
    if shared:
        log.warning("The token file %s can be read by other users: run `chmod 600 %s`.", path, path)
    return token


def conversation_of(session_id: str) -> str:
    """The conversation of one MCP session (the id comes from the SDK, never from the model)."""
    return f"mcp-{session_id}"


def session_context_for(webhand: Webhand) -> Callable[[Any], ToolContext]:
    """Map an MCP request to the conversation of its MCP session, created on first use."""

    def context_for(ctx: Any) -> ToolContext:
        # The SDK keeps per-connection state and teardown on the Connection; ServerRequestContext
        # does not expose it publicly in mcp 2.3 (pinned in constraints.txt), so reach it here only.
        connection = getattr(ctx.session, "_connection", None)
        if connection is None or not connection.session_id:
            raise MCPError(code=types.INVALID_REQUEST, message=(
                "This request has no MCP session. webhand gives each MCP session its own browser: connect with "
                "the initialize handshake (protocol 2025-11-25) so the server assigns one."))
        context = connection.state.get("webhand_context")
        if context is None:
            context = webhand.context(conversation_of(connection.session_id))
            connection.state["webhand_context"] = context
            # Unwound when the session ends for any reason: client DELETE, idle timeout, shutdown.
            connection.exit_stack.push_async_callback(webhand.end_conversation, context.conversation_id)
        return context

    return context_for


def build_app(webhand: Webhand, options: HttpOptions, on_ready: Callable[[], None] | None = None) -> ASGIApp:
    check_options(options)
    settings = webhand.settings
    security = _security(options)
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

    from webhand.surfaces.dashboard import OPEN_PATHS, dashboard_mount

    app: ASGIApp = Starlette(routes=[Route(MCP_PATH, endpoint=endpoint), dashboard_mount(webhand, options)],
                             lifespan=lifespan)
    if options.token:
        app = BearerTokenGate(app, options.token, open_paths=OPEN_PATHS)
    return SessionBrowserGate(app, options, open_paths=OPEN_PATHS)


def bind(host: str, port: int) -> socket.socket:
    """Bind before serving so that ``--port 0`` works and the real port can be announced."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as error:
        sock.close()
        raise ConfigError(f"Cannot listen on {host}:{port}: {error.strerror}.",
                          "Pick another --port (0 picks a free one) or stop what uses it.") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


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
