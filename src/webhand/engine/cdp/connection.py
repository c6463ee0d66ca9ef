"""One WebSocket to a browser through ``cdp-use``'s typed client, shared by everything on it.

``cdp-use`` sends typed commands (``client.send.Page.navigate(params=..., session_id=...)``) and
calls one callback per event name. Many tabs and frames share one connection, each on its own
flattened session, so ``CdpConnection`` registers one callback per event name and hands each
event to the listeners of its session. Its errors (a ``RuntimeError`` carrying the protocol's
error, a ``ConnectionError`` when the socket closed) never leave this package: ``guarded``
turns them, and timeouts, into webhand errors.

The client is cdp-use's, without its generated libraries of typed commands and event
registrations: those are some 300 modules, about 0.1 s of CPU at the first connection, which a
cold ``webhand mcp`` pays on its way to the first page. Their types help a type checker, not the
running code, so ``send`` is a small proxy with the same call shape and events go to one handler
per name (``_LeanClient``).
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import logging
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import websockets
from cdp_use.client import CDPClient
from websockets.exceptions import WebSocketException

from webhand.errors import ActionTimeout, ElementNotActionable, PageCrashed, SessionClosed, WebhandError

if TYPE_CHECKING:
    from cdp_use.cdp.library import CDPLibrary

Listener = Callable[[dict[str, Any]], None]

# A command given up on at its timeout may still be answered later; cdp-use logs each such late
# answer as a warning. That is expected here, not a fault worth a line in the host's log.
logging.getLogger("cdp_use.client").setLevel(logging.ERROR)
ANY_SESSION = "*"
#: How long closing the connection waits for the browser to take part (it answers in milliseconds
#: when it answers at all).
_CLOSE_CAP_SECONDS = 2.0


class CdpError(Exception):
    """The browser answered a command with an error."""


class CdpClosed(Exception):
    """The connection, the page or its session is gone."""


class CommandProxy:
    """``send.Domain.method(params=..., session_id=...)``, as cdp-use's typed library is called."""

    def __init__(self, client: CDPClient) -> None:
        self._client = client
        self._domains: dict[str, _Domain] = {}

    def __getattr__(self, domain: str) -> _Domain:
        if domain.startswith("_"):  # copy, pickle and friends probe dunder names
            raise AttributeError(domain)
        found = self._domains.get(domain)
        if found is None:
            found = self._domains[domain] = _Domain(self._client, domain)
        return found


class _Domain:
    def __init__(self, client: CDPClient, domain: str) -> None:
        self._client, self._domain = client, domain

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        method, client = f"{self._domain}.{name}", self._client

        async def command(params: Any = None, session_id: str | None = None) -> dict[str, Any]:
            return await client.send_raw(method=method, params=params, session_id=session_id)
        return command


