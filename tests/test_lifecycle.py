"""Browsers never outlive their session: close, idle timeout, shutdown, a killed host.

These tests use process isolation (each session its own Chromium) and check real pids.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from helpers import settings_for_tests, wait_until_gone_async
from webhand import Settings, Webhand
from webhand.engine.launch.chrome import RegistryEntry, _registry_dir, find_chromium, launch_flags, reap_orphans


def _processes(pids: list[int]) -> list[psutil.Process]:
    found = []
    for pid in pids:
        try:
            found.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            pass
    return found


def _group(pid: int) -> list[psutil.Process]:
    """Every live process in the process group led by ``pid`` (a browser and its renderers)."""
    members = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pid:
                members.append(process)
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue
    return members


@pytest.fixture
def process_settings(tmp_path_factory: pytest.TempPathFactory, driver: str) -> Settings:
    return settings_for_tests(tmp_path_factory, driver=driver, isolation="process", warm_reserve=False, max_sessions=3)


async def test_closing_a_session_kills_its_browser_group(process_settings, site):
    async with Webhand(process_settings) as wh:
        tools = wh.conversation("conv")
        assert not (await tools.call("browser_navigate", {"url": site.url("login.html")})).is_error
        [pid] = wh.sessions.browser_pids()
        group = _group(pid)
        assert len(group) > 1, "a browser runs renderers in its own group"
        reply = await tools.call("browser_close", {})
        assert "Closed" in reply.text
        assert await wait_until_gone_async(group) == []
        assert wh.sessions.list() == []


async def test_idle_sessions_are_closed_with_their_browser(tmp_path_factory, site, driver):
    settings = settings_for_tests(tmp_path_factory, driver=driver, isolation="process", warm_reserve=False,
                             idle_timeout=0.5, idle_check_interval=0.1)
    async with Webhand(settings) as wh:
        tools = wh.conversation("idle")
        await tools.call("browser_navigate", {"url": site.url("login.html")})
        [pid] = wh.sessions.browser_pids()
        group = _group(pid)
        assert await wait_until_gone_async(group, timeout=15) == []
        assert wh.sessions.list() == []
        # The conversation goes on: the next call starts a fresh browser.
        reply = await tools.call("browser_navigate", {"url": site.url("login.html")})
        assert not reply.is_error, reply.text


async def test_shutdown_all_leaves_no_browser(process_settings, site):
    wh = await Webhand(process_settings.model_copy(update={"warm_reserve": True})).start()
    for conversation in ("a", "b"):
        await wh.conversation(conversation).call("browser_navigate", {"url": site.url("login.html")})
    pids = wh.sessions.browser_pids()
    assert len(pids) >= 2
    groups = [p for pid in pids for p in _group(pid)]
    await wh.close()
    assert await wait_until_gone_async(groups) == []
    assert not [f for f in _registry_dir().glob("*.json") if json.loads(f.read_text())["pid"] in pids]


async def test_closing_webhand_with_a_frozen_browser_returns_and_kills_it(tmp_path_factory, site, driver):
    """A browser that stops answering (frozen here by SIGSTOP) must not hang shutdown: closing the
    context waits for an answer that never comes, and webhand kills the browser by pid instead."""
    settings = settings_for_tests(tmp_path_factory, driver=driver, isolation="process", warm_reserve=False, timeout=3)
    wh = await Webhand(settings).start()
    tools = wh.conversation("frozen")
    assert not (await tools.call("browser_navigate", {"url": site.url("login.html")})).is_error
    [pid] = wh.sessions.browser_pids()
    group = _group(pid)
    os.killpg(pid, signal.SIGSTOP)  # the browser webhand started, by its pid (its group: renderers too)
    try:
        # A guard far beyond the cap (timeout 3 s), so that a hang fails the test instead of stalling the run.
        async with asyncio.timeout(90):
            await wh.close()
        assert await wait_until_gone_async(group) == []
        assert not [f for f in _registry_dir().glob("*.json") if json.loads(f.read_text())["pid"] == pid]
    finally:
        for process in _processes([p.pid for p in group]):  # whatever is left of that group, by pid
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGKILL)
                process.send_signal(signal.SIGCONT)


async def test_a_call_still_opening_its_session_at_close_gets_an_error_reply(process_settings, site):
    wh = await Webhand(process_settings).start()
    call = asyncio.create_task(wh.conversation("late").call("browser_navigate", {"url": site.url("login.html")}))
    assert wh.sessions.launcher is not None
    await wh.sessions.launcher.until_spawned()  # its browser is launching: the session is still opening
    await wh.close()
    reply = await call  # a reply, never a cancellation out of Conversation.call
    assert reply.is_error and "shutting down" in reply.text, reply.text
    assert wh.sessions.browser_pids() == []


async def test_two_conversations_do_not_share_cookies_or_storage(tmp_path_factory, site, driver):
    for isolation in ("process", "context"):
        settings = settings_for_tests(tmp_path_factory, driver=driver, isolation=isolation, warm_reserve=False)
        async with Webhand(settings) as wh:
            alice, bob = wh.conversation("alice"), wh.conversation("bob")
            await alice.call("browser_navigate", {"url": site.url("set-cookie?team=alice")})
            await alice.call("browser_eval", {"expression": "localStorage.setItem('who', 'alice')"})
            await bob.call("browser_navigate", {"url": site.url("login.html")})
            seen = await bob.call("browser_eval", {"expression": "[document.cookie, localStorage.getItem('who')]"})
            assert seen.data == {"result": ["", None]}, (isolation, seen.text)
            mine = await alice.call("browser_eval", {"expression": "[document.cookie, localStorage.getItem('who')]"})
            assert mine.data == {"result": ["team=alice", "alice"]}


async def test_state_persists_between_calls_of_one_conversation(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    await tools.call("browser_eval", {"expression": "window.counter = 41"})
    reply = await tools.call("browser_eval", {"expression": "window.counter + 1"})
    assert reply.data == {"result": 42}


async def test_calls_on_one_session_are_serialized(tools, site):
    import asyncio

    await tools.call("browser_navigate", {"url": site.url("login.html")})
    await tools.call("browser_eval", {"expression": "window.order = []"})
    slow = asyncio.create_task(tools.call("browser_eval", {
        "expression": "await new Promise(r => setTimeout(r, 300)); window.order.push('slow')"}))
    await asyncio.sleep(0)  # let the slow call take the session first
    await tools.call("browser_eval", {"expression": "window.order.push('quick')"})
    await slow
    assert (await tools.call("browser_eval", {"expression": "window.order"})).data == {"result": ["slow", "quick"]}


async def test_calls_on_different_sessions_run_in_parallel(webhand, site):
    import asyncio

    first, second = webhand.conversation("parallel-a"), webhand.conversation("parallel-b")
    for tools in (first, second):
        await tools.call("browser_navigate", {"url": site.url("login.html")})
    finished: list[str] = []

    async def call(tools, name, expression):
        await tools.call("browser_eval", {"expression": expression})
        finished.append(name)

    # The first session waits for a promise nobody resolves before its timeout; the second must not wait for it.
    blocked = asyncio.create_task(call(first, "blocked", "await new Promise(r => setTimeout(r, 3000))"))
    await asyncio.sleep(0)
    await call(second, "free", "1 + 1")
    assert finished == ["free"]
    await blocked
    for conversation in ("parallel-a", "parallel-b"):
        await webhand.end_conversation(conversation)


async def test_max_sessions_is_a_clear_error(process_settings, site):
    async with Webhand(process_settings) as wh:
        for name in ("one", "two", "three"):
            assert not (await wh.conversation(name).call("browser_navigate", {"url": site.url("login.html")})).is_error
        reply = await wh.conversation("four").call("browser_navigate", {"url": site.url("login.html")})
        assert reply.is_error
        assert "3 browser sessions are open" in reply.text and "browser_close" in reply.text


async def test_warm_reserve_hands_out_a_launched_browser(tmp_path_factory, site, driver):
    settings = settings_for_tests(tmp_path_factory, driver=driver, isolation="process", warm_reserve=True)
    async with Webhand(settings) as wh:
        await wh.sessions.ready(reserve=True)  # the reserve launched without any call asking for it
        [reserved] = wh.sessions.browser_pids()
        await wh.conversation("first").call("browser_navigate", {"url": site.url("login.html")})
        assert reserved in [info.browser_pid for info in wh.sessions.list()]
        await wh.sessions.ready(reserve=True)  # and a new one is prepared for the next conversation
        assert len(wh.sessions.browser_pids()) == 2


async def test_a_crashed_browser_is_replaced_and_the_model_is_told(process_settings, site):
    async with Webhand(process_settings) as wh:
        tools = wh.conversation("crash")
        await tools.call("browser_navigate", {"url": site.url("login.html")})
        [pid] = wh.sessions.browser_pids()
        os.killpg(pid, signal.SIGKILL)  # a browser webhand started, killed by its pid
        assert await wait_until_gone_async(_processes([pid])) == []
        reply = await tools.call("browser_navigate", {"url": site.url("login.html")})
        assert not reply.is_error, reply.text
        assert "previous browser of this session had exited" in reply.text


async def test_connecting_over_cdp_never_kills_that_browser(tmp_path, tmp_path_factory, site, driver, short_tmp):
    # TMPDIR of its own (short: the singleton socket's path must fit 108 bytes), not the shared /tmp.
    chrome = subprocess.Popen([find_chromium(), *launch_flags(str(tmp_path / "profile"))],
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True, text=True,
                              env={**os.environ, "TMPDIR": short_tmp})
    try:
        endpoint = ""
        assert chrome.stderr is not None
        for line in chrome.stderr:  # the browser announces its endpoint when ready
            if "DevTools listening on" in line:
                endpoint = line.split("listening on ", 1)[1].strip()
                break
        settings = settings_for_tests(tmp_path_factory, driver=driver, cdp_url=endpoint, warm_reserve=False)
        async with Webhand(settings) as wh:
            reply = await wh.conversation("cdp").call("browser_navigate", {"url": site.url("login.html")})
            assert "Sign in" in reply.text
            await wh.conversation("cdp").call("browser_close", {})
        assert chrome.poll() is None, "webhand must not kill a browser it did not start"
    finally:
        os.killpg(chrome.pid, signal.SIGKILL)
        chrome.wait(timeout=10)


# ---------------------------------------------------------------------------------------------
# A killed host


_HOST = textwrap.dedent("""
    import asyncio, sys
    from webhand import Settings, Webhand
    async def main():
        settings = Settings.from_sources({"output_dir": sys.argv[2], "isolation": "process"})
        wh = await Webhand(settings).start()
        await wh.conversation("c").call("browser_navigate", {"url": sys.argv[1]})
        await wh.sessions.ready(reserve=True)
        print(" ".join(map(str, wh.sessions.browser_pids())), flush=True)
        await asyncio.Event().wait()  # until killed
    asyncio.run(main())
