"""`webhand export` and `webhand replay`: a session's history runs again on a fresh page."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path

import psutil
import pytest

from helpers import CLI_TIMEOUT, ref_of, settings_for_tests, wait_until_gone
from webhand.surfaces.cli.export import render, steps_of
from webhand.surfaces.cli.replay import load_export, replay

SRC = str(Path(__file__).parent.parent / "src")
#: A last step the tests add to an export: what the replayed page holds.
READ_BACK = {"tool": "browser_eval", "arguments": {"expression": "[document.querySelector('#name').value, "
             "document.querySelector('#terms').checked, document.querySelector('#color').value].join(' ')"}}


async def act_on_the_form(tools, site) -> list[dict]:
    """An agent's session on the form page, acting through refs only; returns its history."""
    await tools.call("browser_navigate", {"url": site.url("actions/form.html")})
    snapshot = (await tools.call("browser_snapshot", {})).text
    assert 'textbox "Name" [e1]' in snapshot and 'checkbox "I agree" [e8]' in snapshot
    for call in [("browser_type", {"ref": "e1", "text": "Ada"}), ("browser_click", {"ref": "e8"}),
                 ("browser_select_option", {"ref": "e3", "values": ["Blue"]}),
                 ("browser_click", {"ref": "e99"})]:  # a failed call: left out of the export
        await tools.call(*call)
    session = tools.webhand.sessions.find(tools.conversation_id)
    return session.history.all()


async def test_export_turns_refs_into_selectors_and_leaves_out_reads_and_failures(tools, site):
    steps = steps_of(await act_on_the_form(tools, site))
    assert [s["tool"] for s in steps] == ["browser_navigate", "browser_type", "browser_click", "browser_select_option"]
    assert steps[1]["arguments"] == {"selector": "#name", "text": "Ada"} and steps[1]["target"] == "textbox 'Name'"
    assert all("ref" not in s["arguments"] and "unresolved" not in s for s in steps)


@pytest.mark.not_on_firefox("export and replay are above the Driver, and the exported script starts a Chromium of its own; recording on Firefox is covered by the first export test")
async def test_json_export_replays_green_on_a_fresh_page(tools, site, tmp_path_factory, tmp_path, driver):
    export = tmp_path / "form.json"
    export.write_text(render(steps_of(await act_on_the_form(tools, site)), "json", "default"))
    settings = settings_for_tests(tmp_path_factory, warm_reserve=False, driver=driver)
    report = await replay(load_export(export), settings)
    assert report.matched, report.difference
    assert report.steps == report.total == 4


@pytest.mark.not_on_firefox("export and replay are above the Driver, and the exported script starts a Chromium of its own; recording on Firefox is covered by the first export test")
async def test_replay_reports_the_first_step_that_differs(tools, site, tmp_path_factory, driver):
    steps = steps_of(await act_on_the_form(tools, site))
    steps[2]["arguments"]["selector"] = "#no-such-checkbox"
    report = await replay(steps, settings_for_tests(tmp_path_factory, warm_reserve=False, action_timeout=1,
                                                    driver=driver))
    assert not report.matched and report.steps == 3
    assert report.difference.startswith("Step 3 (browser_click on checkbox 'I agree') failed:")
    assert "#no-such-checkbox" in report.difference


