"""Named profiles (session/profiles.py) and saved sign-ins (the storage_state setting).

A profile is a browser's profile folder (Chromium's user-data dir, Firefox's profile) webhand keeps
in XDG_DATA_HOME: these tests point that at
their own temporary folder. What a profile keeps (cookies, localStorage) is the browser's work,
so that test runs on both drivers; the lock and the names are above the driver.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from helpers import ok, settings_for_tests
from webhand import Webhand
from webhand.config import Settings
from webhand.errors import ConfigError, InvalidArgument, ProfileInUse, WebhandError
from webhand.security.locations import check_profile_name
from webhand.session.profiles import LOCK_FILE, ProfileLock, browsers_on, list_profiles, profile_dir
from webhand.surfaces.dashboard.views import sessions_list


async def test_profile_keeps_sign_ins_across_restarts_and_is_held_by_one_session(
        driver, site, data_home, tmp_path_factory):
    """A cookie and a localStorage value set in one webhand are there in the next one, twice; while
    a session holds the profile, another conversation's session is refused with the holder named;
    a SingletonLock a killed browser on another host left is no obstacle."""
    settings = settings_for_tests(tmp_path_factory, driver=driver, isolation="process", warm_reserve=False,
                                  profile="work")
    page = site.url("login.html")
    async with Webhand(settings) as webhand:
        first = webhand.conversation("first")
        ok(await first.call("browser_navigate", {"url": page}))
        ok(await first.call("browser_eval", {"expression": "document.cookie = 'kept=yes; max-age=86400; path=/'; "
                                                            "localStorage.setItem('kept', 'local'); 1"}))
        listing = ok(await first.call("browser_session_list", {}))
        assert "profile 'work'" in listing
        assert [s["profile"] for s in sessions_list(webhand) if s["conversation"] == "first"] == ["work"]  # dashboard
        refused = await webhand.conversation("second").call("browser_navigate", {"url": page})
        assert refused.is_error
        assert f"Profile 'work' is in use by pid {os.getpid()}" in refused.text
        assert "conversation first, session 'default'" in refused.text
        named = await first.call("browser_session_create", {"name": "also-work", "profile": "work"})
        assert named.is_error and "conversation first, session 'default'" in named.text
    folder = data_home / "webhand" / "profiles" / "work"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((data_home / "webhand" / "profiles").stat().st_mode) == 0o700
    assert not browsers_on(folder), "the profile's browser outlived its webhand"
    for restart in range(2):
        # As a browser killed on another machine sharing the folder leaves it: the browser alone would
        # refuse the profile ("in use by another computer"). Chromium's lock, and Firefox's (its
        # symbolic link names the IP address and pid; one with "+" before the pid Firefox would break).
        for lock, holder in (("SingletonLock", "another-host-4242"), ("lock", "10.0.0.42:4242")):
            (folder / lock).unlink(missing_ok=True)
            os.symlink(holder, folder / lock)
        async with Webhand(settings) as webhand:
            again = webhand.conversation(f"restart-{restart}")
            ok(await again.call("browser_navigate", {"url": page}))
            kept = ok(await again.call("browser_eval", {"expression": "document.cookie + ' ' + localStorage.getItem('kept')"}))
            assert "kept=yes local" in kept
        assert not browsers_on(folder)
    assert [p.name for p in list_profiles()] == ["work"] and list_profiles()[0].holder is None


_HOLDER = textwrap.dedent("""
    import sys, time
    from webhand.session.profiles import ProfileLock
    ProfileLock.acquire("work", "conversation held-by-test, session 'default'")
    print("held", flush=True)
    time.sleep(120)
