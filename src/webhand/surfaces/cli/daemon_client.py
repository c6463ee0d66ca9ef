"""The CLI's side of the daemon: connect to it, start it on first use, send one request.

Standard library only. The bytes on the wire are ``daemon_wire``'s, which the console script's
fast path (``forward``) uses alone; this module adds starting and stopping the daemon and the
errors that say what went wrong."""

from __future__ import annotations

import contextlib
import os
import select
import sys
import time

TYPE_CHECKING = False  # typing itself is not imported: a forwarded call must start fast
if TYPE_CHECKING:
    import _socket
    from pathlib import Path
    from typing import Any

from webhand.errors import WebhandError
from webhand.surfaces.cli.daemon_wire import connect, decode, exchange, socket_name


class DaemonUnavailable(WebhandError):
    """The daemon could not be reached or started."""


class DaemonNotRunning(DaemonUnavailable):
    """No daemon listens (and the request did not ask to start one)."""


def socket_path() -> Path:
    from pathlib import Path

    return Path(socket_name())


def log_path() -> Path:
    return socket_path().parent / "daemon.log"


def request(payload: dict[str, Any], *, timeout: float, start: list[str] | None = None,
            launch_timeout: float = 30.0) -> dict[str, Any]:
    """Send one request and return the reply. ``start`` is the daemon's extra argv: when given,
    a daemon that is not running is started first; else ``DaemonUnavailable`` is raised."""
    sock = connect(timeout)
    if sock is None:
        if start is None:
            raise DaemonNotRunning("The webhand daemon is not running.", "Any browser command starts it.")
        sock = start_daemon(start, launch_timeout)
    try:
        # On a terminal, a call's progress shows on stderr (the daemon sends it while the call runs).
        reply = exchange(sock, payload, timeout, progress=payload.get("op") in ("call", "argv") and sys.stderr.isatty())
    except TimeoutError as problem:
        raise unavailable(problem, timeout) from None
    finally:
        sock.close()
    if not reply:
        raise unavailable(EOFError(), timeout)
    return decode(reply)


def unavailable(problem: BaseException, timeout: float) -> DaemonUnavailable:
    """What to tell the user when the daemon's answer did not come: ``problem`` is the wire's
    ``TimeoutError`` (no answer in time), ``EOFError`` (closed without answering) or another ``OSError``."""
    if isinstance(problem, TimeoutError):
        return DaemonUnavailable(f"The webhand daemon did not answer within {timeout:g} s.",
                                 "The page may be hung: run `webhand close`, or `webhand daemon stop`.")
    if isinstance(problem, EOFError):
        return DaemonUnavailable("The webhand daemon closed the connection without answering.",
                                 f"See {log_path()}; `webhand daemon stop` and try again.")
    return DaemonUnavailable(f"The connection to the webhand daemon failed ({problem}).",
                             f"See {log_path()}; `webhand daemon stop` and try again.")


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


def start_daemon(extra_args: list[str], launch_timeout: float) -> _socket.socket:
    """Start the daemon detached and wait for its "ready" line (an event, capped by the timeout)."""
    import subprocess  # only here: a call to a running daemon does not pay for it

    from webhand.security.locations import open_private_file

    # Owner-only whatever the umask: the log can name pages and errors of the person's sessions.
    log = os.fdopen(open_private_file(log_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab")  # noqa: SIM115
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
        sock = connect(launch_timeout)
        if sock is not None:
            return sock
    elif line == "already-running":
        # Another CLI call started a daemon a moment ago; it announces readiness only to its own
        # starter, so retry connecting until it listens (rare race, capped).
        deadline = time.monotonic() + launch_timeout
        delay = 0.02
        while time.monotonic() < deadline:
            sock = connect(launch_timeout)
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
