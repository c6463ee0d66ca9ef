"""Every server in the bench behind one interface, driven through the official MCP Python client.

``specs()`` names the servers: webhand (``webhand mcp``), Playwright MCP (default, and with its
settle wait at 0), Chrome DevTools MCP and agent-browser (``agent-browser mcp``), all headless,
isolated and on the same Chromium binary. ``McpServer`` starts one over stdio in a task of its own (so servers can be stopped in any
order), times each call from the client's side, and maps the bench's steps (navigate, snapshot,
click, type, press a key) onto that server's tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

import psutil
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import measure

BENCH = Path(__file__).resolve().parent
NODE_BIN = BENCH / "node_modules" / ".bin"
CALL_TIMEOUT = 120.0


@dataclass
class Spec:
    key: str            # short id used in the results
    label: str          # what the report prints
    kind: str           # webhand | playwright | devtools | agent-browser
    command: str
    args: list[str]
    version: str = ""
    env: dict[str, str] = field(default_factory=dict)
    note: str = ""


@dataclass
class Reply:
    text: str            # what the model reads
    seconds: float
    is_error: bool
    content: str = ""    # for snapshots: the snapshot itself (read back from a file when it went to one)

    @property
    def ms(self) -> float:
        return measure.ms(self.seconds)


def _npm_version(package: str) -> str:
    try:
        return json.loads((BENCH / "node_modules" / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return ""


def _no_sandbox() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0  # Chromium refuses its sandbox as root


def webhand_spec(chrome: str, *, key: str = "webhand", label: str = "webhand", extra: list[str] | None = None,
                 source: str | None = None) -> Spec:
    """webhand's MCP server; from ``source`` (another checkout's ``src`` folder) instead of this one's
    when given: the baseline of a before/after comparison in one run (``bench/run.py --baseline``)."""
    import webhand

    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    if source is not None:
        env["PYTHONPATH"] = source
    return Spec(key, label, "webhand", sys.executable, ["-m", "webhand", "mcp", "--chrome", chrome, *(extra or [])],
                webhand.__version__, env)


#: Firefox's launch cap in the bench: a cold start takes 10-30 s on a loaded 2-core machine, over the
#: default 30 s at times (docs/design.md, "The Firefox driver").
FIREFOX_LAUNCH_TIMEOUT = 120


def firefox_spec() -> Spec | None:
    """webhand on Firefox (the WebDriver BiDi driver, Debian's stock firefox-esr): the Firefox column.
    None when no Firefox is installed (scripts/ensure-firefox installs it)."""
    import webhand
    from webhand.engine.bidi.firefox import find_firefox
    from webhand.errors import WebhandError

    try:
        find_firefox()
    except WebhandError:
        return None
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    env["WEBHAND_LAUNCH_TIMEOUT"] = str(FIREFOX_LAUNCH_TIMEOUT)
    return Spec("webhand-ff", "webhand (Firefox)", "webhand", sys.executable,
                ["-m", "webhand", "mcp", "--browser", "firefox"], webhand.__version__, env,
                note=f"the Firefox driver (WebDriver BiDi) on firefox-esr; launch_timeout {FIREFOX_LAUNCH_TIMEOUT} s "
                     "(a cold start on a loaded machine)")


def specs(chrome: str, *, baseline: str | None = None) -> list[Spec]:
    """The servers compared in the latency and snapshot suites, webhand first (on Firefox too, when installed).
    ``baseline``: another checkout's ``src`` folder, served second as ``webhand-baseline`` (a before/after
    comparison of webhand's own code, on the same machine in the same run)."""
    out = [webhand_spec(chrome)]
    if baseline is not None:
        out.append(webhand_spec(chrome, key="webhand-baseline", label=f"webhand (baseline {baseline})", source=baseline))
    out.append(webhand_spec(chrome, key="webhand-pw", label="webhand (Playwright driver)", extra=["--driver", "playwright"]))
    firefox = firefox_spec()
    if firefox is not None:
        out.append(firefox)
    playwright = str(NODE_BIN / "playwright-mcp")
    pw_args = ["--headless", "--isolated", "--executable-path", chrome, "--viewport-size", "1280x720"]
    pw_args += ["--no-sandbox"] if _no_sandbox() else []
    version = _npm_version("@playwright/mcp")
    out.append(Spec("playwright", "Playwright MCP", "playwright", playwright, pw_args, version))
    out.append(Spec("playwright-settle0", "Playwright MCP (settle 0)", "playwright", playwright,
                    pw_args + ["--timeout-settle", "0"], version, note="--timeout-settle 0: the floor without its fixed settle wait"))
    cdt_args = ["--headless", "--isolated", "--executablePath", chrome, "--viewport", "1280x720",
                "--no-usage-statistics", "--no-performance-crux"]
    cdt_args += ["--chromeArg=--no-sandbox"] if _no_sandbox() else []
    out.append(Spec("devtools", "Chrome DevTools MCP", "devtools", str(NODE_BIN / "chrome-devtools-mcp"), cdt_args,
                    _npm_version("chrome-devtools-mcp")))
    out.append(agent_browser_spec(chrome))
    return out


def agent_browser_binary() -> Path:
    """agent-browser's native client, which ships inside its npm package (one binary per platform);
    the package's node wrapper (``.bin/agent-browser``) only finds and runs it."""
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform, sys.platform)
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(os.uname().machine.lower(), "")
    return BENCH / "node_modules" / "agent-browser" / "bin" / f"agent-browser-{system}-{machine}"


