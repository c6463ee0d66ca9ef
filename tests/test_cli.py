"""`webhand <tool> [args]`: commands generated from the catalog, plain text or JSON, exit status."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import psutil
from PIL import Image

from helpers import Cli, ref_of
from webhand.tools import CATALOG


def test_every_catalog_tool_is_a_command_with_help_from_its_description():
    shown = subprocess.run([sys.executable, "-m", "webhand", "--help"], capture_output=True, text=True, timeout=60).stdout
    for tool in CATALOG.values():
        assert tool.short_name in shown, f"{tool.name} has no command"
    typed = subprocess.run([sys.executable, "-m", "webhand", "type", "--help"], capture_output=True, text=True,
                           timeout=60).stdout
    assert " ".join(CATALOG["browser_type"].description.split()) in " ".join(typed.split())
    assert "--submit" in typed and "text" in typed


def test_a_session_across_calls_with_text_json_errors_and_named_sessions(cli, site):
    cli("navigate", site.url("set-cookie?flavour=oat"))
    cli("navigate", site.url("login.html"))
    page = cli("snapshot").stdout
    cli("type", ref_of(page, 'textbox "User name"'), "ada")
    submitted = cli("type", ref_of(page, 'textbox "Password"'), "secret", "--submit")
    assert "pressed Enter" in submitted.stdout
    assert 'status: Welcome, ada!' in cli("snapshot").stdout

    as_json = json.loads(cli("eval", "document.cookie", "--json").stdout)
    assert as_json["data"] == {"result": "flavour=oat"} and as_json["is_error"] is False

    cli("navigate", site.url("login.html"), "--session", "other")
    # Global options before the command, as other CLIs take them, reach the daemon the same way.
    other = json.loads(cli("--session", "other", "--json", "eval", "document.cookie").stdout)
    assert other["data"] == {"result": ""}, "a named session has its own browser"

    failed = cli("click", "e999", check=False)
    assert failed.returncode == 1 and failed.stdout == ""
    assert "e999" in failed.stderr and "snapshot" in failed.stderr

    shot = cli("take-screenshot")
    path = shot.stdout.strip().rsplit("saved to ", 1)[1]
    assert Path(path).is_file()

    processes = cli.processes()
    cli("daemon", "stop")
    assert psutil.wait_procs(processes, timeout=30)[1] == []


def test_usage_and_config_errors_exit_non_zero_without_starting_a_daemon(tmp_path):
    cli = Cli(tmp_path)
    missing = cli("navigate", check=False)
    assert missing.returncode == 2 and "url" in missing.stderr
    bad = Cli(tmp_path / "b", WEBHAND_TIMEOUT="soon") if (tmp_path / "b").mkdir() is None else None
    refused = bad("snapshot", check=False)
    assert refused.returncode == 1 and "timeout='soon'" in refused.stderr and "WEBHAND_" in refused.stderr
    assert not (bad.runtime / "webhand" / "daemon.sock").exists()


def test_doctor_launches_chromium_and_reports_a_bad_binary(tmp_path):
    cli = Cli(tmp_path)
    healthy = cli("doctor")
    assert "Chromium found" in healthy.stdout and "All checks passed." in healthy.stdout
    # Which build runs, and why: the headless shell wherever it is installed (CI installs it).
    from webhand.engine.launch.chromium_binary import find_headless_shell

    shell = find_headless_shell()
    assert (f"Chromium found: {shell} " if shell else "full browser: the headless shell is not installed") \
        in healthy.stdout
    assert ("Chromium build: headless shell: headless and installed" if shell else "Chromium build: full browser") \
        in healthy.stdout
    assert not list((cli.runtime / "webhand" / "browsers").glob("*.json")), "its browser was closed"
    broken = cli("doctor", "--chrome", str(tmp_path / "no-such-chromium"), check=False)
    assert broken.returncode == 1 and "FAIL  executable_path" in broken.stdout


def test_doctor_says_which_driver_it_uses_and_passes_on_raw_cdp(tmp_path):
    cli = Cli(tmp_path)
    report = cli("doctor", "--driver", "cdp", "--chromium-flavor", "full")
    assert "driver" in report.stdout and "cdp (set; set driver in webhand.toml" in report.stdout
    assert 'Chromium build: full browser: chromium_flavor = "full"' in report.stdout
    assert "All checks passed." in report.stdout


def test_the_cli_command_list_is_generated_from_the_catalog():
    from webhand.surfaces.cli.tools import COMMANDS_FILE, command_specs

    assert json.loads(COMMANDS_FILE.read_text()) == command_specs(), \
        "src/webhand/surfaces/cli/commands.json is stale: run scripts/gen_tool_table.py"


def test_a_call_to_a_running_daemon_imports_neither_the_catalog_nor_pydantic(cli, site):
    cli("navigate", site.url("login.html"))
    probe = ("import sys; from webhand.surfaces.cli.main import main; code = main(['get_url']); "
             "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'asyncio', 'playwright') "
             "or m.startswith(('webhand.tools', 'webhand.config', 'webhand.host'))); "
             "print('heavy:', heavy); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", probe], env=cli.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert site.url("login.html") in done.stdout  # the same answer as the full path gives
    assert "heavy: []" in done.stdout


#: What the console script may import beyond ``python -c pass`` before the daemon has answered: its
#: own module and the wire (with their packages, whose ``__init__`` files import nothing), the runtime
#: folder's check, and the C parts of socket and json. Each module more is a cost every warm call pays
#: (issue 31: a warm call at most 1.5x Python's own start).
LEAN_CLIENT_MODULES = {"webhand", "webhand.surfaces", "webhand.surfaces.cli", "webhand.surfaces.cli.forward",
                       "webhand.surfaces.cli.daemon_wire", "webhand.security", "webhand.security.locations",
                       "_socket", "_json"}


def _imported(code: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``code`` with ``-X importtime``, which names every module imported, C ones too."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    names = set()
    for line in done.stderr.splitlines():
        figures = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and len(figures) == 3 and figures[0].strip().isdigit():
            names.add(figures[2].strip())
    return done, names


def test_the_console_script_imports_only_the_lean_client_before_the_daemon_answers(cli):
    """The entry point ``pyproject.toml`` declares hands a tool command to the running daemon as
    typed: the daemon parses it, so the client imports neither argparse nor the command table, and
    it talks through json's and socket's C parts, so not even re, enum, json or socket's Python layer
    (about half of a warm call's time when they were imported). Held as an exact list: a new import on
    this path fails here. ``session_list`` needs no browser, so none is launched."""
    cli("daemon", "start")
    scripts = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    module, function = scripts["webhand"].split(":")
    probe = f"import sys; sys.argv = ['webhand', 'session_list']; from {module} import {function}; sys.exit({function}())"
    done, loaded = _imported(probe, cli.env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "session" in done.stdout.lower()  # the daemon's answer, printed
    _floor, floor = _imported("pass", cli.env)
    assert "webhand.surfaces.cli.daemon_wire" in loaded  # the fast path was taken
    # Beyond python -c pass and the lean client (some of which a site's start-up may load already):
    assert loaded - floor - LEAN_CLIENT_MODULES == set(), f"imported beyond python -c pass: {sorted(loaded - floor)}"


def test_a_forwarded_command_is_read_in_the_callers_directory_and_environment(cli, site, tmp_path):
    cli("navigate", site.url("login.html"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    refused = cli("read_image", "pic.png", cwd=elsewhere, check=False)
    assert refused.returncode == 1 and f"{elsewhere}/pic.png" in refused.stderr  # not the daemon's directory
    cli("navigate", site.url("image.html"), env={"WEBHAND_SESSION": "side"})
    assert site.url("image.html") in cli("get_url", "--session", "side").stdout
    assert site.url("login.html") in cli("get_url").stdout  # the daemon's own environment had no session
    usage = cli("get_url", "--bogus", check=False)
    assert usage.returncode == 2 and "unrecognized arguments: --bogus" in usage.stderr and usage.stdout == ""


def test_global_options_come_before_or_after_the_command_and_version_is_printed(tmp_path, capsys):
    from webhand import __version__
    from webhand.surfaces.cli.main import main

    config = tmp_path / "webhand.toml"
    config.write_text("[agents.offline.browser]\nenabled = false\n")
    for argv in (["--config", str(config), "--agent", "offline", "schema", "--caps", "core"],
                 ["schema", "--config", str(config), "--agent", "offline", "--caps", "all"],
                 [f"--config={config}", "--agent=offline", "--caps", "core", "schema", "--tool-style", "single"]):
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out) == [], f"enabled = false serves no tool, whatever the flags: {argv}"
    assert main(["--config", str(config), "schema"]) == 0
    assert len(json.loads(capsys.readouterr().out)) > 5, "the default agent has its browser"
    assert main(["--version"]) == 0 and capsys.readouterr().out == f"webhand {__version__}\n"


def test_help_is_short_and_grouped_with_topics_and_an_unknown_command_gets_the_closest(tmp_path):
    """Issue 42 item 2: `webhand --help` was ~200 lines of every command with its alias, and an
    unknown word printed all 150 names."""
    cli = Cli(tmp_path)
    shown = cli("--help").stdout
    assert len(shown.splitlines()) <= 45 and "get-url" not in shown
    assert "Act at screenshot coordinates (vision):" in shown and "--browser chromium|firefox" in shown
    group = cli("help", "vision").stdout
    assert "mouse_click_xy" in group and "Click at a point of the last screenshot" in group and "navigate" not in group
    assert "usage: webhand navigate" in cli("help", "navigate").stdout
    wrong = cli("naviagte", "https://example.com", check=False)
    assert wrong.returncode == 2 and "Did you mean navigate?" in wrong.stderr and "mouse_wheel_xy" not in wrong.stderr
    assert not (cli.runtime / "webhand" / "daemon.sock").exists()


def test_settings_are_global_options_anywhere_and_yes_no_fields_take_every_form(cli, site):
    """Issue 42 items 1, 3 and 5: `--profile`, `--browser` were refused before or after a tool
    command; `handle_dialog --accept false` printed the usage; a daemon started with a profile
    warned on every later call that asked for nothing."""
    other = "firefox" if cli.env.get("WEBHAND_DRIVER") != "firefox" else "chromium"
    cli("--headless", "--timeout", "20", "get_url", "--session", "d")  # starts the daemon with these settings
    cli("navigate", site.url("tabs_files/dialogs.html"), "--session", "d", "--timeout", "9")  # that call's own
    assert site.url("tabs_files/dialogs.html") in cli("get_url", "--session", "d").stdout
    asked = cli("--session", "d", "get_url", "--browser", other)
    assert f"this command asked for {other}, but the running daemon has" in asked.stderr
    assert "webhand daemon stop" in asked.stderr
    assert "warning" not in cli("get_url", "--session", "d").stderr, "asking for nothing is no difference"
    assert "asked for a 7 s timeout, but the running daemon has a 20 s timeout" in \
        cli("get_url", "--session", "d", "--timeout", "7").stderr
    page = cli("snapshot", "--session", "d").stdout
    for typed, answer in ((["--accept", "false"], "kept"), (["--no-accept"], "kept"), (["true"], "deleted"),
                          (["--accept=yes"], "deleted")):
        cli("click", ref_of(page, 'button "Confirm"'), "--session", "d")
        cli("handle_dialog", *typed, "--session", "d")
        assert f"status: {answer}" in cli("snapshot", "--session", "d").stdout, typed
    # Issue 42 item 4: a hint names the command a CLI user runs, not the MCP tool.
    stale = cli("click", "e999", "--session", "d", check=False)
    assert "`webhand snapshot`" in stale.stderr and "browser_" not in stale.stderr
    assert "browser_" not in cli("handle_dialog", "--accept", "--session", "d", check=False).stderr
    # Issue 38 item 14: the model-sized screenshot, whose pixels the coordinate tools take, is kept and named.
    cli("navigate", site.url("tall.html"), "--session", "d")
    shot = json.loads(cli("take_screenshot", "--full-page", "--json", "--session", "d").stdout)
    sent = shot["data"]["sent"]
    assert sent["path"] != shot["data"]["path"] and sent["height"] < shot["data"]["height"]
    assert shot["images"][0]["sent_path"] == sent["path"] and f"is saved to {sent['path']}" in shot["text"]
    with Image.open(sent["path"]) as picture:
        assert picture.size == (sent["width"], sent["height"])
    # Issue 38 item 14: the session closed is the one named.
    assert cli("close", "--session", "d").stdout.startswith("Closed session 'd'.")
    cli("daemon", "stop")
    cli("daemon", "start", "--browser", other)  # refused as an unrecognized argument before
    assert cli.status()["settings"]["browser"] == other
    cli("daemon", "stop")
    # A daemon started with a profile: a later call that names none is not warned.
    data = cli.runtime.parent / "data"
    env = {"XDG_DATA_HOME": str(data)}
    cli("--profile", "work", "get_url", env=env)
    assert cli.status()["settings"]["profile"] == "work"
    assert "warning" not in cli("get_url", env=env).stderr
    differs = cli("get_url", "--profile", "home", env=env)
    assert "asked for profile home, but the running daemon has profile work" in differs.stderr


def test_a_saved_login_is_reused_from_the_folder_the_commands_run_in(cli, site, tmp_path):
    """Issue 42 item 6: `storage_state save login.json` was refused (the CLI made it absolute, then
    the message said a relative path goes into the conversation's folder), and each --session has
    its own folder, so reusing the login needed a `roots` setting nobody mentioned."""
    work = tmp_path / "work"
    work.mkdir()
    cli("navigate", site.url("set-cookie?flavour=oat"), cwd=work)
    assert "Saved 1 cookie" in cli("storage_state", "save", "login.json", cwd=work).stdout
    assert (work / "login.json").is_file()
    cli("--session", "other", "storage_state", "load", "login.json", cwd=work)
    cli("--session", "other", "navigate", site.url("login.html"), cwd=work)
    assert json.loads(cli("eval", "document.cookie", "--session", "other", "--json").stdout)["data"] == \
        {"result": "flavour=oat"}
    refused = cli("storage_state", "save", str(tmp_path / "elsewhere.json"), cwd=work, check=False)
    assert refused.returncode == 1 and f"{work} (the folder this command runs in)" in refused.stderr
    assert "inside the conversation's own folder" not in refused.stderr
    out = tmp_path / "out"  # webhand's output folder: private, so never a command's folder
    inside = cli("storage_state", "save", "x.json", cwd=out, check=False)
    assert inside.returncode == 1 and "inside webhand's output folder" in inside.stderr
    cli("daemon", "stop")
    cli("--storage-state", "login.json", "navigate", site.url("login.html"), cwd=work)
    assert json.loads(cli("eval", "document.cookie", "--json", cwd=work).stdout)["data"] == {"result": "flavour=oat"}
