"""Room for new clients on a full HTTP MCP server: close sessions whose client went away.

A client that is killed, or whose machine sleeps, never ends its MCP session, and its browser
stays open until the idle timeout (30 min by default): with ``max_sessions`` such sessions the
server refuses everyone else all that time. The SDK's session manager cannot tell such a
session from a live one, so this ASGI wrapper in front of it watches each session's requests:

- A session is *abandoned* once it has had no request in flight for ``abandoned_after`` seconds,
  or at once when its stream was cut (the client's connection closed under an open GET stream,
  seen by reading that request's ``http.disconnect``) and nothing else is in flight: a killed
  client's sockets are closed by its kernel. An open GET stream counts as a request in flight,
  so a live SDK client, which keeps one open, is never abandoned; a client that comes back
  (any request) is no longer taken for gone. A sleeping machine's stream is seen closed once TCP
  gives up on the keep-alive pings.
- When the SDK refuses a new session because the server is full (503), the abandoned session
  whose client went first is ended the way a client ends it (an HTTP DELETE), its conversation
  and browser are closed, this is logged, and the new client's request is served again. With none
  to end, the new client waits, up to ``queue_timeout``, for a session to end or to be abandoned.

A client that holds no stream between its calls looks abandoned after ``abandoned_after`` too;
it only loses its session when the server is full and a new client needs the room.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webhand.surfaces.mcp.jsonrpc_guard import jsonrpc_error_response, read_body

log = logging.getLogger("webhand")

_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower().encode()
_SERVER_FULL = 503  # what the SDK answers a new session when max_sessions are open
_INTERNAL_ERROR = -32603


#: How often a waiting newcomer tries again even without news: the SDK ends idle sessions itself.
_RECHECK_SECONDS = 5.0


@dataclass
class _Activity:
    in_flight: int = 0
    last_seen: float = field(default_factory=time.monotonic)
    stream_cut: bool = False  # its last GET stream ended with the client's connection: presumed gone

    def abandoned(self, now: float, after: float) -> bool:
        return self.in_flight == 0 and (self.stream_cut or now - self.last_seen >= after)


class SessionReclaimer:
    """ASGI wrapper of the SDK session manager's app (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, path: str, max_sessions: int, abandoned_after: float,
                 idle_timeout: float, end_conversation: Callable[[str], Awaitable[object]],
                 queue_timeout: float = 0.0) -> None:
        self.app = app
        self.path = path
        self.max_sessions = max_sessions
        self.abandoned_after = abandoned_after
        self.queue_timeout = queue_timeout
        self.idle_timeout = idle_timeout
        self.end_conversation = end_conversation  # called with the MCP session id
        self._sessions: dict[str, _Activity] = {}  # only sessions this server opened
        self._reclaiming = asyncio.Lock()
        self._change = asyncio.Event()  # set (and replaced) when a place may have come free

    def _changed(self) -> None:
        self._change.set()
        self._change = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session_id = dict(scope["headers"]).get(_SESSION_HEADER, b"").decode("latin-1")
        if session_id:
            await self._serve_in_session(session_id, scope, receive, send)
        elif scope["method"] == "POST":
            await self._serve_opening(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _serve_in_session(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        activity = self._sessions.get(session_id)
        if activity is None:  # unknown to this server: the SDK answers it, and a 404 says why
            await self.app(scope, receive, _explaining_unknown_session(session_id, scope, receive, send))
            return

        # The stream (GET): learn at once when its connection closes.
        stream = _StreamWatch(receive) if scope["method"] == "GET" else None

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = message["status"]
                if status == 404 or (scope["method"] == "DELETE" and status < 300):
                    self._sessions.pop(session_id, None)  # ended (by its client, or expired)
                    self._changed()
            if stream is not None:
                stream.sent(message)
            await send(message)

        activity.in_flight += 1
        activity.last_seen = time.monotonic()
        activity.stream_cut = False  # it is here
        try:
            await self.app(scope, stream.receive if stream is not None else receive, watch)
        finally:
            if stream is not None:
                stream.stop()
                activity.stream_cut = stream.cut
            activity.in_flight -= 1
            activity.last_seen = time.monotonic()
            if activity.in_flight == 0:
                self._changed()

    async def _serve_opening(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a request that opens a session. When the server is full, end an abandoned session and
        retry; with none, wait (up to ``queue_timeout``) for a place to come free, then refuse. A
        newcomer whose own client leaves while it waits still gets its session, which, never
        streamed, is abandoned after ``abandoned_after``."""
        body = await read_body(receive)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.queue_timeout
        waiting = False
        while True:
            change = self._change  # a place freed from here on wakes this newcomer
            if await self._try_opening(scope, body, receive, send):
                return
            async with self._reclaiming:
                closed = await self._close_longest_idle_abandoned()
            if closed:
                continue
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            if not waiting:
                waiting = True
                log.warning("A new MCP client waits for a place: all %d sessions are in use (it is refused after "
                            "%g s, queue_timeout).", self.max_sessions, self.queue_timeout)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(change.wait(), min(remaining, _RECHECK_SECONDS))
        log.warning("Refused a new MCP session after %g s (queue_timeout): all %d sessions are in use and none has "
                    "been without a stream or request for %g s (abandoned_after).",
                    self.queue_timeout, self.max_sessions, self.abandoned_after)
        refusal = jsonrpc_error_response(
            None, _INTERNAL_ERROR,
            f"Too many open sessions: all {self.max_sessions} are in use, and none has been idle for "
            f"{self.abandoned_after:g} s or lost its client in the {self.queue_timeout:g} s this request waited "
            "(queue_timeout), so none could be closed to make room. Retry later, or ask the operator to raise "
            "max_sessions.",
            status_code=_SERVER_FULL, headers={"Retry-After": str(max(1, round(self.abandoned_after)))})
        await refusal(scope, receive, send)

    async def _try_opening(self, scope: Scope, body: list[Message], receive: Receive, send: Send) -> bool:
        """Run the opening request; False (nothing sent) if the SDK refused it for lack of room."""
        pending = list(body)
        refused = False
        opened: str | None = None

        async def replay() -> Message:
            return pending.pop(0) if pending else await receive()

        async def watch(message: Message) -> None:
            nonlocal refused, opened
            if message["type"] == "http.response.start":
                refused = message["status"] == _SERVER_FULL
                session_id = dict(message.get("headers", [])).get(_SESSION_HEADER, b"").decode("latin-1")
                if session_id and message["status"] < 400:
                    opened = session_id
                    self._sessions[session_id] = _Activity(in_flight=1)
            if not refused:
                await send(message)

        self._forget_expired()
        try:
            await self.app(scope, replay, watch)
        finally:
            if opened is not None and opened in self._sessions:
                activity = self._sessions[opened]
                activity.in_flight -= 1
                activity.last_seen = time.monotonic()
        return not refused

    async def _close_longest_idle_abandoned(self) -> bool:
        now = time.monotonic()
        abandoned = sorted((activity.last_seen, session_id) for session_id, activity in self._sessions.items()
                           if activity.abandoned(now, self.abandoned_after))
        for last_seen, session_id in abandoned:
            self._sessions.pop(session_id, None)
            if not await self._delete(session_id):
                continue  # it had already ended (idle timeout): try the next one
            log.warning("Closed MCP session %s… and its browser to admit a new client: the server was full "
                        "(%d sessions) and this session had had no open stream and no request for %.0f s "
                        "(abandoned_after=%g s, or at once when its stream's connection closed); its client is "
                        "presumed gone.", session_id[:8], self.max_sessions, now - last_seen, self.abandoned_after)
            # The session's own teardown closes the conversation too, but later: close it now, so
            # that its browser is gone before the new client's opens.
            await self.end_conversation(session_id)
            return True
        return False

    async def _delete(self, session_id: str) -> bool:
        """End a session as its client would (DELETE): the SDK forgets it and frees its place."""
        status = 0

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        scope: Scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "DELETE",
            "scheme": "http", "path": self.path, "raw_path": self.path.encode(), "query_string": b"",
            "root_path": "", "client": None, "server": None,
            "headers": [(b"host", b"127.0.0.1:0"), (_SESSION_HEADER, session_id.encode("latin-1"))],
        }
        await self.app(scope, receive, send)
        return 200 <= status < 300

    def _forget_expired(self) -> None:
        """Drop sessions the SDK has surely ended for idleness, so this table stays small."""
        now = time.monotonic()
        for session_id, activity in list(self._sessions.items()):
            if activity.in_flight == 0 and now - activity.last_seen > self.idle_timeout + 60:
                del self._sessions[session_id]


class _StreamWatch:
    """A GET stream's ``receive``, read ahead by a task of its own, so that the connection's close
    (``http.disconnect`` before the response ended) is seen when it happens, whether or not the
    app is reading then. Messages reach the app unchanged, in order."""

    def __init__(self, receive: Receive) -> None:
        self.cut = False  # the client's connection closed while the stream was open
        self.ended = False  # the response was complete (then a disconnect is the server's doing)
        self._messages: asyncio.Queue[Message] = asyncio.Queue()
        self._pump = asyncio.ensure_future(self._read(receive))

    async def _read(self, receive: Receive) -> None:
        while True:
            message = await receive()
            self._messages.put_nowait(message)
            if message["type"] == "http.disconnect":
                self.cut = not self.ended
                return

    async def receive(self) -> Message:
        if self._pump.done() and self._messages.empty():
            return {"type": "http.disconnect"}
        return await self._messages.get()

    def sent(self, message: Message) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.ended = True

    def stop(self) -> None:
        self._pump.cancel()


#: What a client hears for a session id this process does not hold. Behind a load balancer the
#: usual cause is a request routed to another webhand server than the one that opened the session.
UNKNOWN_SESSION = ("MCP session {id}… is not open on this webhand server: it ended, expired, or was opened on "
                   "another server. Its browser state is not here. Start a new session (initialize). Behind a "
                   "load balancer, route every request carrying an Mcp-Session-Id to the server whose response "
                   "set it (session affinity learned from the response header, see docs/design.md).")
_SESSION_NOT_FOUND = -32001


def _explaining_unknown_session(session_id: str, scope: Scope, receive: Receive, send: Send) -> Callable[
        [Message], Awaitable[None]]:
    """``send`` that replaces the SDK's 404 for an unknown session with an error that says why."""
    replaced = False

    async def watch(message: Message) -> None:
        nonlocal replaced
        if message["type"] == "http.response.start" and message["status"] == 404:
            replaced = True
            answer = jsonrpc_error_response(None, _SESSION_NOT_FOUND, UNKNOWN_SESSION.format(id=session_id[:8]),
                                            status_code=404)
            await answer(scope, receive, send)
        elif not replaced:
            await send(message)

    return watch
