"""The leftovers table: every way a browser's life can end, and what it leaves on disk.

Each row starts browsers, ends them one way (a session closed, an idle session, webhand closed,
the server SIGKILLed and a new start that reaps after it) and counts what stayed behind: the
user-data dir, the folder holding Chromium's singleton socket (``org.chromium.Chromium.*``,
made in its TMPDIR), and anything else in the temporary folder. Only this test's own are
counted: other programs run browsers on this machine too. So each row runs webhand with a
temporary folder of its own (TMPDIR), which must be empty at the end, and finds its browsers'
user-data dirs and socket folders by what their registry entries and ``SingletonSocket`` links say.

The counts are printed by the last test; run ``pytest -s tests/hostile/test_hostile_leftovers.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from helpers import settings_for_tests, wait_until_gone_async
from webhand import Webhand
from webhand.engine.launch.chrome import _registry_dir
from webhand.engine.launch.chromium_binary import is_headless_shell

#: ending -> (browsers started, user-data dirs left, singleton folders left, other things left in TMPDIR)
OUTCOMES: dict[str, tuple[int, int, int, int]] = {}


@pytest.fixture
def private_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A temporary folder for this row alone (TMPDIR, and ``tempfile``'s). Short: Chromium's
    socket path inside it must fit in 107 bytes, which pytest's own folders would not."""
    tmp_path_factory.getbasetemp()  # pytest's folders stay where they are
    folder = Path(tempfile.mkdtemp(prefix="wh-"))
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _browser_paths(registry: Path, owner: int, seen: set[str]) -> list[tuple[int, Path, Path | None]]:
    """(pid, user-data dir, singleton socket's folder) of the browsers ``owner`` launched that are
    not in ``seen`` yet (found while they run: the socket link is in the user-data dir). The
    headless shell makes no singleton socket: found once up (its DevToolsActivePort), with None."""
    found = []
    for file in registry.glob("*.json"):
        try:
            entry = json.loads(file.read_text())
        except (OSError, ValueError):
            continue
        if entry.get("owner_pid") != owner or entry["user_data_dir"] in seen:
            continue
        user_data = Path(entry["user_data_dir"])
        try:
            socket_folder: Path | None = Path(os.readlink(user_data / "SingletonSocket")).parent
        except OSError:
            if not (_is_headless_shell(entry["pid"]) and (user_data / "DevToolsActivePort").exists()):
                continue  # not up yet, or gone
            socket_folder = None
        seen.add(entry["user_data_dir"])
        found.append((entry["pid"], user_data, socket_folder))
    return found


def _is_headless_shell(pid: int) -> bool:
    try:
        return is_headless_shell(psutil.Process(pid).exe())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _running_before(registry: Path, owner: int) -> set[str]:
    """User-data dirs of browsers ``owner`` already runs (other tests' shared browsers, in the same
    test process): not this row's, so never counted."""
    seen: set[str] = set()
    for file in registry.glob("*.json"):
        try:
            entry = json.loads(file.read_text())
        except (OSError, ValueError):
            continue
        if entry.get("owner_pid") == owner:
            seen.add(entry["user_data_dir"])
    return seen