class _Events:
    """Stands in for cdp-use's event registry: one handler per event name, called at once."""

    def __init__(self) -> None:
        self.handlers: dict[str, Callable[[Any, str | None], None]] = {}

    async def handle_event(self, method: str, params: Any, session_id: str | None = None) -> bool:
        handler = self.handlers.get(method)
        if handler is None:
            return False
        handler(params, session_id)
        return True


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _LeanClient(CDPClient):
    """cdp-use's client (its socket, ids and reader loop) without the typed libraries its
    ``__init__`` imports. Sets what the client's other methods use (cdp-use 1.4.5, pinned; the
    conformance suite runs every driver test through it)."""

    def __init__(self, url: str, additional_headers: dict[str, str] | None = None) -> None:  # super().__init__ is not called: see the docstring
        self.url = url
        self.additional_headers = additional_headers
        self.max_ws_frame_size = 100 * 1024 * 1024  # cdp-use's default: a full-page screenshot fits
        self.ws = None
        self.msg_id = 0
        self.pending_requests: dict[int, asyncio.Future[Any]] = {}
        self._message_handler_task = None
        events = _Events()
        # Where CdpConnection.on registers its dispatchers; the reader loop reads the same table.
        self.event_handlers = events.handlers
        self._event_registry = events  # type: ignore[assignment]
        self.send = CommandProxy(self)  # type: ignore[assignment]

    async def start(self) -> None:
        """cdp-use's start, without per-message compression on a loopback socket. websockets
        offers permessage-deflate by default and Chromium accepts it, so every command and answer
        was deflated on one side and inflated on the other, for bytes that never leave the
        machine (a 100 KB answer: the browser's CPU 1.5 ms with it, 0.8 ms without). A remote
        endpoint keeps it: it saves bandwidth there."""
        if self.ws is not None:
            raise RuntimeError("Client is already started")
        options: dict[str, Any] = {"max_size": self.max_ws_frame_size,
                                   "compression": None if _loopback(self.url) else "deflate"}
        if self.additional_headers:
            options["additional_headers"] = self.additional_headers
        self.ws = await websockets.connect(self.url, **options)
        self._message_handler_task = asyncio.create_task(self._handle_messages())

    async def send_raw(self, method: str, params: Any = None, session_id: str | None = None) -> dict[str, Any]:
        """cdp-use's ``send_raw``, except that a request given up on leaves the table of pending
        requests at once. cdp-use keeps the future of a cancelled request until its answer comes,
        and a browser that stopped answering never sends one: each timed-out request stayed
        there for the life of the connection."""
        if not self.ws:
            raise RuntimeError("Client is not started. Call start() first or use as async context manager.")
        self.msg_id += 1
        ident = self.msg_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending_requests[ident] = future
        try:
            await self.ws.send(json.dumps(message))
            return await future
        finally:
            if self.pending_requests.get(ident) is future:
                del self.pending_requests[ident]  # cancelled, timed out or unsent: no answer is awaited now


class CdpConnection:
    def __init__(self, client: _LeanClient) -> None:
        self.client = client
        # The commands: self.send.Page.navigate(params=..., session_id=...); typed for a type checker.
        self.send: CDPLibrary = client.send
        self._listeners: dict[str, dict[str, list[Listener]]] = defaultdict(lambda: defaultdict(list))
        self._registered: set[str] = set()
        self.closed = False
        self.on_close: list[Callable[[], None]] = []
        self._told_closed = False

    @classmethod
    async def open(cls, url: str, *, headers: dict[str, str] | None = None, timeout: float) -> CdpConnection:
        client = _LeanClient(url, additional_headers=headers)
        await asyncio.wait_for(client.start(), timeout)
        return cls.over(client)

    @classmethod
    def over(cls, client: Any) -> CdpConnection:
        """A connection on a started client: cdp-use's, or one with the same shape (the extension
        bridge's ``relay.RelayClient``)."""
        connection = cls(client)
        # cdp-use gives no "closed" callback; its reader task ends when the socket does.
        task = client._message_handler_task
        if task is not None:
            task.add_done_callback(lambda _: connection._closed())
        return connection

    def _closed(self) -> None:
        self.closed = True
        if self._told_closed:
            return
        self._told_closed = True
        for callback in list(self.on_close):
            callback()

    async def close(self) -> None:
        """Leave the browser: a polite close, capped, then the socket is cut. A browser that
        stopped answering never answers the close handshake, and websockets would hold the socket
        open (and a caller waiting) for its own close timeout. The connection counts as closed
        from the start: nothing more is sent on it."""
        self.closed = True
        socket = self.client.ws
        try:
            await asyncio.wait_for(self.client.stop(), _CLOSE_CAP_SECONDS)
        except Exception:  # noqa: BLE001 - closing a socket the browser already dropped raises its own kinds
            pass
        finally:
            _cut(socket)
        self._closed()

    def abort(self) -> None:
        """Cut the socket at once, without a close handshake (a connection that never became usable)."""
        self.closed = True
        task = self.client._message_handler_task
        if task is not None:
            task.cancel()
        for future in self.client.pending_requests.values():
            if not future.done():
                future.set_exception(ConnectionError("the connection was cut"))
        self.client.pending_requests.clear()
        _cut(self.client.ws)
        self._closed()

    # events ------------------------------------------------------------------------------------
    def on(self, method: str, session_id: str | None, listener: Listener) -> Callable[[], None]:
        """Call ``listener(params)`` for each ``method`` event of ``session_id`` (None: the browser's
        own session; ANY_SESSION: every session). Returns what stops it."""
        if method not in self._registered:
            self._registered.add(method)
            self.client.event_handlers[method] = functools.partial(self._dispatch, method)
        key = session_id or ""
        self._listeners[method][key].append(listener)

        def stop() -> None:
            listeners = self._listeners[method].get(key)
            if listeners and listener in listeners:
                listeners.remove(listener)
                if not listeners:
                    del self._listeners[method][key]
        return stop

    def _dispatch(self, method: str, params: Any, session_id: str | None) -> None:
        by_session = self._listeners.get(method)
        if not by_session:
            return
        for listener in [*by_session.get(session_id or "", ()), *by_session.get(ANY_SESSION, ())]:
            try:
                listener(params)
            except Exception:
                logging.getLogger("webhand.cdp").exception("listener for %s failed", method)

    def forget_session(self, session_id: str) -> None:
        """Drop every listener of a session that detached."""
        for by_session in self._listeners.values():
            by_session.pop(session_id, None)


