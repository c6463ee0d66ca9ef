"""A stdio server started as the last one was launches that one's browser before its settings load
(engine/launch/launch_memo.py), and keeps it only when the settings launch it the same way."""

from __future__ import annotations

import asyncio
import json
import os

import psutil
import pytest

from helpers import browsers_of_child_processes, wait_until_gone_async
from test_mcp_handshake import held_import_script, initialize, read_message, running_server, stop
from webhand.engine.launch import launch_memo

PLAN = {"executable": "/usr/lib/chromium/chromium", "headless": True, "width": 1280, "height": 720,
        "extra_args": [], "timeout": 30.0, "preferences": None, "extensions": []}

# The real entry point, with the config module's execution held until the test lets it go: a
# browser that runs meanwhile was launched before the settings were known.
HELD_SETTINGS = held_import_script(("webhand.config",), '["mcp", "--config", sys.argv[2]]')


def test_a_plan_is_remembered_and_recalled(tmp_path):
    launch_memo.remember("k", PLAN, directory=str(tmp_path))
    assert launch_memo.recall("k", directory=str(tmp_path)) == PLAN
    assert oct((tmp_path / "k.json").stat().st_mode & 0o777) == oct(0o600)
    launch_memo.remember("k", None, directory=str(tmp_path))
    assert launch_memo.recall("k", directory=str(tmp_path)) is None


@pytest.mark.parametrize("extra_args", [["--proxy-server=http://user:secret@127.0.0.1:3128"], ["--lang=de"]])
def test_a_plan_with_the_users_own_browser_flags_is_not_written_down(tmp_path, extra_args):
    launch_memo.remember("k", PLAN, directory=str(tmp_path))
    launch_memo.remember("k", {**PLAN, "extra_args": extra_args}, directory=str(tmp_path))
    assert list(tmp_path.iterdir()) == []  # and what was kept before is forgotten


def test_a_plan_with_only_webhands_own_flags_is_kept(tmp_path):
    plan = {**PLAN, "extra_args": ["--disable-blink-features=AutomationControlled"]}  # stealth's
    launch_memo.remember("k", plan, directory=str(tmp_path))
    assert launch_memo.recall("k", directory=str(tmp_path)) == plan


@pytest.mark.parametrize(("content", "mode"), [
    (json.dumps(PLAN), 0o664),                                       # others of the group may write it
    (json.dumps(PLAN), 0o646),                                       # anyone may write it
    (json.dumps({**PLAN, "executable": 7}), 0o600),
    (json.dumps({**PLAN, "env": {"LD_PRELOAD": "/tmp/x.so"}}), 0o600),   # a key a plan does not have
    (json.dumps({k: v for k, v in PLAN.items() if k != "timeout"}), 0o600),
    ("[]", 0o600),
    ("not json", 0o600),
], ids=["group-writable", "world-writable", "executable not text", "unknown key", "missing key", "a list", "not JSON"])
def test_a_memo_that_is_not_a_plan_of_this_users_alone_is_not_used(tmp_path, content, mode):
    path = tmp_path / "k.json"
    path.write_text(content)
    path.chmod(mode)
    assert launch_memo.recall("k", directory=str(tmp_path)) is None


def test_the_key_is_the_command_line_the_directory_and_the_user():
    base = launch_memo.memo_key(["mcp"], "/a", {"HOME": "/root", "WEBHAND_OUTPUT_DIR": "/tmp/one"})
    # a host that gives each conversation its own folder still finds its memo (the check covers variables)
    assert base == launch_memo.memo_key(["mcp"], "/a", {"HOME": "/root", "WEBHAND_OUTPUT_DIR": "/tmp/two"})
    assert base != launch_memo.memo_key(["mcp", "--chrome", "/x"], "/a", {"HOME": "/root"})
    assert base != launch_memo.memo_key(["mcp"], "/b", {"HOME": "/root"})
    assert base != launch_memo.memo_key(["mcp"], "/a", {"HOME": "/home/other"})


def chromium_pids_of(server: asyncio.subprocess.Process) -> set[int]:
    try:
        children = psutil.Process(server.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return set()
    browsers = set()
    for child in children:
        try:
            line = child.cmdline()
        except psutil.Error:  # gone, or a zombie its reaper has not collected yet
            continue
        if "--remote-debugging-port=0" in line and not any(arg.startswith("--type=") for arg in line):
            browsers.add(child.pid)  # a browser, not one of its renderers
    return browsers


async def first_browser(server, timeout: float = 30) -> set[int]:
    """The browser processes (not their children) of ``server`` once there is one, polled: a
    process's birth has no event to wait for."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (pids := chromium_pids_of(server)) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return pids


async def one_start(tmp_path, config, *, hold: bool, check) -> None:
    """Start ``webhand mcp --config CONFIG`` (its settings held until a browser runs, when ``hold``),
    navigate, run ``check(server, early_browsers, reply)``, stop, and check nothing is left."""
    env_cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}  # this test's memos alone
    gate = tmp_path / "let-the-settings-load"
    gate.unlink(missing_ok=True)
    if not hold:
        gate.touch()
    saved = {name: os.environ.get(name) for name in env_cache}
    os.environ.update(env_cache)  # the server inherits it (running_server copies os.environ)
    try:
        async with running_server(tmp_path, "-c", HELD_SETTINGS, str(gate), str(config)) as server:
            server.stdin.write((json.dumps(initialize(1)) + "\n").encode())
            assert (await read_message(server))["id"] == 1
            early = await first_browser(server) if hold else set()
            gate.touch()
            server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n' + (json.dumps(
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "browser_eval", "arguments": {
                    "expression": "innerWidth"}}}) + "\n").encode())
            reply = await read_message(server)
            browsers = browsers_of_child_processes()
            check(server, early, reply)
            await stop(server)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    assert await wait_until_gone_async(browsers) == []


async def test_the_second_start_launches_its_browser_before_the_settings_load(tmp_path):
    config = tmp_path / "webhand.toml"
    config.write_text("[defaults.browser]\nviewport = \"1000x700\"\n")
    await one_start(tmp_path, config, hold=False, check=lambda *_: None)  # remembers the launch

    def check(server, early, reply):
        assert early, "no browser ran while the settings were held"
        assert chromium_pids_of(server) == early  # the settings agreed: that browser is the session's
        assert "1000" in reply["result"]["content"][0]["text"], reply

    await one_start(tmp_path, config, hold=True, check=check)


async def test_a_remembered_launch_the_settings_no_longer_fit_is_replaced(tmp_path):
    config = tmp_path / "webhand.toml"
    config.write_text("[defaults.browser]\nviewport = \"1000x700\"\n")
    await one_start(tmp_path, config, hold=False, check=lambda *_: None)
    config.write_text("[defaults.browser]\nviewport = \"900x600\"\n")  # same command line, other settings

    def check(server, early, reply):
        assert early, "no browser ran while the settings were held"
        assert chromium_pids_of(server).isdisjoint(early)  # ended, and another launched
        assert "900" in reply["result"]["content"][0]["text"], reply

    await one_start(tmp_path, config, hold=True, check=check)