""")


async def test_sigkill_of_the_host_leaves_no_browser_after_the_next_start(tmp_path, process_settings, site):
    host = subprocess.Popen([sys.executable, "-c", _HOST, site.url("login.html"), str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        pids = [int(p) for p in host.stdout.readline().split()]
        assert len(pids) == 2  # the session's browser and the warm reserve
        groups = [p for pid in pids for p in _group(pid)]
    finally:
        host.kill()  # the host we started, by its pid, whatever happened above
        host.wait(timeout=10)
    async with Webhand(process_settings) as wh:  # a new webhand start reaps what is left
        await wh.sessions.ready()
        assert await wait_until_gone_async(groups) == []
        entries = [json.loads(f.read_text()) for f in _registry_dir().glob("*.json")]
        assert not [e for e in entries if e["pid"] in pids]
        assert not [e for e in entries if Path(e["user_data_dir"]).exists() and e["owner_pid"] == host.pid]


def test_reaping_kills_only_what_the_registry_proves_is_ours(tmp_path, short_tmp):
    """An orphan whose owner is dead is killed; an entry whose pid is now another process is not."""
    browser = subprocess.Popen([find_chromium(), *launch_flags(str(tmp_path / "orphan"))],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                               env={**os.environ, "TMPDIR": short_tmp})  # its singleton folder stays here
    dead_owner = subprocess.Popen([sys.executable, "-c", "pass"])
    dead_owner.wait()
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        started = psutil.Process(browser.pid).create_time()
        orphan = RegistryEntry(browser.pid, started, str(tmp_path / "orphan"), dead_owner.pid, 1.0)
        orphan.save()
        # Same pid as a live process, but the wrong start time: must be left alone.
        impostor = RegistryEntry(stranger.pid, 12345.0, str(tmp_path / "other"), dead_owner.pid, 1.0)
        impostor.save()
        reaped = reap_orphans()
        assert browser.pid in reaped
        assert browser.wait(timeout=10) is not None
        assert stranger.poll() is None
        assert not orphan.path.exists() and not impostor.path.exists()
        assert not (tmp_path / "orphan").exists()
    finally:
        stranger.kill()
        stranger.wait()
        if browser.poll() is None:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.wait()


