"""The per-user background daemon that keeps browser sessions alive between CLI calls.

It listens on a Unix socket in the user's runtime dir (a 0700 dir; the socket is 0600 and the
peer's uid is checked), speaks one JSON object per line, and exits after ``idle_timeout``
seconds without a request, on SIGTERM/SIGINT or on ``stop``; each way out closes every browser.
A lock file makes sure one daemon runs per runtime dir even when two CLI calls race to start it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import json
import logging
import os
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

from webhand import __version__
from webhand.caller import NO_CALLER, Caller, ProgressSink
from webhand.config import Settings
from webhand.engine.launch.subreaper import adopt_orphans
from webhand.errors import WebhandError
from webhand.host import Webhand
from webhand.security.locations import runtime_dir
from webhand.response import URL_LIMIT, ToolResult, page_line
from webhand.security.masking import Masker
from webhand.session.manager import SessionInfo
from webhand.surfaces.cli.daemon_client import socket_path
from webhand.surfaces.cli.daemon_wire import MAX_LINE_BYTES

log = logging.getLogger("webhand")

def lock_path() -> Path:
    return runtime_dir() / "daemon.lock"


def result_to_wire(result: ToolResult) -> dict[str, Any]:
    return {"text": result.text, "is_error": result.is_error, "data": result.data, "files": result.files,
            "images": [{"path": i.path, "mime_type": i.mime_type, "sent_path": i.sent_path} for i in result.images]}


def conversation_of(session: str | None) -> str:
    """Each ``--session NAME`` of the CLI is its own conversation, fully isolated from the others."""
    return f"cli:{session or 'default'}"


class Daemon:
    def __init__(self, settings: Settings, origin: dict[str, str] | None = None) -> None:
        self.settings = settings
        self.running = running_settings(settings, origin or {})  # what a call's asked settings are compared with
        # The CLI names the tool it wants, so every capability group is served; config still
        # switches tools off (e.g. evaluate_enabled = false).
        self.webhand = Webhand(settings, capabilities=["all"])
        self.stopping = asyncio.Event()
        self.activity = asyncio.Event()
        self.started = time.time()
        self.requests = 0
        self.busy = 0
        self.dashboard: Any = None  # surfaces/dashboard.DashboardServer, once `webhand dashboard` asked

    async def run(self, ready: Any = None) -> int:
        lock = _acquire_lock()
        if lock is None:
            _announce(ready, "already-running")
            return 0
        path = socket_path()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # we hold the lock, so a socket file left here is stale
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self.stopping.set)
        try:
            async with self.webhand:
                server = await asyncio.start_unix_server(self._serve_client, path=str(path), limit=MAX_LINE_BYTES)
                os.chmod(path, 0o600)
                _announce(ready, f"ready {os.getpid()}")
                async with server:
                    watcher = asyncio.create_task(self._exit_when_idle())
                    await self.stopping.wait()
                    watcher.cancel()
                    server.close()
                    if self.dashboard is not None:
                        await self.dashboard.stop()
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            os.close(lock)
        return 0

    async def _exit_when_idle(self) -> None:
        """Stop after ``idle_timeout`` seconds with no request: wait for activity, capped."""
        while not self.stopping.is_set():
            self.activity.clear()
            try:
                await asyncio.wait_for(self.activity.wait(), timeout=self.settings.idle_timeout)
            except TimeoutError:
                if self.busy == 0:
                    log.info("daemon idle for %.0f s: exiting", self.settings.idle_timeout)
                    self.stopping.set()

    async def _serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if not _same_user(writer):
                return
            while line := await reader.readline():
                self.activity.set()
                self.busy += 1
                try:
                    reply = await self._handle(line, self._progress_to(writer))
                finally:
                    self.busy -= 1
                    self.activity.set()
                writer.write(json.dumps(reply, default=str).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass  # the client went away or sent garbage; it alone is affected
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    @staticmethod
    def _progress_to(writer: asyncio.StreamWriter) -> ProgressSink:
        """Progress lines to the CLI, before its reply (``daemon_client`` shows them on a terminal)."""
        async def send(elapsed: float, message: str) -> None:
            writer.write(json.dumps({"progress": round(elapsed, 1), "message": message}).encode() + b"\n")
            await writer.drain()

        return send

    async def _handle(self, line: bytes, progress: ProgressSink | None = None) -> dict[str, Any]:
        try:
            request = json.loads(line)
            op = request.get("op")
        except (ValueError, AttributeError):
            return {"ok": False, "error": "The request is not a JSON object. Send one JSON object per line."}
        self.requests += 1
        caller = Caller(progress=progress) if request.get("progress") is True and progress is not None else NO_CALLER
        if op == "call":
            return await self._call(request.get("session"), str(request.get("tool")), request.get("arguments") or {},
                                    request.get("origin"), caller, request.get("cwd"))
        if op == "argv":
            return await self._command_line(request, caller)
        if op == "status":
            try:
                return {"ok": True, "status": self.status()}
            except WebhandError as error:  # the secrets file went away: nothing unmasked is printed
                return {"ok": False, "error": str(error)}
        if op == "history":  # every recorded call of a CLI session, for `webhand export`
            session = self.webhand.sessions.find(conversation_of(request.get("session")))
            if session is None:
                return {"ok": False, "error": f"No CLI session {request.get('session')!r} is open in the daemon."}
            try:  # recorded masked; masked again with the secrets file as it is now
                return {"ok": True, "entries": Masker(self.settings.secrets_file).data(session.history.all())}
            except WebhandError as error:
                return {"ok": False, "error": str(error)}
        if op == "dashboard":
            try:
                return {"ok": True, "url": await self._dashboard(request.get("port"))}
            except (WebhandError, ValueError, TypeError) as error:  # a port in use, or not a number
                return {"ok": False, "error": str(error)}
        if op == "stop":
            self.stopping.set()
            return {"ok": True, "pid": os.getpid()}  # the CLI waits for this pid to exit
        return {"ok": False, "error": f"Unknown op {op!r}. Use call, argv, status, history, dashboard or stop."}

    async def _call(self, session: Any, tool: str, arguments: dict[str, Any], asked: Any,
                    caller: Caller = NO_CALLER, cwd: Any = None) -> dict[str, Any]:
        if session:  # the CLI's --session NAME is a conversation whose default session replies name so
            caller = dataclasses.replace(caller, session_name=str(session))
        if isinstance(cwd, str) and os.path.isabs(cwd):  # the command's folder: its files are the user's
            caller = dataclasses.replace(caller, working_folder=cwd)
        result = await self.webhand.conversation(conversation_of(session)).call(tool, arguments, caller)
        reply: dict[str, Any] = {"ok": True, "result": result_to_wire(result)}
        warning = settings_difference(self.running, asked if isinstance(asked, dict) else {})
        if warning:
            reply["warning"] = warning
        return reply

    async def _command_line(self, request: dict[str, Any], caller: Caller = NO_CALLER) -> dict[str, Any]:
        """A tool command as typed (the thin client, ``forward``): parsed here, where the parser
        is already loaded, in the caller's directory and environment; the reply is what to print."""
        from webhand.surfaces.cli.tools import CommandLineError, parse_forwarded, render_reply

        argv, cwd, env = request.get("argv"), request.get("cwd"), request.get("env") or {}
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and isinstance(cwd, str)
                and isinstance(env, dict)):
            return {"ok": False, "error": "An argv request needs argv (a list of strings), cwd and env."}
        try:
            call = parse_forwarded(argv, cwd, {str(k): str(v) for k, v in env.items()})
        except CommandLineError as error:
            return {"ok": True, "handled": True, "exit": 2, "stdout": "", "stderr": str(error)}
        except WebhandError as error:  # e.g. a --config file that does not exist
            return {"ok": True, "handled": True, "exit": 1, "stdout": "", "stderr": f"webhand: {error}\n"}
        if call is None:
            return {"ok": True, "handled": False}
        out, err, code = render_reply(call.json, await self._call(call.session, call.tool, call.arguments, call.origin,
                                                                       caller, cwd))
        return {"ok": True, "handled": True, "exit": code, "stdout": out, "stderr": err}

    async def _dashboard(self, port: Any) -> str:
        """Serve the dashboard on loopback (started on the first request, then the same one), behind
        the user's token: any local user can reach a loopback port, only this user the socket."""
        from webhand.surfaces.dashboard import DashboardServer, link, user_token
        from webhand.surfaces.http_security import HttpOptions

        token = user_token(runtime_dir())
        if self.dashboard is None:
            server = DashboardServer(self.webhand, HttpOptions(host="127.0.0.1", port=int(port or 0), token=token,
                                                               require_token=True))
            await server.start()
            self.dashboard = server
        return link(self.dashboard.url, token=token)

    def _control(self, info: SessionInfo) -> dict[str, Any] | None:
        """Who holds the session's control in the dashboard, since when, and how it ends; None: nobody."""
        session = self.webhand.sessions.by_public_id(info.public_id)
        status = session.control.status() if session is not None else None
        if status is not None and session is not None:
            status["release"] = session.control.how_to_release(session.dashboard_link())
        return status

    def status(self) -> dict[str, Any]:
        sessions = self.webhand.sessions.list()
        masker = Masker(self.settings.secrets_file)
        return {"pid": os.getpid(), "version": __version__, "socket": str(socket_path()),
                "uptime_seconds": round(time.time() - self.started), "idle_timeout": self.settings.idle_timeout,
                "requests": self.requests, "settings": self.running,
                # A page's URL may hold a secret typed into a GET form, and be megabytes long.
                "sessions": [{"session": s.conversation.removeprefix("cli:"),
                              "url": page_line(masker.text(s.url), URL_LIMIT, "browser_get_url in the session reads it"),
                              "tabs": s.tabs, "idle_seconds": s.idle_seconds, "control": self._control(s)}
                             for s in sessions],
                "browser_pids": self.webhand.sessions.browser_pids()}


