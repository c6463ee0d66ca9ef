"""The security of webhand's HTTP servers, shared by the MCP endpoint (``mcp/streamable_http``)
and the dashboard: where they listen, who may connect, and what they refuse before any handler runs.

Loopback by default; any other address (or ``require_token``) needs a bearer token, checked on
every request; a request that a page in a browser webhand drives could have made is refused before
the token is looked at; Host and Origin headers must be on an allow list (DNS-rebinding
protection, done by the SDK's middleware from ``transport_security``); request bodies are capped.
"""

from __future__ import annotations

import hmac
import html
import ipaddress
import json
import logging
import socket
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from webhand.errors import ConfigError
from webhand.security.host_names import InvalidHost, normalize_host, same_place
from webhand.security.host_names import is_loopback as host_is_loopback

log = logging.getLogger("webhand")

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


async def refuse(scope: Scope, send: Send, status: int, message: str,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """Answer a refused request: JSON (``{"error": message}``) for an API client, a short page for
    a browser that asked for one (``Accept: text/html``), which says where the dashboard is."""
    accept = dict(scope["headers"]).get(b"accept", b"")
    if b"text/html" in accept:
        body = _REFUSAL_PAGE.format(status=status, message=html.escape(message, quote=False)).encode()
        kind = b"text/html; charset=utf-8"
    else:
        body, kind = json.dumps({"error": message}).encode(), b"application/json"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


_REFUSAL_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>webhand: not here</title>
<style>body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 40em; margin: 2em auto; padding: 0 1em; color: #1c1c28; }}
code {{ background: #eef; padding: 0 .2em; }} .why {{ color: #556; font-size: 14px; }}</style></head><body>
<h1>This address is not a page to open</h1>
<p>It is webhand's server: tools and data that only webhand's clients and its dashboard page fetch,
with the dashboard's token.</p>
<p>To watch the agent's browser, open the dashboard at <a href="/dashboard/">/dashboard/</a>, best through the
link webhand printed when it started it (it carries the token after <code>#token=</code>): <code>webhand
dashboard</code> for the CLI's sessions, <code>webhand mcp --dashboard</code> or <code>webhand mcp --port N</code>
for an MCP client's.</p>
<p class="why">Status {status}: {message}</p>
</body></html>
"""


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
                await refuse(scope, send, 401, "missing or wrong bearer token: send Authorization: Bearer "
                                               "<WEBHAND_TOKEN>", [(b"www-authenticate", b"Bearer")])
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
                log.warning("Refused %s %s: %s.", scope["method"], scope["path"], why)
                await refuse(scope, send, 403, f"Refused: {why}. A page in a browser webhand drives may never reach "
                                               "webhand's dashboard or MCP endpoint; open the dashboard in your own "
                                               "browser, from the link webhand printed.")
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


def transport_security(options: HttpOptions) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding check: the Host and Origin headers a request may carry."""
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
