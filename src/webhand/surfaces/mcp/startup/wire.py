"""The stdio client's pipe, owned by webhand for the whole session.

``webhand mcp`` over stdio reads and writes the client's pipe itself, from its first instruction
on, so that it can answer before the MCP SDK is loaded (``handshake``, ``early``) and hand
the session to the SDK later without losing or reordering a byte:

- fd 0 and fd 1 are moved to private descriptors at once, and the standard ones point at the null
  device and at stderr, as the SDK's own stdio transport does: a stray ``print`` or a child's
  output can never corrupt the wire.
- One thread reads the client's lines. The first is answered in that thread when it is a
  well-formed ``initialize``, before the event loop even exists; the rest are queued for the
  event loop.
- Every line is checked before anyone reads it (``jsonrpc_envelope.check_line``): a malformed
  message (not JSON, too deep, a batch, a bad id, a line over ``MAX_LINE_BYTES``) is answered with
  the JSON-RPC error here, or dropped when it is a notification, so that neither the early server
  nor the SDK can fail on it and the client never waits for an answer that will not come.
- Whole lines are written under a lock, so answers from the early server and from the SDK never
  interleave.
- The SDK reads and writes through ``SdkInput`` and ``SdkOutput`` (given to its ``stdio_server``
  as its stdin and stdout): it is first given the lines it must see again (the ``initialize``
  answered early, so that it keeps the session state; the ``initialized`` notification), and its
  own answer to that ``initialize``, which must equal ours, is dropped.

Standard library only: this module loads before anything heavy.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from webhand.surfaces.mcp.startup.handshake import early_answer
from webhand.surfaces.mcp.jsonrpc_envelope import MAX_LINE_BYTES, check_line, oversized

log = logging.getLogger("webhand.mcp")

_READ_SIZE = 65536


class StdioWire:
    """The client's stdin and stdout. ``start()`` first, before anything else can write to fd 1."""

    def __init__(self, style: str, *, stdin_fd: int = 0, stdout_fd: int = 1) -> None:
        self.style = style
        self.opening = b""  # the client's first line (newline included)
        self.answered: tuple[int | str, dict[str, Any]] | None = None  # the initialize answered early: id, result
        self._fds = (stdin_fd, stdout_fd)
        self._lines: deque[bytes] = deque()
        self._ended = False  # stdin reached its end (the client left)
        self._lock = threading.Lock()  # guards _lines, _ended and _loop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._arrived = asyncio.Event()  # bound to the serving loop on first use (Python 3.10+)
        self._write_lock = threading.Lock()
        self._opened = threading.Event()
        self._reader = threading.Thread(target=self._read, name="webhand-stdin", daemon=True)

    def start(self) -> StdioWire:
        if self._fds == (0, 1):
            self._fds = (_divert(0, os.O_RDONLY), _divert(1, os.O_WRONLY))
        self._reader.start()
        return self

    def wait_opening(self, timeout: float | None = None) -> bool:
        """Whether the first line was read (and answered, when it was an ``initialize``)."""
        return self._opened.wait(timeout)

    # -- reading ---------------------------------------------------------------------------

    def _read(self) -> None:
        buffer = bytearray()
        opening = True
        skipped = 0  # bytes of a line longer than MAX_LINE_BYTES dropped so far (never buffered whole)
        while True:
            try:
                chunk = os.read(self._fds[0], _READ_SIZE)
            except OSError as error:
                log.debug("stdin failed: %s", error)
                chunk = b""
            if not chunk:
                if buffer or skipped:  # a last line without its newline is still a line
                    opening = self._take(bytes(buffer), opening, skipped)
                if opening:
                    self._opened.set()
                self._arrive(None, False)
                return
            searched = len(buffer)  # a long line's earlier chunks hold no newline: look only at the new one
            buffer += chunk
            start = 0
            while (end := buffer.find(b"\n", max(start, searched))) >= 0:
                opening = self._take(bytes(buffer[start:end + 1]), opening, skipped)
                skipped = 0
                start = end + 1
            del buffer[:start]
            if len(buffer) > MAX_LINE_BYTES:
                skipped += len(buffer)
                buffer.clear()

    def _take(self, line: bytes, opening: bool, skipped: int) -> bool:
        """Pass one line on, or answer (or drop) it here when it is malformed (``jsonrpc_envelope``):
        neither the early server nor the SDK ever reads a line the guard refused. Returns whether
        the opening line is still to come (a refused line is not the client's opening)."""
        refusal = oversized(skipped + len(line)) if skipped else check_line(line)
        if refusal is None:
            self._arrive(line, opening)
            return False
        log.warning("stdio: %s the client's message: %s", "answered" if refusal.reply else "dropped", refusal.reason)
        if refusal.reply is not None:
            self.write_message(refusal.reply)
        return opening

    def _arrive(self, line: bytes | None, opening: bool) -> None:
        if opening and line is not None:
            self.opening = line
            self._answer_opening(line)
            self._opened.set()
            return
        with self._lock:
            if line is None:
                self._ended = True
            else:
                self._lines.append(line)
            loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._arrived.set)

    def _answer_opening(self, line: bytes) -> None:
        answer = early_answer(line, self.style)
        if answer is None:
            return
        request_id, result = answer
        if self.write_message({"jsonrpc": "2.0", "id": request_id, "result": result}):
            self.answered = answer

    async def next_line(self) -> bytes | None:
        """The client's next line, or None once stdin ended. Safe to cancel: no line is lost."""
        while True:
            with self._lock:
                self._loop = self._loop or asyncio.get_running_loop()
                if self._lines:
                    return self._lines.popleft()
                if self._ended:
                    return None
                self._arrived.clear()
            await self._arrived.wait()

    # -- writing ---------------------------------------------------------------------------

    def write_line(self, data: bytes) -> bool:
        """Write one whole line (blocking); False when the client is gone."""
        with self._write_lock:
            try:
                while data:
                    data = data[os.write(self._fds[1], data):]
            except OSError as error:
                log.debug("could not write to the client: %s", error)
                return False
        return True

    def write_message(self, message: dict[str, Any]) -> bool:
        return self.write_line(encode(message))

    async def send(self, message: dict[str, Any]) -> bool:
        """Write a message from the event loop (in a thread: a slow client must not stall the loop)."""
        return await asyncio.to_thread(self.write_message, message)