""")


def test_a_killed_holders_lock_is_recovered(data_home):
    """A process holding the profile is named to a second user; SIGKILLed, its lock is taken over.
    A forged lock naming a dead pid is stale; one naming a live process (pid and start time) is not."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ProfileInUse) as refused:
            ProfileLock.acquire("work", "the test")
        assert f"pid {holder.pid}" in refused.value.message
        assert "conversation held-by-test, session 'default'" in refused.value.message
        assert list_profiles()[0].holder is not None and list_profiles()[0].holder.pid == holder.pid
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    lock = ProfileLock.acquire("work", "the test")  # the kernel dropped the dead holder's flock
    lock.release()

    folder = profile_dir("work")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(10)
    forged = {"pid": dead.pid, "start_time": 1.0, "host": os.uname().nodename, "program": "webhand mcp",
              "purpose": "conversation gone, session 'default'", "since": 1.0}
    (folder / LOCK_FILE).write_text(json.dumps(forged))
    ProfileLock.acquire("work", "the test").release()

    me = psutil.Process()
    alive = {**forged, "pid": me.parent().pid, "start_time": me.parent().create_time()}
    (folder / LOCK_FILE).write_text(json.dumps(alive))
    with pytest.raises(ProfileInUse) as refused:
        ProfileLock.acquire("work", "the test")
    assert f"pid {me.parent().pid}" in refused.value.message
    reused = {**alive, "start_time": me.parent().create_time() - 1000}  # the pid now names another process
    (folder / LOCK_FILE).write_text(json.dumps(reused))
    ProfileLock.acquire("work", "the test").release()


def test_a_lock_left_by_another_host_says_so_and_is_cleared_by_the_person(cli, data_home):
    """A lock naming a process on another machine is respected, and the refusal names that host and
    the command that clears it; `webhand profile unlock` clears it, but not while a process here holds
    the profile."""
    folder = profile_dir("work")
    elsewhere = {"pid": 4242, "start_time": 1.0, "host": "laptop-upstairs", "program": "webhand mcp",
                 "purpose": "conversation abc, session 'default'", "since": 1_700_000_000.0}
    (folder / LOCK_FILE).write_text(json.dumps(elsewhere))
    with pytest.raises(ProfileInUse) as refused:
        ProfileLock.acquire("work", "the test")
    assert "held by pid 4242 on host laptop-upstairs (webhand mcp; conversation abc, session 'default') since 2023-" \
        in refused.value.message
    assert "`webhand profile unlock work`" in refused.value.hint
    env = {"XDG_DATA_HOME": str(data_home)}
    cleared = cli("profile", "unlock", "work", env=env).stdout
    assert "Profile 'work' is free: cleared the lock of pid 4242 on host laptop-upstairs" in cleared
    lock = ProfileLock.acquire("work", "conversation here, session 'default'")
    try:
        held = cli("profile", "unlock", "work", env=env, check=False)
        assert held.returncode == 1 and f"in use by pid {os.getpid()}" in held.stderr
    finally:
        lock.release()
    assert "There is no profile 'other'" in cli("profile", "unlock", "other", env=env, check=False).stderr


#: Names that try to leave the profiles folder, hide in it, look like options, or are not names.
_BAD_NAMES = ["", ".", "..", "../escape", "..\\escape", "a/b", "/etc", "~root", ".hidden", "-rf", "a b", "x" * 65,
              "nul\x00", "tab\t", "caf\u00e9", "work/../../escape", "CON:"]


@pytest.mark.one_driver("names are refused before any browser is launched")
@pytest.mark.parametrize("name", _BAD_NAMES)
async def test_profile_names_that_try_path_tricks_are_refused(name, tools, data_home):
    with pytest.raises(InvalidArgument):
        check_profile_name(name)
    if name:  # an empty WEBHAND_PROFILE= means "no profile"
        with pytest.raises(ConfigError, match="not valid"):
            Settings.from_sources({"profile": name}, env={})
    reply = await tools.call("browser_session_create", {"name": "signed", "profile": name})
    assert reply.is_error and "not valid" in reply.text
    assert not any(data_home.iterdir()), "a refused name made a folder"


def _plant_symlinked_profile(data: Path) -> None:
    (data / "webhand" / "profiles").mkdir(parents=True, mode=0o700)
    elsewhere = data / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (data / "webhand" / "profiles" / "work").symlink_to(elsewhere)


def _open_profiles_folder(data: Path) -> None:
    (data / "webhand" / "profiles").mkdir(parents=True, mode=0o700)
    (data / "webhand" / "profiles").chmod(0o777)  # another local user could swap a profile in


def _symlinked_lock(data: Path) -> None:
    (data / "webhand" / "profiles" / "work").mkdir(parents=True, mode=0o700)
    (data / "webhand" / "profiles" / "work" / LOCK_FILE).symlink_to(data / "victim")


