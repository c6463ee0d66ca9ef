"""Answer a stdio client's ``initialize`` before the MCP SDK is loaded.

The official SDK takes about 0.6 s of CPU to import (its pydantic models for every protocol
version), and ``initialize`` needs none of it: its answer is fixed by the server's name, version,
instructions and capabilities. So ``webhand mcp`` over stdio reads the client's first message off
fd 0 in a thread as soon as it starts, and when it is a well-formed ``initialize`` it answers at
once. The browser starts meanwhile; the SDK loads after.

The SDK still owns the session: the same message is replayed to it first (``stdio_replay``), so it
negotiates and records the client's capabilities exactly as if it had answered, and its own answer,
which must equal ours, is dropped. Anything else (another method, a malformed or pipelined
request) is left to the SDK untouched. This module imports only the standard library.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any

from webhand import __version__

log = logging.getLogger("webhand.mcp")

INSTRUCTIONS = (
    "A real headless Chromium. Call browser_navigate, then browser_snapshot to see the page: elements you can act "
    "on carry refs like [e3]; pass them as `ref` to browser_click, browser_type and the other actions. Refs stay "
    "valid while the element stays on the page; after a navigation, snapshot again."
)
SINGLE_INSTRUCTIONS = (
    "A real headless Chromium behind one `browser` tool. Call it with action navigate, then snapshot to see the "
    "page: elements you can act on carry refs like [e3]; pass them as `ref` with action act (act_kind click, type, "
    "...). After a navigation, snapshot again."
)
#: The SDK's handshake versions (``mcp_types.version``); tests/test_mcp_handshake.py keeps them equal.
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE_VERSION = "2025-11-25"


def initialize_result(style: str, requested_version: str) -> dict[str, Any]:
    """The ``initialize`` result, as the SDK's low-level server would write it for webhand."""
    negotiated = requested_version if requested_version in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    return {"capabilities": {"tools": {"listChanged": False}},
            "instructions": SINGLE_INSTRUCTIONS if style == "single" else INSTRUCTIONS,
            "protocolVersion": negotiated, "serverInfo": {"name": "webhand", "version": __version__}}


def early_answer(line: bytes, style: str) -> tuple[int | str, dict[str, Any]] | None:
    """The request id and result to send for this first line, or None when the SDK must see it
    first: only a complete, well-formed ``initialize`` is answered early."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not isinstance(params, dict):
        return None
    client = params.get("clientInfo")
    if not (isinstance(params.get("protocolVersion"), str) and isinstance(params.get("capabilities"), dict)
            and isinstance(client, dict) and isinstance(client.get("name"), str) and isinstance(client.get("version"), str)):
        return None
    return request_id, initialize_result(style, params["protocolVersion"])


class EarlyHandshake:
    """Reads the client's first line off fd 0 in a thread and answers it on fd 1 when it is an
    ``initialize``. ``wait()`` before anything else touches fd 0 or fd 1."""

    def __init__(self, style: str, *, stdin_fd: int = 0, stdout_fd: int = 1) -> None:
        self.style = style
        self.line = b""  # the first line as read (newline included), replayed to the SDK
        self.answered: tuple[int | str, dict[str, Any]] | None = None
        self._fds = (stdin_fd, stdout_fd)
        self._thread = threading.Thread(target=self._run, name="webhand-handshake", daemon=True)

    def start(self) -> EarlyHandshake:
        self._thread.start()
        return self

    def wait(self) -> None:
        """Until the first line is read (or stdin closed) and answered; a client sends it at once."""
        self._thread.join()

    def _run(self) -> None:
        stdin_fd, stdout_fd = self._fds
        self.line = _read_line(stdin_fd)
        answer = early_answer(self.line, self.style)
        if answer is None:
            return
        request_id, result = answer
        reply = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, separators=(",", ":")) + "\n"
        try:
            _write_all(stdout_fd, reply.encode())
        except OSError as error:  # the client left: the SDK sees stdin's end and stops
            log.debug("could not answer initialize early: %s", error)
            return
        self.answered = answer


def _read_line(fd: int) -> bytes:
    """One line, read a byte at a time: never a byte past the newline, which belongs to the SDK's
    own reader of the same descriptor (a few hundred reads, well under a millisecond)."""
    data = bytearray()
    while True:
        byte = os.read(fd, 1)
        if not byte:
            break
        data += byte
        if byte == b"\n":
            break
    return bytes(data)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]