async def _until(condition, cap: float = 30.0) -> bool:
    """Poll ``condition`` (a test's wait for webhand's background work, capped)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + cap
    while not condition() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return condition()


def _record(ending: str, browsers: list[tuple[int, Path, Path | None]], temporary: Path) -> None:
    data_left = [str(u) for _, u, _ in browsers if u.exists()]
    sockets_left = [str(s) for _, _, s in browsers if s is not None and s.exists()]
    others_left = [name for name in os.listdir(temporary) if str(temporary / name) not in data_left + sockets_left]
    OUTCOMES[ending] = (len(browsers), len(data_left), len(sockets_left), len(others_left))
    assert browsers, f"{ending}: no browser was started"
    assert all(u.is_relative_to(temporary) for _, u, _ in browsers), "the browsers used the row's TMPDIR"
    assert not data_left, f"{ending}: user-data dirs left: {data_left}"
    assert not sockets_left, f"{ending}: Chromium singleton folders left: {sockets_left}"
    assert not others_left, f"{ending}: left in TMPDIR: {others_left}"


@pytest.mark.parametrize("engine", ["cdp", "playwright"])
async def test_a_closed_session_leaves_nothing(tmp_path_factory, site, engine, private_tmp):
    seen = _running_before(_registry_dir(), os.getpid())
    browsers = []
    settings = settings_for_tests(tmp_path_factory, driver=engine, isolation="process", warm_reserve=False)
    async with Webhand(settings) as wh:
        tools = wh.conversation("closed")
        for _ in range(2):
            assert not (await tools.call("browser_navigate", {"url": site.url("login.html")})).is_error
            browsers += _browser_paths(_registry_dir(), os.getpid(), seen)
            assert not (await tools.call("browser_close", {})).is_error
        assert await _until(lambda: not any(u.exists() for _, u, _ in browsers))
        _record(f"session closed ({engine})", browsers, private_tmp)


async def test_an_idle_session_leaves_nothing(tmp_path_factory, site, private_tmp):
    seen = _running_before(_registry_dir(), os.getpid())
    settings = settings_for_tests(tmp_path_factory, isolation="process", warm_reserve=False, idle_timeout=0.5,
                                  idle_check_interval=0.1)
    async with Webhand(settings) as wh:
        tools = wh.conversation("idle")
        assert not (await tools.call("browser_navigate", {"url": site.url("login.html")})).is_error
        browsers = _browser_paths(_registry_dir(), os.getpid(), seen)
        assert await _until(lambda: not wh.sessions.list("idle")), "the idle reaper closed the session"
        assert await _until(lambda: not any(u.exists() for _, u, _ in browsers))
        _record("idle timeout", browsers, private_tmp)


async def test_closing_webhand_leaves_nothing(tmp_path_factory, site, private_tmp):
    seen = _running_before(_registry_dir(), os.getpid())
    settings = settings_for_tests(tmp_path_factory, isolation="context", warm_reserve=True)
    async with Webhand(settings) as wh:
        for name in ("one", "two"):
            assert not (await wh.conversation(name).call("browser_navigate", {"url": site.url("login.html")})).is_error
        browsers = _browser_paths(_registry_dir(), os.getpid(), seen)
    _record("webhand closed", browsers, private_tmp)


# A server that opens a session, says so, then waits to be killed.
_SERVER = """
import asyncio, sys
from webhand import Settings, Webhand

async def main():
    settings = Settings.from_sources({"output_dir": sys.argv[1], "isolation": "process", "warm_reserve": False}, env={})
    async with Webhand(settings) as wh:
        for name in ("one", "two"):
            reply = await wh.conversation(name).call("browser_navigate", {"url": sys.argv[2]})
            assert not reply.is_error, reply.text
        print("ready", flush=True)
        await asyncio.Event().wait()

asyncio.run(main())
"""

# A later start: starting webhand reaps what dead webhand processes left.
_NEXT_START = """
import asyncio, sys
from webhand import Settings, Webhand

async def main():
    async with Webhand(Settings.from_sources({"output_dir": sys.argv[1], "warm_reserve": False}, env={})):
        pass

asyncio.run(main())
"""


async def test_a_sigkilled_server_leaves_nothing_once_the_next_start_reaps(tmp_path, site, private_tmp):
    runtime = tmp_path / "run"  # its own registry: the reaper touches only this test's browsers
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen([sys.executable, "-c", _SERVER, str(tmp_path / "out"), site.url("login.html")],
                              env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        assert (await asyncio.to_thread(server.stdout.readline)).strip() == "ready"
        browsers = _browser_paths(runtime / "webhand" / "browsers", server.pid, set())
        processes = [p for p in psutil.process_iter() if _group_of(p) in {pid for pid, _, _ in browsers}]
        os.kill(server.pid, signal.SIGKILL)
        await asyncio.to_thread(server.wait, 30)
    finally:
        server.kill()
    assert await wait_until_gone_async(processes, timeout=30) == [], "the browsers died with the server"
    assert all(u.exists() for _, u, _ in browsers), "a SIGKILLed server cannot clean up: the reaper must"
    next_start = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", _NEXT_START, str(tmp_path / "out")],
                                         env=env, capture_output=True, text=True, timeout=120)
    assert next_start.returncode == 0, next_start.stderr
    _record("server SIGKILLed, next start reaps", browsers, private_tmp)


def _group_of(process: psutil.Process) -> int | None:
    try:
        return os.getpgid(process.pid)
    except (ProcessLookupError, psutil.NoSuchProcess):
        return None


def test_leftovers_table_summary():
    """Prints the table's counts (run with -s): every ending ran and left nothing."""
    if not OUTCOMES:
        pytest.skip("run with the table rows to get the summary")
    print("\nleftovers table (ending: browsers / user-data dirs / singleton folders / other things left in TMPDIR)")
    for ending, (started, data_left, sockets_left, others_left) in OUTCOMES.items():
        print(f"  {ending:40} {started:3} / {data_left:3} / {sockets_left:3} / {others_left:3}")
    print(f"leftovers table: {len(OUTCOMES)} endings, {sum(o[0] for o in OUTCOMES.values())} browsers, "
          f"{sum(sum(o[1:]) for o in OUTCOMES.values())} things left")
    assert len(OUTCOMES) == 5 and all(sum(o[1:]) == 0 for o in OUTCOMES.values())
