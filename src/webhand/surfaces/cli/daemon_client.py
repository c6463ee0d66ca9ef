"""The CLI's side of the daemon: connect to it, start it on first use, send one request.

Standard library only, and lean: a CLI call to a running daemon imports this module and nothing
heavier (see ``main.main``)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import sys
import time

TYPE_CHECKING = False  # typing itself is not imported: a forwarded call must start fast
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

from webhand.errors import WebhandError
from webhand.security.locations import runtime_dir_name

#: Largest request or reply line; replies carry image paths, never image bytes.
MAX_LINE_BYTES = 16 * 1024 * 1024


class DaemonUnavailable(WebhandError):
    """The daemon could not be reached or started."""


class DaemonNotRunning(DaemonUnavailable):
    """No daemon listens (and the request did not ask to start one)."""


def socket_path() -> Path:
    from pathlib import Path

    return Path(_socket_name())


def _socket_name() -> str:
    return os.path.join(runtime_dir_name(), "daemon.sock")


def log_path() -> Path:
    return socket_path().parent / "daemon.log"


def _connect(timeout: float) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(_socket_name())
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


def request(payload: dict[str, Any], *, timeout: float, start: list[str] | None = None,
            launch_timeout: float = 30.0) -> dict[str, Any]:
    """Send one request and return the reply. ``start`` is the daemon's extra argv: when given,
    a daemon that is not running is started first; else ``DaemonUnavailable`` is raised."""
    sock = _connect(timeout)
    if sock is None:
        if start is None:
            raise DaemonNotRunning("The webhand daemon is not running.", "Any browser command starts it.")
        sock = start_daemon(start, launch_timeout)
    # On a terminal, a call's progress shows on stderr as one line rewritten in place (the daemon
    # sends it while the call runs; see ``daemon.py``); piped output stays as it was.
    progress = payload.get("op") in ("call", "argv") and sys.stderr.isatty()
    if progress:
        payload = {**payload, "progress": True}
    with sock:
        sock.sendall(json.dumps(payload).encode() + b"\n")
        reply = _read_reply(sock, timeout, _show_progress if progress else None)
    if not reply:
        raise DaemonUnavailable("The webhand daemon closed the connection without answering.",
                                f"See {log_path()}; `webhand daemon stop` and try again.")
    return json.loads(reply)


#: How long ``stop`` waits for the daemon to close its browsers and exit.
STOP_TIMEOUT = 60.0


def stop(timeout: float = STOP_TIMEOUT) -> bool:
    """Stop the daemon; return once it has exited (its socket and lock gone with it), so that the
    next command starts a new one. False when none was running."""
    try:
        reply = request({"op": "stop"}, timeout=30.0)
    except DaemonUnavailable:
        return False
    pid = reply.get("pid")
    if isinstance(pid, int) and not _exited(pid, timeout):
        raise DaemonUnavailable(f"The webhand daemon (pid {pid}) was asked to stop but still runs after {timeout:g} s.",
                                f"End it with `kill {pid}` (its browsers end with it); see {log_path()}.")
    return True


def _exited(pid: int, timeout: float) -> bool:
    """Wait for ``pid`` (not our child) to exit: its pidfd becomes readable then (an event); where
    there is none (Linux before 5.3), poll, capped too."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    except (AttributeError, OSError):
        handle = None
    if handle is not None:
        try:
            return bool(select.select([handle], [], [], timeout)[0])
        finally:
            os.close(handle)
    deadline = time.monotonic() + timeout
    delay = 0.01
    while _running(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
    return True


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


#: How a progress line from the daemon begins; the reply itself begins with ``{"ok"``.
PROGRESS_PREFIX = b'{"progress":'


def _read_reply(sock: socket.socket, timeout: float, on_progress: Any = None) -> bytes:
    """The daemon's reply line; progress lines before it go to ``on_progress`` (a message each)."""
    buffer = b""
    shown = False
    deadline = time.monotonic() + timeout
    try:
        while True:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                raise DaemonUnavailable(f"The webhand daemon did not answer within {timeout:g} s.",
                                        "The page may be hung: run `webhand close`, or `webhand daemon stop`.") from None
            if not chunk:
                return buffer
            buffer += chunk
            while b"\n" in buffer and buffer.startswith(PROGRESS_PREFIX):
                line, buffer = buffer.split(b"\n", 1)
                if on_progress is not None:
                    with contextlib.suppress(ValueError, AttributeError):
                        on_progress(str(json.loads(line).get("message", "")))
                        shown = True
            if (buffer.endswith(b"\n") and not buffer.startswith(PROGRESS_PREFIX)) or len(buffer) > MAX_LINE_BYTES:
                return buffer
    finally:
        if shown:
            sys.stderr.write("\r\x1b[2K")  # the progress line goes once the reply is in
            sys.stderr.flush()


def _show_progress(message: str) -> None:
    # The daemon's message is webhand's own words around masked, escaped page text; control
    # characters are dropped all the same: this line is written to a terminal.
    clean = "".join(c for c in message if c.isprintable())[:200]
    sys.stderr.write(f"\r\x1b[2Kwebhand: {clean}")
    sys.stderr.flush()


def start_daemon(extra_args: list[str], launch_timeout: float) -> socket.socket:
    """Start the daemon detached and wait for its "ready" line (an event, capped by the timeout)."""
    import subprocess  # only here: a call to a running daemon does not pay for it

    log = open(log_path(), "ab")  # noqa: SIM115 - handed to the child
    with log:
        process = subprocess.Popen(
            [sys.executable, "-m", "webhand", "daemon", "run", *extra_args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, start_new_session=True,
            close_fds=True, env=os.environ.copy())
    assert process.stdout is not None
    with process.stdout:
        ready, _, _ = select.select([process.stdout], [], [], launch_timeout)
        line = process.stdout.readline().decode().strip() if ready else ""
    if line.startswith("ready"):
        sock = _connect(launch_timeout)
        if sock is not None:
            return sock
    elif line == "already-running":
        # Another CLI call started a daemon a moment ago; it announces readiness only to its own
        # starter, so retry connecting until it listens (rare race, capped).
        deadline = time.monotonic() + launch_timeout
        delay = 0.02
        while time.monotonic() < deadline:
            sock = _connect(launch_timeout)
            if sock is not None:
                return sock
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=delay)  # also reaps our own short-lived child
            delay = min(delay * 2, 0.5)
    if process.poll() is None and not line:
        process.kill()
    raise DaemonUnavailable("The webhand daemon did not start" + (f" (it said {line!r})." if line else ".")
                            + _log_tail(), f"See {log_path()}; run `webhand doctor` to check the browser.")


def _log_tail() -> str:
    with contextlib.suppress(OSError):
        lines = log_path().read_text(errors="replace").strip().splitlines()[-5:]
        if lines:
            return " Last log lines: " + " | ".join(lines)
    return ""
