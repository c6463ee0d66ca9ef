"""The dashboard: a person sees a Webhand's sessions, watches one live, reads its history, and
takes control when the agent needs a hand (a login, a CAPTCHA).

It is served at ``/dashboard`` beside MCP on the HTTP server (``streamable_http.build_app``), and
by the CLI daemon on a loopback port for ``webhand dashboard``. Both use the same HTTP security
(``surfaces/http_security``). The daemon's always has a token: its socket is private to the user,
and a loopback port without one would hand every other local user the same sessions. The token is the user's own
(``user_token``), and the link carries it in the URL fragment, which the browser never sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from typing import TYPE_CHECKING

from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import ASGIApp

from webhand.security.origins import OWN_ENDPOINTS
from webhand.surfaces.dashboard.app import DASHBOARD_PATH, Dashboard
from webhand.surfaces.http_security import (
    BearerTokenGate,
    HttpOptions,
    SessionBrowserGate,
    bind,
    check_options,
    transport_security,
)

if TYPE_CHECKING:
    import uvicorn

    from webhand.host import Webhand

#: Paths a browser loads without the token: the static page, which holds no data and asks for it.
OPEN_PATHS = frozenset({DASHBOARD_PATH, DASHBOARD_PATH + "/"})


def dashboard_mount(webhand: Webhand, options: HttpOptions) -> Mount:
    """``/dashboard`` with its routes, for an app that already checks the token (the MCP endpoint's).
    From now on a session's link (``browser_request_human``'s) is written as this dashboard reads it."""
    webhand.sessions.dashboard_link = link
    return Mount(DASHBOARD_PATH, app=Dashboard(webhand, TransportSecurityMiddleware(transport_security(options))).app())


def dashboard_app(webhand: Webhand, options: HttpOptions) -> ASGIApp:
    """A whole app serving only the dashboard, with the HTTP checks (token, Host, Origin, body cap)."""
    check_options(options)
    app: ASGIApp = RequestBodyLimitMiddleware(Starlette(routes=[dashboard_mount(webhand, options)]),
                                              options.max_body_bytes)
    if options.token:
        app = BearerTokenGate(app, options.token, open_paths=OPEN_PATHS)
    return SessionBrowserGate(app, options, open_paths=OPEN_PATHS)


def link(base_url: str, public_id: str | None = None, token: str | None = None) -> str:
    """The dashboard's address, opened on one session when ``public_id`` is given. A ``token`` goes
    in the fragment: the page reads it (then drops it from the address bar), no server or log sees it."""
    fragment = "&".join(f"{name}={value}" for name, value in (("session", public_id), ("token", token)) if value)
    return f"{base_url}{DASHBOARD_PATH}/" + (f"#{fragment}" if fragment else "")


TOKEN_FILE = "dashboard-token"


def user_token(folder: os.PathLike[str] | str) -> str:
    """The user's dashboard token, in ``folder``/dashboard-token (the private runtime dir): made on
    first use (0600, never through a symlink), then the same one, so a saved link keeps working."""
    path = os.path.join(folder, TOKEN_FILE)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, encoding="ascii") as file:
            info = os.fstat(file.fileno())
            token = file.read().strip()
        if info.st_uid != os.getuid() or info.st_mode & 0o077 or len(token) < 32:
            from webhand.errors import ConfigError

            raise ConfigError(f"The dashboard token file {path} is not a private token of yours (owner, mode "
                              "or content is wrong).", f"Delete {path}; the next `webhand dashboard` makes a new one.")
        return token
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(token + "\n")
    return token


class DashboardServer:
    """The dashboard on its own port, inside a running event loop (the CLI daemon, tests, the bench)."""

    def __init__(self, webhand: Webhand, options: HttpOptions) -> None:
        self.webhand = webhand
        self.options = options
        self.url = ""
        self._task: asyncio.Task[None] | None = None
        self._server: uvicorn.Server | None = None
        self._port = 0

    async def start(self) -> str:
        import uvicorn

        sock = bind(self.options.host, self.options.port)
        port = sock.getsockname()[1]
        shown = f"[{self.options.host}]" if ":" in self.options.host else self.options.host
        self.url = f"http://{shown}:{port}"
        self._port = port
        OWN_ENDPOINTS.add(self.options.host, port)  # no page webhand drives may reach it
        config = uvicorn.Config(dashboard_app(self.webhand, self.options), log_level="warning", lifespan="off",
                                ws="none", proxy_headers=False, server_header=False, timeout_graceful_shutdown=2)
        server = uvicorn.Server(config)
        server.install_signal_handlers = lambda: None  # type: ignore[method-assign]  # the host owns the signals
        self._server = server
        # The socket already listens: connections made before uvicorn accepts wait in its backlog.
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name="webhand-dashboard")
        self.webhand.dashboard_url = self.url
        return self.url

    async def stop(self) -> None:
        if self._task is None:
            return
        if self.webhand.dashboard_url == self.url:
            self.webhand.dashboard_url = None
        if self._server is not None:
            self._server.should_exit = True
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self._task, 5)
        self._task = None
        OWN_ENDPOINTS.remove(self._port)
