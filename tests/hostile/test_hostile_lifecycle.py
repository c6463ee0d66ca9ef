"""Sessions that end behind the model's back say so, and no zombie is left for a careless init."""

from __future__ import annotations

import asyncio
import os
import sys

import psutil
from mcp import ClientSession, StdioServerParameters, stdio_client

from helpers import browsers_of_child_processes, settings_for_tests, wait_until_gone_async
from webhand import Webhand


async def _until(condition, cap: float = 15.0) -> bool:
    """Poll ``condition`` (a test's wait for a background job, capped)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + cap
    while not condition() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return condition()


async def test_the_call_after_an_idle_close_says_the_old_session_and_its_cookies_are_gone(tmp_path_factory, site,
                                                                                           driver):
    settings = settings_for_tests(tmp_path_factory, warm_reserve=False, idle_timeout=0.5, idle_check_interval=0.1,
                                  driver=driver)
    async with Webhand(settings) as wh:
        tools = wh.conversation("idle")
        page = site.url("set-cookie?user=ada")
        assert not (await tools.call("browser_navigate", {"url": page})).is_error
        assert await _until(lambda: not wh.sessions.list("idle")), "the idle reaper closed the session"
        reply = await tools.call("browser_snapshot", {})
        assert not reply.is_error, reply.text
        assert "closed after" in reply.text and "idle_timeout" in reply.text, reply.text
        assert page in reply.text and "cookies and storage are gone" in reply.text, reply.text
        again = await tools.call("browser_snapshot", {})
        assert "idle" not in again.text, "said once, not on every call"


async def test_a_named_session_closed_for_idleness_is_refused_with_the_reason(tmp_path_factory, site, driver):
    settings = settings_for_tests(tmp_path_factory, warm_reserve=False, idle_timeout=0.5, idle_check_interval=0.1,
                                  driver=driver)
    async with Webhand(settings) as wh:
        tools = wh.conversation("idle-named")
        assert not (await tools.call("browser_session_create", {"name": "admin"})).is_error
        assert not (await tools.call("browser_navigate", {"url": site.url("login.html"), "session": "admin"})).is_error
        assert await _until(lambda: not wh.sessions.list("idle-named")), "the idle reaper closed the session"
        reply = await tools.call("browser_snapshot", {"session": "admin"})
        assert reply.is_error and "No session named 'admin' is open" in reply.text, reply.text
        assert "closed after" in reply.text and "cookies and storage are gone" in reply.text, reply.text


# A container's process 1 that never reaps: it makes itself the subreaper of everything below it,
# starts `webhand mcp` (which inherits its stdin and stdout, the client's pipes) and waits only
# for that one child. Orphans that reach it stay zombies, as under an init-less container.
_CARELESS_INIT = """
import ctypes, os, sys
ctypes.CDLL("libc.so.6").prctl(36, 1, 0, 0, 0)
server = os.fork()
if server == 0:
    os.execv(sys.executable, [sys.executable, "-m", "webhand", "mcp"])
os.waitpid(server, 0)
"""


def _zombies_of(*parents: int) -> list[psutil.Process]:
    found = []
    for parent in parents:
        try:
            for child in psutil.Process(parent).children():
                try:
                    if child.status() == psutil.STATUS_ZOMBIE:
                        found.append(child)
                except psutil.NoSuchProcess:
                    continue
        except psutil.NoSuchProcess:
            continue
    return found


def _cmdline(process: psutil.Process) -> list[str]:
    """A child's command line; [] for one that ended (a zombie another test left for the reaper)."""
    try:
        return process.cmdline()
    except psutil.Error:
        return []


async def test_the_mcp_server_reaps_what_its_browsers_leave_behind(tmp_path, site):
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path), "WEBHAND_WARM_RESERVE": "false",
           "WEBHAND_ALLOW_INTERNAL_PAGES": "true"}  # chrome://crash crashes a renderer
    server = StdioServerParameters(command=sys.executable, args=["-c", _CARELESS_INIT], env=env)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        [init] = [p for p in psutil.Process().children() if _CARELESS_INIT.strip() in " ".join(_cmdline(p))]
        [webhand] = init.children()
        browsers = []
        for _ in range(2):  # two browsers, each with its crash handlers, one renderer crash
            await mcp.call_tool("browser_navigate", {"url": site.url("login.html")})
            browsers += browsers_of_child_processes()
            await mcp.call_tool("browser_navigate", {"url": "chrome://crash"})
            await mcp.call_tool("browser_snapshot", {})
            await mcp.call_tool("browser_close", {})
        zombies = lambda: _zombies_of(init.pid, webhand.pid)  # noqa: E731
        assert await _until(lambda: not zombies()), f"{len(zombies())} zombies left: {zombies()}"
        assert await wait_until_gone_async(browsers) == []