def _env(tmp_path: Path) -> dict[str, str]:
    """A child webhand with its own runtime folder, so its PID registry can be checked after it ends."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return {**os.environ, "PYTHONPATH": SRC, "WEBHAND_OUTPUT_DIR": str(tmp_path / "out"), "XDG_RUNTIME_DIR": str(runtime),
            "WEBHAND_WARM_RESERVE": "false", "WEBHAND_ISOLATION": "context"}


def browsers_left(tmp_path: Path) -> list[Path]:
    """Registry entries of browsers a child webhand launched and did not close."""
    return list((tmp_path / "run" / "webhand" / "browsers").glob("*.json"))


@pytest.mark.not_on_firefox("export and replay are above the Driver, and the exported script starts a Chromium of its own; recording on Firefox is covered by the first export test")
async def test_python_export_runs_on_a_fresh_browser(tools, site, tmp_path):
    script = tmp_path / "replay_form.py"
    steps = steps_of(await act_on_the_form(tools, site)) + [READ_BACK]
    script.write_text(render(steps, "python", "default"))
    done = subprocess.run([sys.executable, str(script)], env=_env(tmp_path), capture_output=True, text=True,
                          timeout=CLI_TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert 'step 5: "Ada true b"' in done.stdout
    assert not browsers_left(tmp_path)


@pytest.mark.not_on_firefox("export and replay are above the Driver, and the exported script starts a Chromium of its own; recording on Firefox is covered by the first export test")
async def test_cli_export_runs_as_a_shell_script(tools, site, tmp_path):
    script = tmp_path / "replay_form.sh"
    steps = steps_of(await act_on_the_form(tools, site)) + [READ_BACK]
    script.write_text(render(steps, "cli", "default"))
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "webhand").write_text(f"#!/bin/sh\nexec {sys.executable} -m webhand \"$@\"\n")
    (shim / "webhand").chmod(0o755)
    env = {**_env(tmp_path), "PATH": f"{shim}:{os.environ['PATH']}"}
    try:
        done = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT * 2,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        assert '"Ada true b"' in done.stdout
    finally:
        daemon = psutil.Process(int((tmp_path / "run" / "webhand" / "daemon.lock").read_text()))
        subprocess.run([sys.executable, "-m", "webhand", "daemon", "stop"], env=env, capture_output=True,
                       timeout=CLI_TIMEOUT, stdin=subprocess.DEVNULL)
        assert not wait_until_gone([daemon]), "the daemon did not exit"  # it closes its browsers first
    assert not browsers_left(tmp_path)


def test_export_command_reads_a_history_file(tmp_path):
    history = tmp_path / "default-abc.jsonl"
    history.write_text(json.dumps({"index": 1, "tool": "browser_navigate", "arguments": {"url": "http://127.0.0.1:9/"},
                                   "outcome": "ok", "url_after": "http://127.0.0.1:9/", "targets": {}}) + "\n")
    done = subprocess.run([sys.executable, "-m", "webhand", "export", str(history), "--format", "cli"],
                          env=_env(tmp_path), capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert "webhand navigate --session \"$S\" -- http://127.0.0.1:9/" in done.stdout


def test_cli_session_exports_through_the_daemon_and_replays(cli, site, tmp_path):
    cli("navigate", site.url("actions/form.html"))
    assert 'textbox "Name" [e1]' in cli("snapshot").stdout
    cli("type", "e1", "Ada")
    export = tmp_path / "form.json"
    previous = os.umask(0o022)  # the usual umask, which would leave the export readable by everyone
    try:
        cli("export", "default", "--format", "json", "-o", str(export))
    finally:
        os.umask(previous)
    assert stat.S_IMODE(export.stat().st_mode) == 0o600
    steps = json.loads(export.read_text())["steps"]
    assert [s["arguments"] for s in steps] == [{"url": site.url("actions/form.html")}, {"selector": "#name", "text": "Ada"}]
    assert "Replayed 2 steps: each ended as recorded." in cli("replay", str(export)).stdout


def test_cli_dashboard_is_served_by_the_daemon_on_loopback(cli, site):
    cli("navigate", site.url("actions/form.html"))
    line = cli("dashboard").stdout
    url, _, fragment = line.split()[2].partition("#token=")
    assert url.startswith("http://127.0.0.1:") and url.endswith("/dashboard/")
    request = urllib.request.Request(url + "api/sessions", headers={"Authorization": f"Bearer {fragment}"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        sessions = json.loads(reply.read())["sessions"]
    assert [(s["conversation"], s["url"]) for s in sessions] == [("cli:default", site.url("actions/form.html"))]


def test_an_export_keeps_the_screenshot_a_coordinate_click_needs_drops_a_no_op_and_replays_in_each_form(
        cli, site, tmp_path):
    """Issue 38 item 16: exports dropped the screenshot a following mouse_click_xy is measured on,
    so each replay stopped at the click; they kept a click that changed nothing."""
    page = site.url("actions/export_xy.html")
    cli("navigate", page)
    cli("take_screenshot")
    assert "clicks: 1" in cli("mouse_click_xy", "100", "300").stdout
    snapshot = cli("snapshot").stdout
    assert "No change seen" in cli("click", ref_of(snapshot, 'button "Nothing"')).stdout
    exported = {form: tmp_path / f"xy.{form}" for form in ("json", "python", "cli")}
    for form, path in exported.items():
        cli("export", "default", "--format", form, "-o", str(path))
    steps = json.loads(exported["json"].read_text())["steps"]
    assert [s["tool"] for s in steps] == ["browser_navigate", "browser_take_screenshot", "browser_mouse_click_xy"]
    assert "Replayed 3 steps: each ended as recorded." in cli("replay", str(exported["json"])).stdout
    (tmp_path / "py").mkdir()
    python = subprocess.run([sys.executable, str(exported["python"])], env=_env(tmp_path / "py"), capture_output=True,
                            text=True, timeout=CLI_TIMEOUT, stdin=subprocess.DEVNULL)
    assert python.returncode == 0 and 'step 3: Clicked at' in python.stdout, python.stdout + python.stderr
    assert not browsers_left(tmp_path / "py")
    shell = subprocess.run(["sh", str(exported["cli"])], env={**cli.env, "PATH": f"{_shim(tmp_path)}:{os.environ['PATH']}"},
                           capture_output=True, text=True, timeout=CLI_TIMEOUT * 2, stdin=subprocess.DEVNULL)
    assert shell.returncode == 0 and "clicks: 1" in shell.stdout, shell.stdout + shell.stderr


def _shim(tmp_path: Path) -> Path:
    """A folder with a ``webhand`` command that runs this checkout's, for an exported shell script."""
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "webhand").write_text(f"#!/bin/sh\nexec {sys.executable} -m webhand \"$@\"\n")
    (shim / "webhand").chmod(0o755)
    return shim
