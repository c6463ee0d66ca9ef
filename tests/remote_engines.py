"""Remote browser engines started here, on 127.0.0.1, the way users run them elsewhere.

- ``PlaywrightServer``: Playwright's own browser server (``launch-server``, what the official
  container image runs), through the Playwright package's bundled driver, with our Chromium.
- ``DebuggingChrome``: a Chromium started with ``--remote-debugging-port``, as a user starts
  their own browser for webhand to attach to.
- ``HeaderCheckingProxy``: a loopback TCP proxy in front of an endpoint that refuses (401) any
  connection whose upgrade request lacks the expected Authorization header.
- ``SilentProxy``: a loopback TCP proxy that can be cut silently: it then forwards nothing, in
  either direction, and closes nothing (a network partition that drops packets).

Each is ended by the pid this test started (its own process group), never by name. Each runs with
a private TMPDIR, removed when it is ended, so that Chromium's singleton folders
(``org.chromium.Chromium.*``) and Playwright's temporary profiles do not pile up in /tmp. It is a
short folder of its own rather than one under the test's tmp_path: Chromium puts a Unix socket
in it, and a socket's path must stay under 108 bytes.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import playwright
import psutil

from webhand.engine.launch.chrome import find_chromium, launch_flags

_DRIVER = Path(playwright.__file__).parent / "driver"


def _first_line_matching(stream, needle: str, timeout: float) -> str:
    """The first line of ``stream`` containing ``needle``, read in a thread so the wait is capped."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    while True:
        line = lines.get(timeout=timeout)
        if not line or needle in line:
            return line.strip()


