"""Helpers the tests share: the local site server, test settings, and process checks.

Fixtures live in conftest.py; plain functions and classes live here, so that test modules
import them (``from helpers import …``) instead of importing conftest.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookies
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from webhand import Settings
from webhand.engine.launch.chrome import _registry_dir

PAGES = Path(__file__).parent / "pages"


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files from tests/pages plus:
    /status/<code>           an empty page with that status
    /redirect?to=<url>       302 to the URL
    /slow?ms=<n>&body=<t>    answers after n ms (a server-side delay, not a test sleep)
    /download/<name>?ms=<n>  a small attachment named <name> (percent-decoded; a non-ASCII one as filename*),
                             answered after n ms (default 0)
    /echo?type=<mime>        the request (method, path, headers, body), as plain text or the type given
    /set-cookie?name=v       sets a cookie
    /cacheable/<name>        a small script the browser may cache for an hour
    /tiny-elements?count=<n> a page of n tiny elements (<i>x</i>), 8 bytes each (&hidden=1: in a hidden div)
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, directory=str(PAGES), **kwargs)  # type: ignore[arg-type]

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        if parsed:  # every request the server really received, for tests that prove one never came
            self.server.received.append((self.command, self.path))  # type: ignore[attr-defined]
        return parsed

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def _send(self, code: int, body: bytes, content_type: str = "text/html", headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _dynamic(self) -> bool:
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path.startswith("/status/"):
            code = int(url.path.rsplit("/", 1)[1])
            self._send(code, f"<title>Status {code}</title><h1>{code}</h1>".encode())
        elif url.path == "/redirect":
            self._send(302, b"", headers={"Location": query.get("to", "/")})
        elif url.path == "/slow":
            threading.Event().wait(int(query.get("ms", "500")) / 1000)
            self._send(200, query.get("body", "<title>Slow</title><p>slow page</p>").encode())
        elif url.path.startswith("/download/"):
            threading.Event().wait(int(query.get("ms", "0")) / 1000)
            name = urllib.parse.unquote(url.path.rsplit("/", 1)[1])
            disposition = f'attachment; filename="{name}"' if name.isascii() else \
                f"attachment; filename*=UTF-8''{urllib.parse.quote(name)}"
            self._send(200, f"content of {name}\n".encode(), "application/octet-stream",
                       {"Content-Disposition": disposition})
        elif url.path == "/echo":
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            text = f"{self.command} {self.path}\n{self.headers}\n".encode() + body
            self._send(200, text, query.get("type", "text/plain"))
        elif url.path.startswith("/cacheable/"):
            name = url.path.rsplit("/", 1)[1]
            self._send(200, f"window.cached = {name!r};\n".encode(), "text/javascript",
                       {"Cache-Control": "max-age=3600"})
        elif url.path == "/tiny-elements":
            count, hidden = int(query.get("count", "1000")), query.get("hidden") == "1"
            self._send(200, b"<!doctype html><html><head><title>Tiny elements</title></head><body><p>Tiny elements</p>"
                       + (b"<div hidden>" if hidden else b"") + b"<i>x</i>" * count + b"</body></html>")
        elif url.path == "/members":  # a page behind a sign-in: the session cookie member=opensesame
            cookies = http.cookies.SimpleCookie(self.headers.get("Cookie", ""))
            member = cookies.get("member")
            if member is not None and member.value == "opensesame":
                self._send(200, b"<title>Members</title><p>Welcome back, member</p>")
            else:
                self._send(401, b"<title>Sign in first</title><p>Sign in first</p>")
        elif url.path == "/set-cookie":
            cookies = [f"{k}={v}; Path=/" for k, v in query.items()]
            self.send_response(200)
            for cookie in cookies:
                self.send_header("Set-Cookie", cookie)
            body = b"<title>Cookie set</title><p>cookie set</p>"
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            return False
        return True

    def do_GET(self) -> None:
        if not self._dynamic():
            super().do_GET()

    def do_POST(self) -> None:
        if not self._dynamic():
            self._send(405, b"method not allowed", "text/plain")

    do_PUT = do_POST  # /echo answers any method a route may rewrite a request to


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.received: list[tuple[str, str]] = []  # (method, path) of every request, in order
        self.connections = 0  # every TCP connection accepted, HTTP or not

    def process_request(self, request: object, client_address: object) -> None:
        self.connections += 1
        super().process_request(request, client_address)  # type: ignore[arg-type]

    def handle_error(self, request: object, client_address: object) -> None:
        # A browser drops requests it no longer wants (a navigation away, an aborted fetch):
        # that is normal page life, not a server error worth a traceback in the test output.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class Site:
    def __init__(self, handler: type[http.server.BaseHTTPRequestHandler] = _Handler) -> None:
        self.server = _Server(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def received_paths(self, containing: str) -> list[str]:
        """The paths of the requests this server received that contain ``containing``."""
        return [path for _, path in list(self.server.received) if containing in path]

    @property
    def connections(self) -> int:
        return self.server.connections

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def settings_for_tests(tmp_path_factory: pytest.TempPathFactory, **overrides: object) -> Settings:
    out = tmp_path_factory.mktemp("webhand-out")
    shared = tmp_path_factory.mktemp("webhand-shared")  # a folder the user shares with every conversation
    base: dict[str, object] = {"output_dir": str(out), "isolation": "context", "max_sessions": 60,
                               "capabilities": ["all"], "warm_reserve": True, "roots": [str(shared)]}
    base.update(overrides)
    return Settings.from_sources(base, env={})


def own_browser_processes() -> list[psutil.Process]:
    """Chromium and Firefox processes this test process launched that are still alive (by
    descent), so that browsers of other programs on the machine are never counted. Firefox's
    helpers are named for their job ("Web Content", "RDD Process"), so they are known by the
    binary they run."""
    alive = []
    me = os.getpid()
    for child in psutil.Process(me).children(recursive=True):
        try:
            program = (child.cmdline() or [""])[0].lower()
            if "chrom" in child.name().lower() or "firefox" in child.name().lower() or "firefox" in program:
                alive.append(child)
        except psutil.NoSuchProcess:
            continue
    return alive


def converting_workers(pid: int) -> list[psutil.Process]:
    """The conversion workers (``python -m webhand.page.convert``) that process ``pid`` runs."""
    found = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if "webhand.page.convert" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def own_registry_entries() -> list[Path]:
    entries = []
    for file in _registry_dir().glob("*.json"):
        try:
            if json.loads(file.read_text()).get("owner_pid") == os.getpid():
                entries.append(file)
        except (OSError, ValueError):
            continue
    return entries


def browsers_of_child_processes() -> list[psutil.Process]:
    """Browsers (with their group) that child processes of this test — an MCP server, a daemon —
    launched, found through the PID registry while those children run. Wait for these after
    stopping the child: once it exits, its browsers would no longer be our descendants."""
    children = {c.pid for c in psutil.Process().children(recursive=True)}
    found: list[psutil.Process] = []
    for file in _registry_dir().glob("*.json"):
        try:
            entry = json.loads(file.read_text())
        except (OSError, ValueError):
            continue
        if entry.get("owner_pid") not in children:
            continue
        for process in psutil.process_iter():
            try:
                if os.getpgid(process.pid) == entry["pid"]:
                    found.append(process)
            except (ProcessLookupError, psutil.NoSuchProcess):
                continue
    return found


def wait_until_gone(processes: list[psutil.Process], timeout: float = 10.0) -> list[psutil.Process]:
    """Processes of the list still alive after waiting (by process exit events, capped)."""
    _, alive = psutil.wait_procs(processes, timeout=timeout)
    return alive


async def wait_until_gone_async(processes: list[psutil.Process], timeout: float = 10.0) -> list[psutil.Process]:
    """``wait_until_gone`` for async tests: waits in a thread so the event loop (and webhand) keep running."""
    return await asyncio.to_thread(wait_until_gone, processes, timeout)


# ---------------------------------------------------------------------------------------------
# The command line, run as a user would (a subprocess per call, the daemon in between)


CLI_TIMEOUT = 120


@contextlib.contextmanager
def short_temp_dir() -> Iterator[str]:
    """A private temporary folder with a short path, removed after: the TMPDIR for a stand-in browser
    a test starts, whose singleton socket must fit a Unix socket path (108 bytes), which a pytest
    tmp_path under xdist does not always."""
    folder = tempfile.mkdtemp(prefix="standin-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def processes_in_group(group: int) -> list[psutil.Process]:
    """The live processes of one process group: a browser webhand started leads its own, so this is
    that browser and every helper it forked (Firefox's content processes too), and nothing else's."""
    found = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == group and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except (OSError, psutil.Error):
            continue
    return found


def driver_env(driver: str) -> dict[str, str]:
    """The environment that picks the conformance suite's ``driver`` in a webhand process a test starts
    (Firefox is a browser setting, not a Chromium driver)."""
    return {"WEBHAND_DRIVER": driver}


class Cli:
    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.runtime = tmp_path / "run"
        self.runtime.mkdir(mode=0o700)
        self.env = {**os.environ, "XDG_RUNTIME_DIR": str(self.runtime), "WEBHAND_OUTPUT_DIR": str(tmp_path / "out"),
                    "WEBHAND_WARM_RESERVE": "false", **env}
        self.env.pop("WEBHAND_SESSION", None)

    def __call__(self, *args: str, check: bool = True, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "webhand", *args], env={**self.env, **(env or {})},
                              capture_output=True, text=True, timeout=CLI_TIMEOUT, stdin=subprocess.DEVNULL, cwd=cwd)
        if check:
            assert done.returncode == 0, f"webhand {' '.join(args)} failed: {done.stderr}"
        return done

    def status(self) -> dict:
        return json.loads(self("daemon", "status", "--json").stdout)

    def processes(self) -> list[psutil.Process]:
        """The daemon and the browsers it launched (their process groups, from its PID registry),
        read from files so that looking does not count as activity for the daemon."""
        daemon = int((self.runtime / "webhand" / "daemon.lock").read_text())
        found = [psutil.Process(daemon)]
        for file in (self.runtime / "webhand" / "browsers").glob("*.json"):
            entry = json.loads(file.read_text())
            if entry.get("owner_pid") == daemon:
                found += [p for p in psutil.process_iter() if _group_of(p) == entry["pid"]]
        return found


def _group_of(process: psutil.Process) -> int | None:
    try:
        return os.getpgid(process.pid)
    except (ProcessLookupError, psutil.NoSuchProcess):
        return None


def ok(reply) -> str:
    """A tool reply's text, once the test has checked it is not an error."""
    assert not reply.is_error, reply.text
    return reply.text


def ref_of(snapshot: str, label: str) -> str:
    return re.search(re.escape(label) + r" \[(e\d+)\]", snapshot).group(1)


async def open_page(tools, url: str) -> str:
    """Navigate, then snapshot: the snapshot's text."""
    reply = await tools.call("browser_navigate", {"url": url})
    assert not reply.is_error, reply.text
    shot = await tools.call("browser_snapshot", {})
    assert not shot.is_error, shot.text
    return shot.text