def _fifo_lock(data: Path) -> None:
    (data / "webhand" / "profiles" / "work").mkdir(parents=True, mode=0o700)
    os.mkfifo(data / "webhand" / "profiles" / "work" / LOCK_FILE)


@pytest.mark.parametrize(("plant", "said"), [
    (_plant_symlinked_profile, "is a symbolic link"),
    (_open_profiles_folder, "can be written by its group and every user"),
    (_symlinked_lock, "will not use the lock file"),
    (_fifo_lock, "will not use the lock file"),
])
def test_a_profile_folder_someone_else_could_change_is_refused(plant, said, data_home):
    plant(data_home)
    with pytest.raises(WebhandError) as refused:
        ProfileLock.acquire("work", "the test")
    assert said in refused.value.message
    assert not (data_home / "victim").exists()
    list_profiles()  # listing neither follows nor blocks on what was planted


def test_the_profile_is_chosen_by_file_agent_env_and_flag(tmp_path):
    from webhand.config import load_settings
    from webhand.surfaces.cli.main import _settings, build_parser

    config = tmp_path / "webhand.toml"
    config.write_text('[defaults.browser]\nprofile = "work"\n[agents.crm.browser]\nprofile = "crm"\n')
    assert load_settings(config=config, env={}).profile == "work"
    assert load_settings(config=config, agent="crm", env={}).profile == "crm"
    assert load_settings(config=config, env={"WEBHAND_PROFILE": "env-one"}).profile == "env-one"
    assert load_settings(config=config, env={"WEBHAND_PROFILE": ""}).profile is None  # an empty one turns it off
    args = build_parser(tools=False).parse_args(["mcp", "--profile", "flagged", "--config", str(config)])
    assert _settings(args).profile == "flagged"


def test_a_profile_needs_a_browser_launched_here():
    with pytest.raises(ConfigError, match="needs a browser webhand launches"):
        Settings.from_sources({"profile": "work", "cdp_url": "http://127.0.0.1:9222"}, env={})
    with pytest.raises(ConfigError, match="set only one"):
        Settings.from_sources({"profile": "work", "storage_state": "/tmp/state.json"}, env={})