def encode(message: dict[str, Any]) -> bytes:
    """One JSON-RPC line as the SDK writes it: compact JSON in UTF-8."""
    return (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8", "replace")


def _divert(fd: int, mode: int) -> int:
    """Move ``fd`` to a private descriptor (returned) and point it at the null device (stdin) or
    stderr (stdout), so that nothing else in the process reads or writes the client's pipe."""
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        diversion = os.open(os.devnull, os.O_RDONLY) if mode == os.O_RDONLY else os.dup(2)
    except OSError:
        return private  # keep the standard one pointing at the wire: nothing worse than before
    os.dup2(diversion, fd)
    os.close(diversion)
    return private


class SdkInput:
    """The client's lines as the SDK's ``stdio_server`` reads its stdin: ``replay`` first."""

    def __init__(self, wire: StdioWire, replay: list[bytes], intercept: Callable[[bytes], bool]) -> None:
        self._wire, self._replay, self._intercept = wire, replay, intercept

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        for line in self._replay:
            yield line.decode("utf-8", "replace")
        while (line := await self._wire.next_line()) is not None:
            if not self._intercept(line):
                yield line.decode("utf-8", "replace")


class SdkOutput:
    """Where the SDK's ``stdio_server`` writes: the wire, minus its answer to an ``initialize``
    webhand answered already (``answered``: id and result)."""

    def __init__(self, wire: StdioWire, answered: tuple[int | str, dict[str, Any]] | None) -> None:
        self._wire, self._answered = wire, answered

    async def write(self, text: str) -> None:
        if self._answered is not None and self._drops(text):
            return
        await asyncio.to_thread(self._wire.write_line, text.encode("utf-8", "replace"))

    async def flush(self) -> None:
        """Every write is whole and unbuffered."""

    def _drops(self, text: str) -> bool:
        assert self._answered is not None
        request_id, sent = self._answered
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("id") != request_id or "method" in message:
            return False
        self._answered = None
        if message.get("result") != sent:
            log.warning("webhand answered initialize early with %s, but the MCP SDK would have answered %s; "
                        "update webhand/surfaces/mcp/startup/handshake.py to match the installed SDK", sent, message)
        return True
