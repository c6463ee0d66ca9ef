"""The dashboard: a person sees a Webhand's sessions, watches one live, reads its history, and
takes control when the agent needs a hand (a login, a CAPTCHA).

It is served at ``/dashboard`` beside MCP on the HTTP server (``mcp_http.build_app``), and by the
CLI daemon on a loopback port for ``webhand dashboard``. Both use the HTTP server's security.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import ASGIApp

from webhand.surfaces.dashboard.app import DASHBOARD_PATH, Dashboard

if TYPE_CHECKING:
    from webhand.host import Webhand
    from webhand.surfaces.mcp_http import HttpOptions

#: Paths a browser loads without the token: the static page, which holds no data and asks for it.
OPEN_PATHS = frozenset({DASHBOARD_PATH, DASHBOARD_PATH + "/"})


def dashboard_mount(webhand: Webhand, options: HttpOptions) -> Mount:
    """``/dashboard`` with its routes, for an app that already checks the token (mcp_http)."""
    from webhand.surfaces.mcp_http import _security

    return Mount(DASHBOARD_PATH, app=Dashboard(webhand, TransportSecurityMiddleware(_security(options))).app())


def dashboard_app(webhand: Webhand, options: HttpOptions) -> ASGIApp:
    """A whole app serving only the dashboard, with the HTTP server's checks (token, Host, Origin, body cap)."""
    from webhand.surfaces.mcp_http import BearerTokenGate, check_options

    check_options(options)
    app: ASGIApp = RequestBodyLimitMiddleware(Starlette(routes=[dashboard_mount(webhand, options)]),
                                              options.max_body_bytes)
    if options.token:
        app = BearerTokenGate(app, options.token, open_paths=OPEN_PATHS)
    return app


def link(base_url: str, public_id: str | None = None) -> str:
    """The dashboard's address, opened on one session when ``public_id`` is given."""
    return f"{base_url}{DASHBOARD_PATH}/" + (f"#session={public_id}" if public_id else "")


class DashboardServer:
    """The dashboard on its own port, inside a running event loop (the CLI daemon, tests, the bench)."""

    def __init__(self, webhand: Webhand, options: HttpOptions) -> None:
        self.webhand = webhand
        self.options = options
        self.url = ""
        self._task: asyncio.Task[None] | None = None
        self._server: object = None

    async def start(self) -> str:
        import uvicorn

        from webhand.surfaces.mcp_http import bind

        sock = bind(self.options.host, self.options.port)
        port = sock.getsockname()[1]
        shown = f"[{self.options.host}]" if ":" in self.options.host else self.options.host
        self.url = f"http://{shown}:{port}"
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
        self._server.should_exit = True  # type: ignore[attr-defined]
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self._task, 5)
        self._task = None