def _cut(socket: Any) -> None:
    transport = getattr(socket, "transport", None)
    if transport is not None and not transport.is_closing():
        transport.abort()


def message(error: BaseException) -> str:
    """The browser's own words for a failed command."""
    if isinstance(error, RuntimeError) and error.args and isinstance(error.args[0], dict):
        detail = error.args[0]
        return str(detail.get("message", "")) + (f" ({detail['data']})" if detail.get("data") else "")
    return str(error) or type(error).__name__


#: What a command on the connection can raise: the browser's error, or a closed socket.
PROTOCOL_ERRORS = (RuntimeError, ConnectionError, CdpError, CdpClosed, WebSocketException)


def translate(error: BaseException, doing: str, timeout: float | None = None) -> WebhandError:
    if isinstance(error, WebhandError):
        return error
    if isinstance(error, asyncio.TimeoutError):
        seconds = f" within {timeout:g} s" if timeout else ""
        return ActionTimeout(f"{doing} did not finish{seconds}.",
                             "Call browser_snapshot to see the page, then retry with a larger timeout or another element.")
    text = message(error)
    lowered = text.lower()
    if "could not find object with given id" in lowered or "cannot find context with specified id" in lowered \
            or "node with given id does not belong" in lowered or "not attached to the dom" in lowered:
        return ElementNotActionable(f"{doing} failed: the element was removed from the page.",
                                    "Call browser_snapshot and use the new refs.")
    if "crashed" in lowered:
        return PageCrashed(f"{doing} failed: the page crashed.", "Call the tool again: it runs in a fresh tab.")
    if isinstance(error, (ConnectionError, CdpClosed, WebSocketException)) or "session with given id not found" in lowered \
            or "no target with given id" in lowered or "target closed" in lowered:
        return SessionClosed(f"{doing} failed: the page or browser was closed.",
                             "Call the tool again to start a fresh browser, or browser_tabs to pick another tab.")
    return WebhandError(f"{doing} failed: {text.splitlines()[0] if text else 'unknown error'}",
                        "Call browser_snapshot to see the page state.")


@asynccontextmanager
async def guarded(doing: str, timeout: float | None = None) -> AsyncIterator[None]:
    """Run CDP commands with a cap; any failure leaves as a webhand error."""
    try:
        if timeout is None:
            yield
        else:
            async with asyncio.timeout(timeout):
                yield
    except WebhandError:
        raise
    except TimeoutError:
        raise translate(TimeoutError(), doing, timeout) from None
    except (RuntimeError, ConnectionError, CdpError, CdpClosed, OSError, WebSocketException) as error:
        raise translate(error, doing, timeout) from None
