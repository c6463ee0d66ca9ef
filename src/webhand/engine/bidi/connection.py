"""One WebDriver BiDi connection: a thin, data-driven layer on ``websockets``.

No class per command: ``send("browsingContext.navigate", {...})`` sends any command of the
protocol by name, with an id, and awaits its answer (a future per id); ``on("log.entryAdded",
handler)`` hears any event. Parameters and results are the protocol's own JSON, as its CDDL
defines them. Why not a library: see docs/design.md, "The Firefox driver".
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import websockets
from websockets.exceptions import WebSocketException

from webhand.errors import ActionTimeout, BrowserLaunchFailed, PageCrashed, WebhandError

EventHandler = Callable[[dict[str, Any]], None]
#: A message larger than this is refused (a full-page screenshot of a long page is tens of MB).
MAX_MESSAGE_BYTES = 256 * 1024 * 1024


class BidiError(Exception):
    """The browser answered a command with an error (``error`` is the protocol's error code)."""

    def __init__(self, method: str, error: str, message: str) -> None:
        super().__init__(f"{method}: {error}: {message}")
        self.method, self.error, self.message = method, error, message


class ConnectionLost(Exception):
    """The WebSocket closed while a command waited for its answer."""


PROTOCOL_ERRORS = (BidiError, ConnectionLost, WebSocketException, OSError)


class BidiConnection:
    def __init__(self, socket: Any) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self._handlers: dict[str, list[EventHandler]] = {}
        self.on_close: list[Callable[[], None]] = []
        self.closed = False
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, *, timeout: float) -> "BidiConnection":
        """Connect to a BiDi endpoint (``ws://host:port``; ``/session`` is added when missing) and
        start a session (``session.new``): prompts are left for webhand to answer."""
        if not url.rstrip("/").endswith("/session"):
            url = url.rstrip("/") + "/session"
        socket = await asyncio.wait_for(websockets.connect(url, max_size=MAX_MESSAGE_BYTES, ping_interval=None), timeout)
        connection = cls(socket)
        try:
            capabilities = {"alwaysMatch": {"unhandledPromptBehavior": {"default": "ignore"}, "acceptInsecureCerts": False}}
            connection.session = await asyncio.wait_for(connection.send("session.new", {"capabilities": capabilities}),
                                                         timeout)
        except BaseException:
            connection.abort()
            raise
        return connection

    session: dict[str, Any]

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one command; returns its ``result``. Uncapped: the caller caps it."""
        if self.closed:
            raise ConnectionLost(f"{method}: the connection to the browser is closed")
        command_id = next(self._ids)
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[command_id] = (method, answer)
        try:
            await self._socket.send(json.dumps({"id": command_id, "method": method, "params": params or {}}))
            return await answer
        finally:
            self._pending.pop(command_id, None)

    def on(self, event: str, handler: EventHandler) -> Callable[[], None]:
        """Call ``handler(params)`` for each ``event``; returns what stops it."""
        self._handlers.setdefault(event, []).append(handler)
        return lambda: self._handlers.get(event, []).remove(handler) if handler in self._handlers.get(event, []) else None

    async def _read(self) -> None:
        try:
            async for raw in self._socket:
                message = json.loads(raw)
                if "id" in message and message["id"] in self._pending:
                    method, answer = self._pending[message["id"]]
                    if answer.done():
                        continue
                    if (thrown := _exception_without_stack(method, message)) is not None:
                        answer.set_result(thrown)
                    elif message.get("type") == "error":
                        answer.set_exception(BidiError(method, message.get("error", ""), message.get("message", "")))
                    else:
                        answer.set_result(message.get("result") or {})
                elif message.get("type") == "event":
                    for handler in list(self._handlers.get(message.get("method", ""), [])):
                        handler(message.get("params") or {})
        except (WebSocketException, OSError, ValueError):
            pass
        finally:
            self._closed()

    def _closed(self) -> None:
        if self.closed:
            return
        self.closed = True
        for method, answer in self._pending.values():
            if not answer.done():
                answer.set_exception(ConnectionLost(f"{method}: the connection to the browser closed"))
        for callback in list(self.on_close):
            callback()

    async def close(self) -> None:
        with contextlib.suppress(*PROTOCOL_ERRORS, asyncio.TimeoutError):
            await asyncio.wait_for(self._socket.close(), 2)
        self._reader.cancel()
        self._closed()

    def abort(self) -> None:
        self._socket.transport.abort() if getattr(self._socket, "transport", None) else None
        self._reader.cancel()
        self._closed()


def translate(error: BaseException, doing: str, timeout: float | None) -> WebhandError:
    if isinstance(error, (TimeoutError, asyncio.TimeoutError)):
        return ActionTimeout(f"{doing} did not finish within {timeout or 0:.0f} s.",
                             "Take a browser_snapshot to see the page's state, then try again.")
    if isinstance(error, BidiError) and error.error == "no such frame":
        return PageCrashed(f"{doing} failed: the tab is gone.", "Open a new tab with browser_tabs.")
    if isinstance(error, (ConnectionLost, WebSocketException, OSError)):
        return BrowserLaunchFailed(f"{doing} failed: the connection to Firefox was lost ({error}).",
                                   "Start a new session; run `webhand doctor` if it happens again.")
    return WebhandError(f"{doing} failed: Firefox said {error}.", "Take a browser_snapshot and try again.")


@contextlib.asynccontextmanager
async def guarded(doing: str, timeout: float | None) -> AsyncIterator[None]:
    """Run commands within ``timeout``; a timeout or a protocol error leaves as a webhand error."""
    try:
        async with asyncio.timeout(timeout):
            yield
    except WebhandError:
        raise
    except (TimeoutError, *PROTOCOL_ERRORS) as error:
        raise translate(error, doing, timeout) from None


#: Firefox 153's answer to a script that threw, once any preload script is installed (page_requests.py
#: installs one per session): it fails to build the exception's details and answers "unknown error"
#: instead, with the exception's text after this prefix (its remote agent, script.sys.mjs
#: #buildExceptionDetails).
_NO_STACK = "Error: Missing stack, unable to build exceptionDetails for exception: "


def _exception_without_stack(method: str, message: dict[str, Any]) -> dict[str, Any] | None:
    """The script result Firefox meant (``type: exception`` with the exception's text, no position)
    when it answered a script that threw with ``_NO_STACK``; else None."""
    if message.get("type") != "error" or not method.startswith("script.") or message.get("error") != "unknown error":
        return None
    text = str(message.get("message", ""))
    if not text.startswith(_NO_STACK):
        return None
    return {"type": "exception", "exceptionDetails": {"text": text[len(_NO_STACK):][:2000], "lineNumber": 0,
                                                      "columnNumber": 0}}

