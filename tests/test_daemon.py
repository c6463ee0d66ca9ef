"""The per-user daemon behind the CLI: started on first use, keeps sessions, cleans up on every way out.

Each test runs the CLI as a subprocess with its own runtime dir (XDG_RUNTIME_DIR), so it gets
its own daemon, and ends by checking the daemon and every browser it launched are gone.
"""

from __future__ import annotations

import os
import signal
import stat

import psutil

from helpers import Cli, ref_of


def test_the_daemon_keeps_the_session_between_calls_and_stop_closes_everything(cli, site):
    assert "Title: Sign in" in cli("navigate", site.url("login.html")).stdout
    page = cli("snapshot").stdout
    cli("type", ref_of(page, 'textbox "User name"'), "ada")
    cli("type", ref_of(page, 'textbox "Password"'), "secret")
    cli("click", ref_of(page, 'button "Sign in"'))
    assert 'status: Welcome, ada!' in cli("snapshot").stdout
    # A call made with other settings (here a named profile) is told that the daemon runs with its own.
    other = cli("get_url", env={"WEBHAND_PROFILE": "work"})
    assert "warning: this command asked for profile work, but the running daemon has no profile" in other.stderr
    assert "warning" not in cli("get_url").stderr
    # On a terminal, a long call shows its progress on stderr (the same daemon, a slow page).
    terminal = on_a_terminal(cli, "wait_for", "--time", "2.5")
    assert "webhand: 2.5 s to pass (1 s so far)" in terminal and terminal.endswith("\r\x1b[2K")

    processes = cli.processes()
    assert len(processes) >= 2, "the daemon and its browser"
    assert "stopped" in cli("daemon", "stop").stdout
    assert psutil.wait_procs(processes, timeout=30)[1] == []
    assert not (cli.runtime / "webhand" / "daemon.sock").exists()
    assert "not running" in cli("daemon", "status", check=False).stdout


def on_a_terminal(cli: Cli, *args: str) -> str:
    """What ``webhand ARGS`` writes to stderr when stderr is a terminal (a pseudo-terminal here)."""
    import pty
    import subprocess
    import sys

    controller, terminal = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "webhand", *args], env=cli.env, stdout=subprocess.PIPE,
                              stderr=terminal, stdin=subprocess.DEVNULL, timeout=60)
        assert done.returncode == 0
        os.close(terminal)
        terminal = -1
        seen = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: every writer closed its end
                break
            if not chunk:
                break
            seen += chunk
        return seen.decode()
    finally:
        os.close(controller)
        if terminal >= 0:
            os.close(terminal)


def test_sigterm_closes_the_browsers_and_the_socket(cli, site):
    cli("navigate", site.url("login.html"))
    processes = cli.processes()
    os.kill(processes[0].pid, signal.SIGTERM)
    assert psutil.wait_procs(processes, timeout=30)[1] == []
    assert not (cli.runtime / "webhand" / "daemon.sock").exists()


def test_the_daemon_exits_by_itself_after_its_idle_timeout(tmp_path, site):
    cli = Cli(tmp_path, WEBHAND_IDLE_TIMEOUT="5")
    try:
        cli("navigate", site.url("login.html"))
        processes = cli.processes()
        assert psutil.wait_procs(processes, timeout=60)[1] == [], "idle daemon and its browser exited"
    finally:
        cli("daemon", "stop", check=False)