async def test_storage_state_signs_every_new_session_in_and_is_saved_back(driver, site, tmp_path, tmp_path_factory):
    """storage_state loads the saved sign-in into each new session before its first page (a page
    behind a session cookie lets it in); save_storage_state writes the session's state back at close,
    atomically and owner-only."""
    state_file = tmp_path / "signed-in.json"
    state_file.write_text(json.dumps({"cookies": [{"name": "member", "value": "opensesame", "domain": "127.0.0.1",
                                                   "path": "/", "expires": -1, "httpOnly": True, "secure": False,
                                                   "sameSite": "Lax"}], "origins": []}))
    secrets = tmp_path_factory.mktemp("secrets") / "secrets.env"
    secrets.write_text("API_KEY=k3y-typed-into-the-page\n")
    secrets.chmod(0o600)
    settings = settings_for_tests(tmp_path_factory, driver=driver, warm_reserve=False, secrets_file=str(secrets),
                                  storage_state=str(state_file), save_storage_state=True)
    async with Webhand(settings) as webhand:
        conversation = webhand.conversation("member")
        assert "Title: Members" in ok(await conversation.call("browser_navigate", {"url": site.url("members")}))
        ok(await conversation.call("browser_session_create", {"name": "second"}))
        assert "Title: Members" in ok(await conversation.call("browser_navigate", {"url": site.url("members"),
                                                                                 "session": "second"}))
        ok(await conversation.call("browser_session_destroy", {"name": "second"}))
        # An item named like a Storage method ("key") is kept too.
        ok(await conversation.call("browser_eval", {"expression": "localStorage.setItem('theme', 'dark'); "
                                                                   "localStorage.setItem('key', 'k3y-typed-into-the-page'); 1"}))
        ok(await conversation.call("browser_close", {}))
    saved = json.loads(state_file.read_text())
    assert {c["name"] for c in saved["cookies"]} == {"member"}
    stored = next(o["localStorage"] for o in saved["origins"] if o["origin"] == site.origin)
    assert sorted(stored, key=lambda item: item["name"]) == [{"name": "key", "value": "<secret>API_KEY</secret>"},
                                                             {"name": "theme", "value": "dark"}]
    assert "k3y-typed-into-the-page" not in state_file.read_text()  # masked as browser_storage_state masks it
    assert stat.S_IMODE(state_file.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["signed-in.json"], "a temporary file was left beside it"


def _oversized(path: Path) -> None:
    with open(path, "wb") as file:
        file.truncate(16 * 1024 * 1024 + 1)


@pytest.mark.one_driver("the file is read and refused before a browser is taken")
@pytest.mark.parametrize(("make", "said"), [
    (None, "does not exist"),
    (lambda p: p.write_text("{not json"), "not a readable JSON file"),
    (lambda p: p.write_text('{"cookies": {"member": "x"}}'), "is not a storage state"),
    (lambda p: p.write_text('{"cookies": [{"name": "member"}]}'), "is not a storage state"),
    (_oversized, "larger than 16 MB"),
    (lambda p: p.mkdir(), "is a folder"),
])
async def test_a_bad_storage_state_file_is_refused_saying_what_to_fix(make, said, driver, tmp_path, tmp_path_factory):
    state_file = tmp_path / "state.json"
    if make is not None:
        make(state_file)
    settings = settings_for_tests(tmp_path_factory, driver=driver, warm_reserve=False, storage_state=str(state_file))
    async with Webhand(settings) as webhand:
        reply = await webhand.conversation("c").call("browser_navigate", {"url": "about:blank"})
    assert reply.is_error and said in reply.text and "storage_state" in reply.text


def _login(cli, env: dict[str, str], *args: str, closed_input: bool = False) -> str:
    """``webhand profile login ARGS`` as a person runs it: Enter once it asks (or, with
    ``closed_input``, its standard input closed from the start and Ctrl-C once it says how to end)."""
    process = subprocess.Popen([sys.executable, "-m", "webhand", "profile", "login", *args], env={**cli.env, **env},
                               stdin=subprocess.DEVNULL if closed_input else subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        said = []
        for line in process.stdout:  # the command's own lines: no fixed wait
            said.append(line)
            if closed_input and "Standard input is closed" in line:
                process.send_signal(signal.SIGINT)
                break
            if not closed_input and "press Enter here" in line:
                process.stdin.write("\n")
                process.stdin.flush()  # communicate() closes it
                break
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    return "".join(said) + out


def test_profile_list_login_and_delete_through_the_cli(cli, site, data_home):
    """login opens the profile headless (no display here) with the dashboard's link, ends on the
    person's Enter or Ctrl-C (never on a closed input) and says what the profile holds; list says
    who holds it; delete refuses a held one. Issue 42 item 7: a closed input ended it at once with
    "sessions … start signed in"."""
    env = {"XDG_DATA_HOME": str(data_home), "DISPLAY": "", "WAYLAND_DISPLAY": ""}
    assert "No profiles yet" in cli("profile", "list", env=env).stdout
    nothing = _login(cli, env, "work", site.url("login.html"), closed_input=True)
    assert "Nothing was saved in profile 'work'" in nothing and "start with them" not in nothing
    login = _login(cli, env, "work", site.url("set-cookie?flavour=oat"))
    assert "/dashboard/#session=" in login and "Take control" in login and "kept at" in login
    assert "it holds 1 cookie and the storage of 0 origins" in login
    folder = data_home / "webhand" / "profiles" / "work"
    assert not browsers_on(folder)
    assert cli("profile", "list", env=env).stdout.startswith("work  ")
    lock = ProfileLock.acquire("work", "conversation cli-test, session 'default'")
    try:
        listed = json.loads(cli("profile", "list", "--json", env=env).stdout)
        assert listed[0]["name"] == "work" and f"pid {os.getpid()}" in listed[0]["held_by"]
        refused = cli("profile", "delete", "work", env=env, check=False)
        assert refused.returncode == 1 and f"in use by pid {os.getpid()}" in refused.stderr
    finally:
        lock.release()
    cli("profile", "delete", "work", env=env)
    assert not folder.exists()
    assert "There is no profile 'work'" in cli("profile", "delete", "work", env=env, check=False).stderr
    assert "not valid" in cli("profile", "delete", "../data", env=env, check=False).stderr