class StandIn:
    """A stand-in endpoint this test started (a process and its descendants)."""

    process: subprocess.Popen[str]
    tmp: str = ""

    def _private_tmp(self) -> dict[str, str]:
        """The environment of a stand-in, with a TMPDIR of its own (owner-only; ``kill`` removes it)."""
        self.tmp = tempfile.mkdtemp(prefix="standin-")
        return {**os.environ, "TMPDIR": self.tmp}

    @property
    def pid(self) -> int:
        return self.process.pid

    def processes(self) -> list[psutil.Process]:
        """The process we started and its descendants (Playwright starts its Chromium in a group of
        its own, so the process group alone would miss the browser)."""
        try:
            root = psutil.Process(self.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def alive(self) -> bool:
        return self.process.poll() is None

    def browser_groups(self) -> set[int]:
        """The process groups of the Chromium this stand-in runs (not a Playwright server's own)."""
        groups = set()
        for member in self.processes():
            try:
                if "chrom" in member.name().lower():
                    groups.add(os.getpgid(member.pid))
            except (ProcessLookupError, psutil.NoSuchProcess):
                continue
        return groups

    def freeze(self) -> None:
        """SIGSTOP the browser's process groups: it stops answering, and its sockets stay open."""
        self._frozen = self.browser_groups()
        assert self._frozen, "no browser process to freeze"
        for group in self._frozen:
            os.killpg(group, signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT what ``freeze`` stopped (safe when nothing was, or it is gone)."""
        for group in getattr(self, "_frozen", set()):
            try:
                os.killpg(group, signal.SIGCONT)
            except ProcessLookupError:
                continue
        self._frozen = set()

    def kill(self) -> None:
        """SIGKILL the process this test started and the groups of its descendants, and wait."""
        self._kill(with_root=True)

    def kill_descendants(self) -> None:
        """SIGKILL only what the started process started (a server's browser), and wait: the
        server itself lives on and tells its clients that its browser closed."""
        self._kill(with_root=False)

    def _kill(self, *, with_root: bool) -> None:
        everything = self.processes()
        members = everything if with_root else everything[1:]
        groups = {self.pid} if with_root else set()
        for member in members:
            try:
                group = os.getpgid(member.pid)
                if group == self.pid and not with_root:
                    member.kill()  # in the server's own group: that group must live on
                else:
                    groups.add(group)
            except (ProcessLookupError, psutil.NoSuchProcess):
                continue
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                continue
        if with_root:
            self.process.wait(timeout=10)
        psutil.wait_procs(members, timeout=10)
        if with_root and self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


class PlaywrightServer(StandIn):
    def __init__(self, config_dir: Path, port: int = 0) -> None:
        port = port or free_port()
        config = config_dir / f"launch-server-{port}.json"
        config.write_text(json.dumps({"executablePath": find_chromium(), "headless": True, "port": port,
                                      "host": "127.0.0.1", "wsPath": "/playwright"}))
        self.port = port
        self.process = subprocess.Popen([str(_DRIVER / "node"), str(_DRIVER / "package" / "cli.js"), "launch-server",
                                         "--browser", "chromium", "--config", str(config)],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                        start_new_session=True, env=self._private_tmp())
        assert self.process.stdout is not None
        self.url = _first_line_matching(self.process.stdout, "ws://", timeout=60)
        assert self.url.startswith("ws://"), "the Playwright server did not announce its endpoint"


class DebuggingChrome(StandIn):
    def __init__(self, profile: Path, url: str = "about:blank") -> None:
        # As a user's browser: a window with one start page (webhand's own launches open none).
        flags = [flag for flag in launch_flags(str(profile)) if flag not in ("about:blank", "--no-startup-window")]
        self.process = subprocess.Popen([find_chromium(), *flags, url],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True, env=self._private_tmp())
        assert self.process.stderr is not None
        line = _first_line_matching(self.process.stderr, "DevTools listening on", timeout=60)
        self.ws_url = line.split("listening on ", 1)[1].strip()
        self.http_url = "http://" + self.ws_url.split("/")[2]

    def pages(self) -> list[dict[str, str]]:
        with urllib.request.urlopen(self.http_url + "/json/list", timeout=10) as reply:
            return [t for t in json.load(reply) if t["type"] == "page"]

    def page_urls(self) -> list[str]:
        return [page["url"] for page in self.pages()]

    def wait_for_title(self, title: str, timeout: float = 30) -> None:
        """Until a tab shows ``title`` (its start page has loaded): polled, capped."""
        deadline = time.monotonic() + timeout
        while not any(page["title"] == title for page in self.pages()):
            assert time.monotonic() < deadline, f"no tab titled {title!r} within {timeout:g} s"
            time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class HeaderCheckingProxy:
    """Forwards connections to ``target_port`` only when the request carries ``authorization``."""

    def __init__(self, target_port: int, authorization: str) -> None:
        self.target_port = target_port
        self.authorization = authorization
        self.accepted = 0
        self.refused = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._open: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            self._open.append(client)
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(65536)
            if not chunk:
                client.close()
                return
            head += chunk
        lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        if headers.get("authorization") != self.authorization:
            self.refused += 1
            client.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            client.close()
            return
        self.accepted += 1
        upstream = socket.create_connection(("127.0.0.1", self.target_port))
        self._open.append(upstream)
        upstream.sendall(head)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)

    def close(self) -> None:
        self._server.close()
        for sock in self._open:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class SilentProxy:
    """Forwards every connection to ``target_port`` until ``cut``: from then on it reads and drops
    whatever either side sends, and closes nothing, so neither side hears of the cut. A
    connection that comes after the cut is accepted and answered never."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.cut_off = threading.Event()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._open: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def cut(self) -> None:
        self.cut_off.set()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            self._open.append(client)
            if self.cut_off.is_set():
                threading.Thread(target=self._drop, args=(client,), daemon=True).start()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self._open.append(upstream)
            threading.Thread(target=self._forward, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._forward, args=(upstream, client), daemon=True).start()

    def _forward(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                if not self.cut_off.is_set():
                    sink.sendall(chunk)
        except OSError:
            return

    @staticmethod
    def _drop(source: socket.socket) -> None:
        try:
            while source.recv(65536):
                pass
        except OSError:
            return

    def close(self) -> None:
        self._server.close()
        for sock in self._open:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
