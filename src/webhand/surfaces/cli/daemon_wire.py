"""One request to the daemon and its reply: the socket's path and one JSON line each way.

A warm CLI call (``forward``) runs this and nothing heavier, so it is built from what Python
has loaded at start or keeps in C: ``_socket`` rather than ``socket`` (whose Python layer
imports enum and selectors), and json's own C encoder and scanner from ``_json``, called as
``json`` calls them, rather than ``json`` (whose Python layer imports ``re`` and with it enum,
functools, collections). Those imports were about half of a warm call's time; the bytes on the
wire are the same. Where ``_json`` is missing (a Python without the accelerator) ``json`` is used.

The socket's folder is the private runtime folder, owner-checked on every call
(``runtime_dir_name``), and the daemon checks the caller's uid: only this user reaches it.
"""

import _socket
import os
import sys
import time

TYPE_CHECKING = False  # typing itself is not imported: a forwarded call must start fast
if TYPE_CHECKING:
    from typing import Any

from webhand.security.locations import runtime_dir_name

#: Largest request or reply line; replies carry image paths, never image bytes.
MAX_LINE_BYTES = 16 * 1024 * 1024


def socket_name() -> str:
    return os.path.join(runtime_dir_name(), "daemon.sock")


def connect(timeout: float) -> "_socket.socket | None":
    """A connection to the running daemon; None when none listens."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(socket_name())
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


#: How a progress line from the daemon begins; the reply itself begins with ``{"ok"``.
PROGRESS_PREFIX = b'{"progress":'


def exchange(sock: "_socket.socket", payload: dict, timeout: float, *, progress: bool = False) -> bytes:
    """Send ``payload`` as one line and read the reply line (empty when the daemon closed the
    connection without answering). Raises ``TimeoutError`` when no whole reply came in ``timeout``.
    ``progress``: ask the daemon for the call's progress, shown on stderr as one line rewritten in
    place until the reply is in (only for a terminal: the caller checks ``isatty``)."""
    if progress:
        payload = {**payload, "progress": True}
    sock.sendall(encode(payload) + b"\n")
    buffer = b""
    shown = False
    deadline = time.monotonic() + timeout
    try:
        while True:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                return buffer
            buffer += chunk
            while b"\n" in buffer and buffer.startswith(PROGRESS_PREFIX):
                line, buffer = buffer.split(b"\n", 1)
                if progress:
                    try:
                        show_progress(str(decode(line).get("message", "")))
                        shown = True
                    except (ValueError, AttributeError):
                        pass
            if (buffer.endswith(b"\n") and not buffer.startswith(PROGRESS_PREFIX)) or len(buffer) > MAX_LINE_BYTES:
                return buffer
    finally:
        if shown:
            sys.stderr.write("\r\x1b[2K")  # the progress line goes once the reply is in
            sys.stderr.flush()


def show_progress(message: str) -> None:
    """One progress line on the terminal, in place of the last. The daemon's message is webhand's
    own words around masked, escaped page text; control characters are dropped all the same."""
    clean = "".join(c for c in message if c.isprintable())[:200]
    sys.stderr.write(f"\r\x1b[2Kwebhand: {clean}")
    sys.stderr.flush()


def _refuse(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _ScanContext:
    """The settings ``json.JSONDecoder`` hands its C scanner: plain JSON, no hooks."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__


try:
    from _json import encode_basestring_ascii, make_encoder, make_scanner
except ImportError:  # no C accelerator: json's Python layer, slower to import, the same bytes
    import json

    def encode(payload: dict) -> bytes:
        return json.dumps(payload).encode()

    def decode(line: bytes) -> "Any":
        return json.loads(line)
else:
    # json.dumps(payload)'s own encoder: ensure_ascii, check_circular, allow_nan, ", " and ": ".
    _encode = make_encoder({}, _refuse, encode_basestring_ascii, None, ": ", ", ", False, False, True)
    _scan = make_scanner(_ScanContext())

    def encode(payload: dict) -> bytes:
        return "".join(_encode(payload, 0)).encode()

    def decode(line: bytes) -> "Any":
        """The JSON value on ``line`` (json.loads's rules: surrounding whitespace allowed, nothing else)."""
        text = line.decode()
        start = len(text) - len(text.lstrip(" \t\n\r"))
        try:
            value, end = _scan(text, start)
        except StopIteration as stop:
            raise ValueError(f"Expecting value: char {stop.value}") from None
        if text[end:].strip(" \t\n\r"):
            raise ValueError(f"Extra data: char {end}")
        return value
