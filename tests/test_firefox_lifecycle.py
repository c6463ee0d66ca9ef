"""No Firefox process outlives webhand: after SIGKILL of the server, and after a crash of the browser.

The Firefox twins of test_lifecycle.py's killed-host and crashed-browser tests. A Firefox is a
main process with helpers (the forkserver, the socket, RDD and utility processes, one content
process per site), all in the process group webhand gave it; the helpers repeat no profile path
but name their parent (``-parentPid``). Each test starts its own Firefox (two for the crash), so
they are few.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
from pathlib import Path

import psutil
import pytest

from helpers import settings_for_tests, wait_until_gone_async
from webhand import Webhand
from webhand.engine.launch.chrome import _registry_dir, reap_orphans
from webhand.session import call_deadline

if not (shutil.which("firefox-esr") or shutil.which("firefox")):
    pytest.skip("no Firefox installed (firefox-esr or firefox on PATH): run scripts/ensure-firefox",
                allow_module_level=True)


def _group(pid: int) -> list[psutil.Process]:
    """Every live process of the process group led by ``pid`` (a Firefox and its helpers)."""
    members = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pid:
                members.append(process)
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue
    return members


def _entries_of(owner: int) -> list[dict]:
    found = []
    for file in _registry_dir().glob("*.json"):
        try:
            entry = json.loads(file.read_text())
        except (OSError, ValueError):
            continue
        if entry.get("owner_pid") == owner:
            found.append(entry)
    return found


async def _send(server: asyncio.subprocess.Process, *messages: dict) -> None:
    assert server.stdin is not None
    for message in messages:
        server.stdin.write((json.dumps(message) + "\n").encode())
    await server.stdin.drain()


async def _replies(server: asyncio.subprocess.Process, count: int) -> list[dict]:
    assert server.stdout is not None
    replies: list[dict] = []
    while len(replies) < count:
        line = await asyncio.wait_for(server.stdout.readline(), 120)  # a cold Firefox on a loaded 2-core machine
        assert line, "the MCP server closed its output"
        message = json.loads(line)
        if "id" in message:
            replies.append(message)
    return replies


def _alive(process: psutil.Process) -> bool:
    """Whether ``process`` still runs: a zombie (ended, not yet reaped by its new parent) does not."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def test_sigkill_of_a_firefox_mcp_server_leaves_no_firefox_after_the_next_start(tmp_path, site):
    """`webhand mcp` with browser = "firefox" is SIGKILLed mid-session. Its Firefox dies with it
    (PR_SET_PDEATHSIG) and the helpers follow their parent; one helper is held stopped here so that
    it cannot exit by itself, as a slow one would not: the next start's reaper must find it by its
    group and ``-parentPid``, and remove the temporary profile and the registry entry."""
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path), "WEBHAND_DRIVER": "firefox"}
    server = await asyncio.create_subprocess_exec(sys.executable, "-m", "webhand", "mcp", env=env,
                                                  stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    held: psutil.Process | None = None
    group: list[psutil.Process] = []
    try:
        await _send(server,
                    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "1"}}},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                        "name": "browser_navigate", "arguments": {"url": site.url("firefox/core.html")}}})
        navigated = (await _replies(server, 2))[1]
        assert "Firefox core" in json.dumps(navigated), navigated
        [entry] = _entries_of(server.pid)
        group = _group(entry["pid"])
        helpers = [p for p in group if p.pid != entry["pid"]]
        assert helpers, "a Firefox that shows a page runs helper processes"
        content = [p for p in helpers if "-isForBrowser" in p.cmdline()]
        held = (content or helpers)[-1]
        held.send_signal(signal.SIGSTOP)  # a helper of the Firefox we started, by its pid
        server.kill()  # SIGKILL: no shutdown code of the server runs
        await server.wait()
        main = psutil.Process(entry["pid"]) if psutil.pid_exists(entry["pid"]) else None
        assert main is None or await wait_until_gone_async([main]) == [], "Firefox outlived its server"
        if not _alive(held):
            # The kernel ended it with its parent (a helper Firefox forks with a parent-death signal,
            # picked when no content process showed yet): nothing of the group may be left then. A
            # zombie has ended too: it waits only for its new parent to reap it.
            left = await wait_until_gone_async([p for p in group if _alive(p)])
            assert [p for p in left if _alive(p)] == [], "Firefox helpers left"
            return
        reaped = reap_orphans()  # what the next webhand start does first
        assert held.pid in reaped
        assert [p for p in await wait_until_gone_async(group) if _alive(p)] == []
        assert not _entries_of(server.pid), "the registry entry was not removed"
        assert not Path(entry["user_data_dir"]).exists(), "the temporary profile was not removed"
    finally:
        if server.returncode is None:  # the server we started: end it (by pid) whatever happened above
            server.kill()
            await server.wait()
        for process in group:  # the Firefox we started, if a step above failed before it went
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass


