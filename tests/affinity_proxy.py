"""A tiny loopback load balancer with session affinity on ``Mcp-Session-Id``, as
``deploy/haproxy.cfg`` configures HAProxy: a request without a session id goes to the next server
in turn; the server that answers it with an ``Mcp-Session-Id`` gets every later request carrying
that id (the mapping is learned from the response, since the server, not the balancer, makes the
id). A request with an id it never saw goes to the next server in turn, like HAProxy's fallback."""

from __future__ import annotations

import asyncio
import itertools
import socket

import httpx2
import uvicorn
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse

_HOP_BY_HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}


class AffinityProxy:
    def __init__(self, backends: list[str]) -> None:
        self.backends = backends
        self.turn = itertools.cycle(backends)
        self.sticky: dict[str, str] = {}  # session id -> backend that opened it
        self.routed: list[tuple[str | None, str]] = []
        self.client = httpx2.AsyncClient(timeout=None)
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/mcp"
        self._server = uvicorn.Server(uvicorn.Config(self._app, interface="asgi3", log_level="warning", lifespan="off"))
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> AffinityProxy:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started:
            await asyncio.sleep(0.01)
        return self

    async def close(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await self._task
        await self.client.aclose()

    async def _app(self, scope, receive, send) -> None:
        request = Request(scope, receive)
        session_id = request.headers.get("mcp-session-id")
        backend = self.sticky.get(session_id) if session_id else None
        backend = backend or next(self.turn)
        self.routed.append((session_id, backend))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        upstream = await self.client.send(self.client.build_request(request.method, backend, headers=headers,
                                                                    content=await request.body()), stream=True)
        opened = upstream.headers.get("mcp-session-id")
        if opened and upstream.status_code < 400:
            self.sticky[opened] = backend  # learned from the response, as HAProxy's stick store-response
        reply_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_BY_HOP}
        response = StreamingResponse(upstream.aiter_raw(), status_code=upstream.status_code, headers=reply_headers,
                                     background=BackgroundTask(upstream.aclose))
        await response(scope, receive, send)