def agent_browser_spec(chrome: str) -> Spec:
    """agent-browser's MCP server. It starts a daemon of its own (detached: it outlives the MCP
    process) that launches Chromium headless at 1280x720; ``AgentBrowserServer`` ends both."""
    return Spec("agent-browser", "agent-browser MCP", "agent-browser", str(agent_browser_binary()), ["mcp"],
                _npm_version("agent-browser"), {"AGENT_BROWSER_EXECUTABLE_PATH": chrome},
                note="its own daemon and Chromium, ended by PID at the end")


def unavailable(spec: Spec) -> str | None:
    """Why this server cannot run here, or None."""
    if spec.kind != "webhand" and not Path(spec.command).exists():
        return f"{spec.command} is missing: run `npm ci` in bench/"
    if spec.kind == "agent-browser" and not os.access(spec.command, os.X_OK):
        return f"{spec.command} is not executable (npm ci ran without its postinstall): chmod +x it"
    return None


class McpServer:
    """One MCP server over stdio, owned by a task of its own."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.pid: int | None = None
        self.session: ClientSession | None = None
        self.page_id: int | None = None  # Chrome DevTools MCP routes page tools by page id
        self._workdir = tempfile.mkdtemp(prefix=f"bench-{spec.key}-")
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._error: BaseException | None = None
        self._errlog = open(Path(self._workdir) / "stderr.log", "w")  # noqa: SIM115 - closed in stop()

    # -- life ----------------------------------------------------------------------------------
    async def start(self, timeout: float = 60.0) -> float:
        """Spawn and initialize; returns the seconds it took. Start servers one at a time (pid lookup)."""
        before = {p.pid for p in measure.descendants()}
        started = measure.now()
        self._task = asyncio.create_task(self._own(), name=f"mcp-{self.spec.key}")
        waiter = asyncio.create_task(self._ready.wait())
        await asyncio.wait({waiter, self._task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if not self._ready.is_set():
            await self.stop()
            raise RuntimeError(f"{self.spec.label} did not start: {self._error or 'timed out'}; {self.stderr_tail()}")
        elapsed = measure.now() - started
        new = [p for p in measure.descendants() if p.pid not in before and p.ppid() == os.getpid()]
        self.pid = new[0].pid if new else None
        return elapsed

    async def _own(self) -> None:
        env = {"WEBHAND_OUTPUT_DIR": str(Path(self._workdir) / "out"), **self.spec.env}
        env.update({k: v for k, v in os.environ.items() if k == "WEBHAND_BENCH_RUN_ID"})  # the leak check finds it
        params = StdioServerParameters(command=self.spec.command, args=self.spec.args, env=env, cwd=self._workdir)
        try:
            async with stdio_client(params, errlog=self._errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    self.session = session
                    self._ready.set()
                    await self._stop.wait()
        except BaseException as error:  # noqa: BLE001 - reported by start()
            self._error = error
        finally:
            self.session = None

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 30)
            except (asyncio.TimeoutError, Exception):  # noqa: BLE001
                self._task.cancel()
        self._errlog.close()
        shutil.rmtree(self._workdir, ignore_errors=True)  # its stderr, snapshots and outputs

    def stderr_tail(self, lines: int = 5) -> str:
        try:
            return " | ".join((Path(self._workdir) / "stderr.log").read_text().strip().splitlines()[-lines:])
        except OSError:
            return ""

    def memory(self) -> dict[str, float | int]:
        """PSS of this server's browser processes and of the server process itself, in MB."""
        browsers, count = measure.browser_pss_mb(self.pid) if self.pid else (0.0, 0)
        server = measure.pss_mb([p for p in measure.descendants() if p.pid == self.pid]) if self.pid else 0.0
        return {"browser_pss_mb": browsers, "browser_processes": count, "server_pss_mb": server}

    # -- raw calls -----------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict, timeout: float = CALL_TIMEOUT) -> Reply:
        assert self.session is not None, "server not started"
        started = measure.now()
        try:
            result = await asyncio.wait_for(self.session.call_tool(tool, arguments), timeout)
        except asyncio.TimeoutError:
            return Reply(f"timed out after {timeout:g} s", measure.now() - started, True)
        elapsed = measure.now() - started
        text = "\n".join(getattr(block, "text", "") for block in result.content if getattr(block, "type", "") == "text")
        return Reply(text, elapsed, bool(result.is_error), text)

    async def list_tools_json(self) -> tuple[str, str]:
        """The tools/list result as JSON, and just what a host hands a model (name, description, schema)."""
        assert self.session is not None
        listing = await self.session.list_tools()
        whole = listing.model_dump_json(by_alias=True, exclude_none=True)
        model = json.dumps([{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                            for t in listing.tools], separators=(",", ":"))
        return whole, model

    async def tool_names(self) -> list[str]:
        assert self.session is not None
        return [t.name for t in (await self.session.list_tools()).tools]

    # -- the bench's steps ---------------------------------------------------------------------
    async def navigate(self, url: str) -> Reply:
        if self.spec.kind == "devtools":
            return await self.call("navigate_page", {"pageId": await self._page(), "type": "url", "url": url})
        return await self.call("browser_navigate", {"url": url})

    async def snapshot(self, full: bool = False) -> Reply:
        if self.spec.kind == "webhand":
            reply = await self.call("browser_snapshot", {"mode": "full" if full else "interactive"})
            saved = re.search(r"saved to (\S+?\.txt)\.", reply.text)
            if saved and Path(saved.group(1)).exists():
                reply.content = Path(saved.group(1)).read_text()
            return reply
        if self.spec.kind == "devtools":
            return await self.call("take_snapshot", {"pageId": await self._page(), **({"verbose": True} if full else {})})
        return await self.call("browser_snapshot", {})

    async def click(self, ref: str) -> Reply:
        if self.spec.kind == "devtools":
            return await self.call("click", {"pageId": await self._page(), "uid": ref})
        key = "ref" if self.spec.kind == "webhand" else "target"
        return await self.call("browser_click", {key: ref})

    async def type(self, ref: str, text: str) -> Reply:
        if self.spec.kind == "devtools":
            return await self.call("fill", {"pageId": await self._page(), "uid": ref, "value": text})
        key = "ref" if self.spec.kind == "webhand" else "target"
        return await self.call("browser_type", {key: ref, "text": text})

    async def press_key(self, key: str) -> Reply:
        if self.spec.kind == "devtools":
            return await self.call("press_key", {"pageId": await self._page(), "key": key})
        return await self.call("browser_press_key", {"key": key})

    async def current_url(self) -> str | None:
        """The page's URL by the server's cheapest call, where it has one the bench uses (else None)."""
        return None

    async def has_tool(self, name: str) -> bool:
        return name in await self.tool_names()

    async def _page(self) -> int:
        if self.page_id is None:
            reply = await self.call("list_pages", {})
            found = re.search(r"^(\d+): .*\[selected\]", reply.text, re.M) or re.search(r"^(\d+):", reply.text, re.M)
            self.page_id = int(found.group(1)) if found else 1
        return self.page_id

    def find_ref(self, snapshot: str, role: str, name: str) -> str | None:
        """The ref this server gave the element with ``role`` and accessible name ``name``."""
        quoted = re.escape(f'{role} "{name}')
        patterns = {"webhand": rf'{quoted}[^\n]*?\[((?:f\d+)?e\d+)\]',
                    "playwright": rf'{quoted}[^\n]*?\[ref=((?:f\d+)?e\d+)\]',
                    "devtools": rf'uid=(\S+) {quoted}',
                    "agent-browser": rf'{quoted}[^\n]*?\[(?:[^\]]*?, )?ref=(e\d+)\]'}
        found = re.search(patterns[self.spec.kind], snapshot)
        return found.group(1) if found else None


class AgentBrowserServer(McpServer):
    """agent-browser's MCP server and the daemon it starts. The daemon detaches (a new session,
    parent init) and outlives the MCP process, so it is given a runtime folder of its own
    (``XDG_RUNTIME_DIR``: its socket and PID file go there), found by its PID file, measured from
    there, and ended by PID at the end: first as its own tool asks (close all), then SIGTERM,
    then SIGKILL for whatever of it (daemon, Chromium) still runs."""

    def __init__(self, spec: Spec) -> None:
        super().__init__(spec)
        self.runtime = Path(self._workdir) / "run"
        self.runtime.mkdir(mode=0o700)
        self.spec = Spec(**{**spec.__dict__, "env": {**spec.env, "XDG_RUNTIME_DIR": str(self.runtime)}})

    def daemon_pids(self) -> list[int]:
        pids = []
        for file in (self.runtime / "agent-browser").glob("*.pid"):
            try:
                pids.append(int(file.read_text().strip()))
            except (OSError, ValueError):
                continue
        return pids

    def daemon_processes(self) -> list[psutil.Process]:
        """Its daemons and everything below them (Chromium), alive."""
        found = []
        for pid in self.daemon_pids():
            try:
                daemon = psutil.Process(pid)
                found += [daemon, *daemon.children(recursive=True)]
            except psutil.Error:
                continue
        return [p for p in found if _alive(p)]

    def memory(self) -> dict[str, float | int]:
        browsers = [p for p in self.daemon_processes() if measure.is_browser(p) and "crashpad" not in p.name().lower()]
        daemons = [p for p in self.daemon_processes() if p.pid in self.daemon_pids()]
        server = measure.pss_mb([p for p in measure.descendants() if p.pid == self.pid]) if self.pid else 0.0
        return {"browser_pss_mb": measure.pss_mb(browsers), "browser_processes": len(browsers),
                "server_pss_mb": round(server + measure.pss_mb(daemons), 1)}

    async def stop(self) -> None:
        if self.session is not None:
            await self.call("agent_browser_close", {"all": True}, timeout=30)
        left = self.daemon_processes()
        _gone, alive = await asyncio.to_thread(psutil.wait_procs, left, 10)
        for process in alive:  # the daemon first: it closes its Chromium on SIGTERM
            with contextlib.suppress(psutil.Error):
                process.terminate()
        _gone, alive = await asyncio.to_thread(psutil.wait_procs, alive, 10)
        for process in alive:
            with contextlib.suppress(psutil.Error):
                process.kill()
        await super().stop()

    # -- the bench's steps: agent-browser's tools, refs as @eN -------------------------------------
    async def navigate(self, url: str) -> Reply:
        return await self.call("agent_browser_open", {"url": url})

    async def snapshot(self, full: bool = False) -> Reply:
        # Its default lists interactive elements only (with headings), none of the page's text;
        # interactive=false is the whole tree.
        return await self.call("agent_browser_snapshot", {"interactive": not full})

    async def click(self, ref: str) -> Reply:
        return await self.call("agent_browser_click", {"selector": f"@{ref}"})

    async def type(self, ref: str, text: str) -> Reply:
        return await self.call("agent_browser_fill", {"selector": f"@{ref}", "text": text})

    async def press_key(self, key: str) -> Reply:
        return await self.call("agent_browser_press", {"key": key})

    async def current_url(self) -> str | None:
        reply = await self.call("agent_browser_get_url", {})
        return None if reply.is_error else reply.text


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def server_for(spec: Spec) -> McpServer:
    """The client object that drives ``spec``'s server."""
    return AgentBrowserServer(spec) if spec.kind == "agent-browser" else McpServer(spec)


class InProcessWebhand(McpServer):
    """webhand's Python API behind the same steps as an MCP server: the actions scenario runs it
    on the same pages, in the same rounds, so the gap between a reply over MCP and the same call
    with no MCP in between is measured like for like (the issue's "any gap over 5 ms is ours")."""

    def __init__(self, chrome: str) -> None:
        super().__init__(Spec("webhand-api", "webhand (Python API)", "webhand", "", [], _webhand_version()))
        self._chrome = chrome
        self._host: Any = None
        self._context: Any = None

    async def start(self, timeout: float = 60.0) -> float:
        from webhand import Settings, Webhand

        started = measure.now()
        # The settings `webhand mcp` runs a stdio conversation with: its default isolation, no reserve.
        settings = Settings.from_sources({"executable_path": self._chrome, "warm_reserve": False,
                                          "output_dir": str(Path(self._workdir) / "out")}, env={})
        self._host = await Webhand(settings).start()
        self._context = self._host.context("bench-api")
        self.pid = os.getpid()
        return measure.now() - started

    async def stop(self) -> None:
        if self._host is not None:
            await self._host.close()
        self._errlog.close()
        shutil.rmtree(self._workdir, ignore_errors=True)

    def memory(self) -> dict[str, float | int]:
        return {}

    async def call(self, tool: str, arguments: dict, timeout: float = CALL_TIMEOUT) -> Reply:
        started = measure.now()
        try:
            result = await asyncio.wait_for(self._context.call(tool, arguments), timeout)
        except asyncio.TimeoutError:
            return Reply(f"timed out after {timeout:g} s", measure.now() - started, True)
        return Reply(result.text, measure.now() - started, result.is_error, result.text)

    async def tool_names(self) -> list[str]:
        return list(self._host.tools)


def _webhand_version() -> str:
    import webhand

    return webhand.__version__