def test_the_socket_and_the_log_are_private_to_the_user(cli):
    previous = os.umask(0o022)  # the usual umask: a file made as it says is readable by everyone
    try:
        cli("daemon", "start")
    finally:
        os.umask(previous)
    socket_file = cli.runtime / "webhand" / "daemon.sock"
    assert stat.S_IMODE(socket_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(socket_file.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((socket_file.parent / "daemon.log").stat().st_mode) == 0o600
    assert "already" not in cli("daemon", "start").stdout  # a second start finds the running one
    assert len({cli.status()["pid"], cli.status()["pid"]}) == 1


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_command_right_after_daemon_stop_starts_a_new_daemon(cli, site):
    """`daemon stop` returns once the daemon has exited: before, the next command often found the
    old one still holding its lock and failed ("did not start (it said 'already-running')")."""
    pids = []
    for _ in range(4):
        assert "Title: Sign in" in cli("navigate", site.url("login.html")).stdout
        pid = int((cli.runtime / "webhand" / "daemon.lock").read_text())
        processes = cli.processes()
        assert "stopped" in cli("daemon", "stop").stdout
        assert not _running(pid), "stop returned while the daemon still ran"
        assert not (cli.runtime / "webhand" / "daemon.sock").exists()
        assert psutil.wait_procs(processes, timeout=30)[1] == []
        pids.append(pid)
    assert len(set(pids)) == 4, "each command after a stop started a new daemon"


def test_progress_lines_before_the_reply_are_shown_and_the_reply_is_kept(capsys):
    """The CLI's half of progress: the daemon writes progress lines, then the reply, on one socket."""
    import socket as sockets

    from webhand.surfaces.cli.daemon_wire import exchange

    ours, daemons = sockets.socketpair()
    with ours, daemons:
        # Split mid-line, as a stream may deliver it, and with a page-made control character.
        daemons.sendall(b'{"progress": 1.0, "message": "the page at x to load (1 s so far)"}\n{"progr')
        daemons.sendall(b'ess": 2.0, "message": "evil\\u001b[2J (2 s so far)"}\n{"ok": true, "result": {}}\n')
        assert exchange(ours, {"op": "call"}, 5.0, progress=True) == b'{"ok": true, "result": {}}\n'
        assert b'"progress": true' in daemons.recv(65536)  # the request asked for progress
    assert capsys.readouterr().err == ("\r\x1b[2Kwebhand: the page at x to load (1 s so far)"
                                       "\r\x1b[2Kwebhand: evil[2J (2 s so far)\r\x1b[2K")


def test_a_progress_line_on_the_terminal_carries_no_control_characters(capsys):
    from webhand.surfaces.cli.daemon_wire import show_progress

    show_progress("evil\x1b[2J\x07 (2 s so far)")
    assert capsys.readouterr().err == "\r\x1b[2Kwebhand: evil[2J (2 s so far)"


# -- the wire the console script's fast path speaks (daemon_wire: json's and socket's C parts) --

WIRE_VALUES = [
    {"op": "argv", "argv": ["type", "e3", "naïve café ✓ 𝄞"], "cwd": "/tmp/a b", "env": {"HOME": "/root"}},
    {"argv": ["eval", "\"quoted\" \\ back\\slash", "\n\r\t\x00\x1f\x7f", "\u2028\u2029"]},
    {"argv": ["\udcff\udc80 undecodable bytes (surrogateescape)", "\ud800 lone surrogate"]},
    {"nested": [[], {}, [1, 2.5, -3e-7, True, False, None]], "big": 10**30, "": ""},
    {"nan": float("inf"), "name": "x" * 100_000},
]


def test_the_wire_writes_what_json_writes_and_reads_what_json_reads():
    import json
    import math

    from webhand.surfaces.cli.daemon_wire import decode, encode

    for value in WIRE_VALUES:
        assert encode(value) == json.dumps(value).encode()
        assert decode(encode(value) + b"\n") == json.loads(json.dumps(value))
    assert math.isnan(decode(b'{"a": NaN}')["a"]) and decode(b' {"a": -Infinity} \n') == {"a": -math.inf}
    for garbage in (b"", b"\n", b"{", b'{"a": 1} trailing', b"{'a': 1}", b'{"a": "\x01"}', b"nul"):
        try:
            decode(garbage)
        except ValueError:
            continue
        raise AssertionError(f"{garbage!r} was read as JSON")


def test_a_daemon_that_closes_without_answering_is_reported_not_a_traceback(tmp_path):
    """The fast path on a socket that accepts and hangs up (a daemon that crashed mid-call):
    the message the full client gives, exit status 1, nothing else started."""
    import socket
    import subprocess
    import sys
    import threading

    cli = Cli(tmp_path)
    folder = cli.runtime / "webhand"
    folder.mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(folder / "daemon.sock"))
    server.listen()

    def hang_up() -> None:
        connection, _ = server.accept()
        connection.recv(65536)
        connection.close()

    threading.Thread(target=hang_up, daemon=True).start()
    try:
        done = subprocess.run([sys.executable, "-m", "webhand", "get_url"], env=cli.env, capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
    finally:
        server.close()
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("webhand: The webhand daemon closed the connection without answering.")
    assert "Traceback" not in done.stderr and not (folder / "daemon.lock").exists()