async def test_a_crashed_firefox_is_reported_and_replaced(tmp_path_factory, site):
    """The Firefox main process dies under a live session (SIGKILL of it alone, as a crash): its
    helpers go with it, the session says the browser had exited, the next call runs on a fresh
    Firefox, and none is left once webhand closes."""
    # The default call timeout: the relaunch (10-30 s on this loaded 2-core machine) is not counted
    # in it (session/call_deadline.py), only in launch_timeout.
    settings = settings_for_tests(tmp_path_factory, driver="firefox", isolation="process", warm_reserve=False,
                                  max_sessions=3, capabilities=["core"], launch_timeout=120)
    groups: list[psutil.Process] = []
    async with Webhand(settings) as wh:
        tools = wh.conversation("crash")
        first = await tools.call("browser_navigate", {"url": site.url("firefox/core.html")})
        assert not first.is_error, first.text
        [pid] = wh.sessions.browser_pids()
        groups = _group(pid)
        assert len(groups) > 1, "a Firefox that shows a page runs helper processes"
        os.kill(pid, signal.SIGKILL)  # the main process only, of a Firefox webhand started
        assert await wait_until_gone_async(groups) == [], "Firefox's helpers outlived its main process"
        reply = await tools.call("browser_navigate", {"url": site.url("firefox/core.html")})
        assert not reply.is_error, reply.text
        assert "previous browser of this session had exited" in reply.text, reply.text
        assert "Firefox core" in reply.text
        [fresh] = wh.sessions.browser_pids()
        assert fresh != pid
        groups += _group(fresh)
    assert await wait_until_gone_async(groups) == []
    assert not [e for e in _entries_of(os.getpid()) if e["pid"] in (pid, fresh)], "registry entries left behind"


async def test_a_browser_launch_does_not_spend_the_calls_timeout():
    """What session/call_deadline.py promises: a call's clock stops while its browser launches (here
    a stand-in launch three times as long as the whole call's timeout), and runs otherwise."""
    with pytest.raises(TimeoutError):  # without the launch, the timeout holds
        async with asyncio.timeout(0.2) as deadline:
            with call_deadline.counting(deadline):
                await asyncio.sleep(0.6)
    async with asyncio.timeout(0.2) as deadline:
        with call_deadline.counting(deadline):
            with call_deadline.not_counted():
                await asyncio.sleep(0.6)  # a slow launch
            assert not deadline.expired()
    with call_deadline.not_counted():  # outside a call, nothing to stop
        await asyncio.sleep(0)
    async with asyncio.timeout(0.2) as deadline:  # a task the call starts (a reserve's launch) inherits
        with call_deadline.counting(deadline):   # its context, but its launch is not the call's
            async def background_launch() -> None:
                with call_deadline.not_counted():
                    await asyncio.sleep(0.05)
            helper = asyncio.create_task(background_launch())
            await asyncio.sleep(0)
            assert deadline.when() is not None, "a background launch stopped the call's clock"
            await helper
    async with asyncio.timeout(0.2) as deadline:  # a task doing the call's own work (the session's
        with call_deadline.counting(deadline):   # creation, manager._create), which the call awaits
            async def create_session() -> None:
                with call_deadline.not_counted():
                    await asyncio.sleep(0.6)  # a slow launch
            creating = asyncio.create_task(create_session())
            call_deadline.does_the_calls_work(creating)
            await creating
            assert not deadline.expired()
    await asyncio.sleep(0)