def _acquire_lock() -> int | None:
    fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.set_inheritable(fd, False)  # browsers the daemon starts must not hold the lock after it dies
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())  # who holds it, for `ps`-less debugging and tests
    return fd


def _same_user(writer: asyncio.StreamWriter) -> bool:
    """The socket is 0600 in a 0700 dir; checking the peer's uid too costs nothing."""
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return True
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return uid == os.getuid()


def _announce(ready: Any, message: str) -> None:
    """Tell the CLI that started us (a pipe on stdout) that we are ready, then let go of the pipe."""
    if ready is None:
        return
    ready.write(message + "\n")
    ready.flush()
    ready.close()


def running_settings(settings: Settings, origin: dict[str, str]) -> dict[str, str]:
    """The daemon's own settings, in the terms a command asks for them (``tools.settings_origin``):
    its config file and agent as it was started, its profile, browser and window as they are."""
    return {"config": origin.get("config", ""), "agent": origin.get("agent", ""), "profile": settings.profile or "",
            "browser": settings.browser, "window": "headless" if settings.headless else "shown",
            "storage_state": str(settings.storage_state or ""), "timeout": f"{settings.timeout:g}"}


def settings_difference(running: dict[str, str], asked: dict[str, str]) -> str:
    """A warning when a command asked for a setting the running daemon does not have; "" when every
    setting it named is the daemon's (naming none is asking for none)."""
    differ = [key for key, value in asked.items() if key in running and running[key] != str(value)]
    if not differ:
        return ""
    have = ", ".join(_setting(key, running[key]) for key in differ)
    want = ", ".join(_setting(key, str(asked[key])) for key in differ)
    return (f"this command asked for {want}, but the running daemon has {have} (settings apply when the daemon "
            "starts); run `webhand daemon stop`, then the command again, to use yours.")


def _setting(key: str, value: str) -> str:
    if key == "window":
        return "a visible window" if value == "shown" else "a headless browser"
    if key == "browser":
        return value
    if key == "timeout":
        return f"a {value} s timeout"
    said = {"config": "config file", "storage_state": "storage state"}.get(key, key)
    return f"{said} {value}" if value else f"no {said}"


def run_daemon(settings: Settings, *, announce: bool = True, origin: dict[str, str] | None = None) -> int:
    """Run in the foreground (``webhand daemon run``); the CLI starts it detached."""
    adopt_orphans()  # the daemon owns its process: reap the browsers' orphans (engine/launch/subreaper.py)
    ready = None
    if announce:
        ready = os.fdopen(os.dup(sys.stdout.fileno()), "w")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # nothing else may write to the CLI's pipe
        os.close(devnull)
    return asyncio.run(Daemon(settings, origin).run(ready))
