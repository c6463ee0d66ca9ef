"""A flow exported as a Playwright for Python script runs green without webhand.

Each test writes a flow as data (the team app of tests/pages/flow_export: rows with a Delete each
behind a confirm, a labelled form, a download, a pad clicked at a point), exports it, writes the
script to a temporary folder and runs it in a subprocess of plain Python with Playwright, on the
Chromium webhand uses (``--executable-path``); then asserts on what the app's server saw. The same
flow runs on the shifted build of the app (classes renamed, a banner with its own Delete and Add
buttons inserted, the pad moved): the recorded CSS paths no longer find the elements, the role
inside its row does.
"""

from __future__ import annotations

import ast
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from webhand.tools.flows.format import Flow
from webhand.tools.flows.playwright_script import export_flow

PAGES = Path(__file__).parent / "pages" / "flow_export"
#: How long one exported script may run (it starts its own browser).
SCRIPT_TIMEOUT = 120


class _AppHandler(http.server.SimpleHTTPRequestHandler):
    """The team app: its pages (the shifted build when ``server.shifted``), and its API."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=str(PAGES), **kwargs)

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        server: _AppServer = self.server  # type: ignore[assignment]
        server.seen.append(("GET", self.path))
        if self.path == "/app.html" and server.shifted:
            self.path = "/shifted.html"
        if self.path == "/api/rows":
            self._send(200, json.dumps(server.rows).encode(), "application/json")
        elif self.path == "/api/export.csv":
            body = "\n".join(f"{r['name']},{r['email']}" for r in server.rows).encode()
            self._send(200, body, "text/csv", {"Content-Disposition": 'attachment; filename="team.csv"'})
        elif self.path.startswith("/done/"):
            self._send(200, b"<!doctype html><title>Done</title><h1>All done</h1>", "text/html")
        else:
            super().do_GET()

    def do_POST(self) -> None:
        server: _AppServer = self.server  # type: ignore[assignment]
        server.seen.append(("POST", self.path))
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        if self.path == "/api/rows":
            server.rows.append(json.loads(body))
        elif self.path == "/api/rows/delete":
            name = json.loads(body)["name"]
            server.rows[:] = [row for row in server.rows if row["name"] != name]
        elif self.path == "/api/pad":
            server.pad.append(body)
        else:
            self._send(404, b"", "text/plain")
            return
        self._send(200, b"{}", "application/json")


class _AppServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, shifted: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _AppHandler)
        self.shifted = shifted
        self.rows = [{"name": "alice", "email": "alice@example.com"}, {"name": "bob", "email": "bob@example.com"}]
        self.pad: list[str] = []
        self.seen: list[tuple[str, str]] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{path.lstrip('/')}"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


@pytest.fixture
def app():
    server = _AppServer()
    yield server
    server.stop()


@pytest.fixture
def shifted_app():
    server = _AppServer(shifted=True)
    yield server
    server.stop()


RECORDED_ORIGIN = "http://127.0.0.1:8765"  # the flow was "recorded" elsewhere: each run gives --base-url


def team_flow() -> Flow:
    """The team task as the flows recorder would save it: targets found several ways, the CSS paths
    those of the first build (app.html)."""
    return Flow.model_validate({
        "webhand_flow": 1, "name": "team-add-and-delete", "description": "Add a member, delete bob, export, pick",
        "start_url": f"{RECORDED_ORIGIN}/app.html",
        "params": {"name": {"description": "who to add"}, "email": {"default": "carol@example.com"}},
        "steps": [
            {"tool": "browser_type", "arguments": {"ref": "@1", "text": "{{name}}"}, "note": "textbox 'Name'",
             "targets": {"@1": {"role": "textbox", "name": "Name", "label": "Name", "attributes": {"name": "name"},
                                "css": "form.add-form > label:nth-child(1) > input.name-input"}}},
            {"tool": "browser_fill_form", "arguments": {"fields": [
                {"ref": "@2", "value": "{{email}}"}, {"ref": "@3", "value": "blue"}, {"ref": "@4", "value": True}]},
             "targets": {"@2": {"role": "textbox", "name": "Email", "placeholder": "you@example.com",
                                "css": "#add-form > label:nth-child(2) > input"},
                         "@3": {"role": "combobox", "name": "Team", "attributes": {"name": "team"},
                                "css": "#add-form > select"},
                         "@4": {"role": "checkbox", "name": "Admin", "css": "#add-form input[type=checkbox]"}}},
            {"tool": "browser_click", "arguments": {"ref": "@5"}, "note": "button 'Add'",
             "targets": {"@5": {"role": "button", "name": "Add", "ancestors": [{"role": "form", "name": ""}],
                                "css": "form.add-form > button.add-btn"}}},
            {"tool": "browser_wait_for", "arguments": {"text": "{{email}}"}},
            {"tool": "browser_click", "arguments": {"ref": "@6"}, "note": "button 'Delete' in row 'bob'",
             "targets": {"@6": {"role": "button", "name": "Delete", "ancestors": [{"role": "row", "name": "bob"}],
                                "css": "#rows > tr:nth-child(2) > td:nth-child(3) > button"}},
             "expect": {"dialog": "confirm"}},
            {"tool": "browser_handle_dialog", "arguments": {"accept": True}},
            {"tool": "browser_wait_for", "arguments": {"text_gone": "bob@example.com"}},
            {"tool": "browser_click", "arguments": {"ref": "@7"}, "note": "link 'Export CSV'",
             "targets": {"@7": {"role": "link", "name": "Export CSV", "attributes": {"href": "/api/export.csv"}}},
             "expect": {"download": "team.csv"}},
            {"tool": "browser_take_screenshot", "arguments": {}},
            {"tool": "browser_mouse_click_xy", "arguments": {"x": 170, "y": 400}, "note": "the right of the pad",
             "targets": {"@8": {"role": "img", "name": "Pad", "css": "div.pad", "point": {"x": 0.85, "y": 0.5}}}},
            {"tool": "browser_wait_for", "arguments": {"text": "picked right"}},
            {"tool": "browser_click", "arguments": {"ref": "@9"}, "note": "link 'Finish'",
             "targets": {"@9": {"role": "link", "name": "Finish", "attributes": {"href": "/done/7"}}},
             "expect": {"url": f"{RECORDED_ORIGIN}/done/7"}},
        ]})


def chromium() -> str:
    from webhand.engine.launch.chromium_binary import find_chromium

    return find_chromium()


def run_script(path: Path, *args: str, env: dict[str, str] | None = None,
               command: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """The script run by a Python that has Playwright, in a fresh process, with no webhand on its path."""
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    clean.update(env or {})
    return subprocess.run(command or [sys.executable, str(path), *args], capture_output=True, text=True,
                          timeout=SCRIPT_TIMEOUT, env=clean, cwd=path.parent, stdin=subprocess.DEVNULL)


def _assert_done(server: _AppServer, result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    names = [row["name"] for row in server.rows]
    assert names == ["alice", "carol"], names
    assert server.rows[1] == {"name": "carol", "email": "carol@example.com", "admin": True, "team": "blue"}
    assert ("GET", "/api/export.csv") in server.seen
    assert server.pad == ["right"]
    assert ("GET", "/done/7") in server.seen


def test_the_exported_script_imports_no_webhand_and_parses():
    export = export_flow(team_flow())
    tree = ast.parse(export.text)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names} | \
        {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any(name and name.startswith("webhand") for name in imported), imported
    assert "playwright.sync_api" in imported
    assert export.unsupported == []
    # Role inside its ancestors first, then the unscoped role, the recorded fallbacks after.
    assert "page.get_by_role('row', name='bob', exact=True).get_by_role('button', name='Delete', exact=True)" \
        in export.text
    assert "page.once('dialog', lambda dialog: dialog.accept())" in export.text


def test_a_plain_script_runs_green_on_chromium_with_params_and_base_url(app, tmp_path):
    script = tmp_path / "team.py"
    script.write_text(export_flow(team_flow()).text, encoding="utf-8")
    result = run_script(script, "--executable-path", chromium(), "--base-url", app.url(""), "--name", "carol")
    _assert_done(app, result)
    assert (tmp_path / "downloads" / "team.csv").read_text() == "alice,alice@example.com\ncarol,carol@example.com"


def test_the_script_heals_on_a_shifted_build_of_the_app(shifted_app, tmp_path):
    """Classes renamed, a banner with its own Delete and Add inserted, the pad moved and resized:
    the CSS paths recorded find nothing or the wrong element, the roles (in their row) find the right one."""
    script = tmp_path / "team.py"
    script.write_text(export_flow(team_flow()).text, encoding="utf-8")
    result = run_script(script, "--executable-path", chromium(), "--base-url", shifted_app.url(""), "--name", "carol")
    _assert_done(shifted_app, result)
    healed = [line.split(":")[0] for line in result.stderr.splitlines() if ": healed: found by" in line]
    assert healed == [], result.stderr  # the first way recorded (role and name, in its row) still finds each
    for way in ("form.add-form > button.add-btn", "div.pad"):  # what the old build's CSS paths find now
        assert way in script.read_text()


def test_a_drag_between_two_elements_runs_from_the_handle_to_the_same_place_on_its_track(site, tmp_path):
    """A vision model's drag, recorded on tests/pages/flows/slider.html (its handle to 75% of its
    track), runs on the moved build (?v=moved: the slider lower, its track shorter and further
    right): the script drags from the handle's box to the same fraction of the track's box, where
    the recorded pixels would miss the handle altogether."""
    flow = Flow.model_validate({
        # Recorded on the first build; the run starts on the moved one (as a shifted build of an app).
        "webhand_flow": 1, "name": "volume", "start_url": f"{RECORDED_ORIGIN}/flows/slider.html?v=moved",
        "steps": [
            {"tool": "browser_take_screenshot", "arguments": {}},
            {"tool": "browser_mouse_drag_xy", "arguments": {"start_x": 8, "start_y": 100, "end_x": 308, "end_y": 100},
             "note": "mouse_drag_xy slider 'Volume', group 'Volume track'",
             "targets": {"@1": {"role": "slider", "name": "Volume", "css": "#handle", "point": {"x": 0.5, "y": 0.5}},
                         "@2": {"role": "group", "name": "Volume track", "css": "#track", "point": {"x": 0.75, "y": 0.5}}}},
            {"tool": "browser_wait_for", "arguments": {"text": "Volume set to 75"}},
        ]})
    script = tmp_path / "volume.py"
    script.write_text(export_flow(flow).text, encoding="utf-8")
    assert "end_box['width'] * 0.75" in script.read_text()
    origin = site.url("flows/slider.html").removesuffix("/flows/slider.html")
    result = run_script(script, "--executable-path", chromium(), "--base-url", origin)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_missing_parameter_is_a_usage_error_and_a_missing_step_names_what_it_tried(app, tmp_path):
    script = tmp_path / "team.py"
    script.write_text(export_flow(team_flow()).text, encoding="utf-8")
    result = run_script(script, "--executable-path", chromium(), "--base-url", app.url(""))
    assert result.returncode == 2 and "--name" in result.stderr, result.stderr
    flow = team_flow().model_dump()
    flow["steps"] = flow["steps"][:1]
    flow["steps"][0]["targets"]["@1"] = {"role": "textbox", "name": "Surname", "css": "#surname"}
    script.write_text(export_flow(Flow.model_validate(flow)).text.replace("FIND_TIMEOUT_MS = 10000",
                                                                          "FIND_TIMEOUT_MS = 1000"), encoding="utf-8")
    result = run_script(script, "--executable-path", chromium(), "--base-url", app.url(""), "--name", "x")
    assert result.returncode == 1
    assert "LookupError: step 1 (textbox 'Name'): no locator matched exactly one element" in result.stderr, result.stderr
    assert "Surname" in result.stderr and "#surname" in result.stderr


def test_a_secret_is_read_from_the_environment_and_never_written(app, tmp_path):
    flow = team_flow().model_dump()
    flow["steps"][0]["arguments"]["text"] = "<secret>MEMBER_NAME</secret>"
    text = export_flow(Flow.model_validate(flow)).text
    assert "secret('MEMBER_NAME')" in text
    script = tmp_path / "team.py"
    script.write_text(text, encoding="utf-8")
    unset = run_script(script, "--executable-path", chromium(), "--base-url", app.url(""), "--name", "x")
    assert unset.returncode == 1 and "the secret MEMBER_NAME is not set" in unset.stdout + unset.stderr
    result = run_script(script, "--executable-path", chromium(), "--base-url", app.url(""), "--name", "x",
                        env={"MEMBER_NAME": "carol"})
    _assert_done(app, result)


def test_a_pytest_style_script_runs_green_with_a_page_fixture(app, tmp_path):
    """The pytest style uses pytest-playwright's ``page`` fixture; this machine's venv has no
    pytest-playwright (a plugin would add options to every test run here), so a conftest gives the
    same fixture: a page of a Chromium launched by Playwright."""
    (tmp_path / "test_team.py").write_text(export_flow(team_flow(), "pytest").text, encoding="utf-8")
    (tmp_path / "conftest.py").write_text(
        "import pytest\nfrom playwright.sync_api import sync_playwright\n\n\n@pytest.fixture\ndef page():\n"
        "    with sync_playwright() as playwright:\n"
        f"        browser = playwright.chromium.launch(executable_path={chromium()!r})\n"
        "        yield browser.new_context(accept_downloads=True).new_page()\n        browser.close()\n",
        encoding="utf-8")
    result = run_script(tmp_path / "test_team.py", env={"FLOW_BASE_URL": app.url(""), "FLOW_NAME": "carol"},
                        command=[sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                                 "-p", "no:asyncio", "test_team.py"])
    _assert_done(app, result)
    assert "1 passed" in result.stdout


def test_a_tool_without_a_playwright_equivalent_raises_and_is_listed():
    flow = Flow.model_validate({"name": "sw", "start_url": "http://127.0.0.1:9/", "steps": [
        {"tool": "browser_service_workers", "arguments": {"action": "unregister"}},
        {"tool": "browser_wait_for", "arguments": {"javascript": "window.__import__ = 1"}}]})
    export = export_flow(flow)
    assert export.unsupported == [
        "step 1: browser_service_workers has no Playwright equivalent in this export; do it by hand here",
        "step 2: browser_wait_for waits on JavaScript the model wrote, which an export never carries; "
        "write the wait here"]
    assert "window.__import__" not in export.text
    assert export.text.count("raise NotImplementedError(") == 2


def test_webhand_export_writes_a_flow_or_a_history_as_a_playwright_script(app, tmp_path):
    """``webhand export --flow FILE`` for a saved flow; ``webhand export HISTORY --format playwright``
    for a session's history (its targets the recorded CSS selectors)."""
    import webhand

    flow_file = tmp_path / "team.json"
    flow_file.write_text(team_flow().model_dump_json(), encoding="utf-8")
    env = {"PYTHONPATH": str(Path(webhand.__file__).parents[1]), "HOME": str(tmp_path),
           "XDG_RUNTIME_DIR": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for form, name in (("playwright", "team.py"), ("playwright-pytest", "test_team.py")):
        made = subprocess.run([sys.executable, "-m", "webhand", "export", "--flow", str(flow_file), "--format", form,
                               "-o", str(tmp_path / name)], capture_output=True, text=True, env=env, timeout=60)
        assert made.returncode == 0, made.stderr
        compile((tmp_path / name).read_text(), name, "exec")
    result = run_script(tmp_path / "team.py", "--executable-path", chromium(), "--base-url", app.url(""),
                        "--name", "carol")
    _assert_done(app, result)
    history = tmp_path / "s.jsonl"
    history.write_text(json.dumps({
        "index": 1, "tool": "browser_navigate", "arguments": {"url": app.url("app.html")}, "outcome": "ok",
        "url_after": app.url("app.html")}) + "\n" + json.dumps({
            "index": 2, "tool": "browser_type", "arguments": {"ref": "e3", "text": "dora", "submit": True},
            "outcome": "ok", "targets": {"e3": {"role": "textbox", "name": "Name", "selector": "input[name=name]"}}})
        + "\n" + json.dumps({"index": 3, "tool": "browser_click", "arguments": {"ref": "e9"}, "outcome": "ok",
                             "targets": {"e9": {"role": "link", "name": "Finish", "selector": "a[href='/done/7']"}},
                             "url_after": app.url("done/7")}) + "\n", encoding="utf-8")
    made = subprocess.run([sys.executable, "-m", "webhand", "export", str(history), "--format", "playwright",
                           "-o", str(tmp_path / "s.py")], capture_output=True, text=True, env=env, timeout=60)
    assert made.returncode == 0, made.stderr
    result = run_script(tmp_path / "s.py", "--executable-path", chromium())
    assert result.returncode == 0, result.stderr
    assert {"name": "dora", "email": "", "admin": False, "team": "red"} in app.rows


#: Playwright's own Firefox is a patched build (Juggler) that cannot be downloaded on this machine;
#: Playwright for Python drives a stock Firefox over WebDriver BiDi instead (channel "moz-firefox").
FIREFOX_PROBE = """
import sys
from playwright.sync_api import sync_playwright
with sync_playwright() as playwright:
    browser = playwright.firefox.launch(channel="moz-firefox", executable_path=sys.argv[1])
    try:
        browser.new_context().new_page().set_content("<p>ok</p>")
    finally:
        browser.close()
"""


def firefox_or_why() -> tuple[str | None, str]:
    """The stock Firefox, when Playwright for Python can drive it over BiDi; else why not, as it failed."""
    from webhand.engine.bidi.firefox import find_firefox

    try:
        firefox = find_firefox()
    except Exception as error:  # noqa: BLE001 - no Firefox: the reason is the skip's
        return None, f"no Firefox: {error}"
    probe = subprocess.run([sys.executable, "-c", FIREFOX_PROBE, firefox], capture_output=True, text=True,
                           timeout=SCRIPT_TIMEOUT)
    if probe.returncode == 0:
        return firefox, ""
    error = next((line for line in probe.stderr.splitlines() if "Error" in line and ":" in line), probe.stderr[-300:])
    version = subprocess.run([firefox, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    known = (" (Playwright sends emulation.setMediaFeaturesOverride whenever it makes a context, a BiDi command "
             "this Firefox does not implement yet)") if "setMediaFeaturesOverride" in error else ""
    return None, (f"Playwright for Python launches {version} over WebDriver BiDi (channel moz-firefox), but a "
                  f"browser context fails: {error.strip()}{known}; Playwright's own patched Firefox cannot be "
                  "downloaded here")


def test_a_plain_script_runs_green_on_firefox(app, tmp_path):
    firefox, why = firefox_or_why()
    if firefox is None:
        pytest.skip(why)
    script = tmp_path / "team.py"
    script.write_text(export_flow(team_flow()).text, encoding="utf-8")
    result = run_script(script, "--browser", "firefox", "--executable-path", firefox, "--base-url", app.url(""),
                        "--name", "carol")
    _assert_done(app, result)


def _ref(snapshot: str, pattern: str) -> str:
    import re

    match = re.search(pattern + r" \[(e\d+)\]", snapshot)
    assert match, f"{pattern} not in:\n{snapshot}"
    return match.group(1)


@pytest.mark.one_driver("the flow is recorded by webhand's tools; what is tested is its export, run by Playwright alone")
async def test_a_task_done_through_the_tools_saved_as_a_flow_exports_and_runs_green_on_a_shifted_build(
        tools, data_home, tmp_path):
    """The whole path: the task done by refs through webhand's tools, saved with browser_save_flow
    (the name a parameter), exported by name with `webhand export --flow`, then run by plain Playwright
    on a fresh instance of the app, and on its shifted build."""
    import asyncio

    import webhand

    recorded = _AppServer()
    try:
        await tools.call("browser_navigate", {"url": recorded.url("app.html")})
        await tools.call("browser_wait_for", {"text": "bob@example.com"})
        shot = (await tools.call("browser_snapshot", {})).text
        for name, arguments in [
                ("browser_type", {"ref": _ref(shot, 'textbox "Name"'), "text": "carol"}),
                ("browser_type", {"ref": _ref(shot, 'textbox "Email"'), "text": "carol@example.com"}),
                ("browser_check", {"ref": _ref(shot, 'checkbox "Admin"')}),
                ("browser_select_option", {"ref": _ref(shot, 'combobox "Team"'), "values": ["blue"]}),
                ("browser_click", {"ref": _ref(shot, 'button "Add"')})]:
            reply = await tools.call(name, arguments)
            assert not reply.is_error, reply.text
        await tools.call("browser_wait_for", {"text": "carol@example.com"})
        shot = (await tools.call("browser_snapshot", {})).text
        delete_bob = _ref(shot[shot.index('bob@example.com'):], 'button "Delete"')
        reply = await tools.call("browser_click", {"ref": delete_bob})
        assert "confirm" in reply.text.lower(), reply.text
        reply = await tools.call("browser_handle_dialog", {"accept": True})
        assert not reply.is_error, reply.text
        await tools.call("browser_wait_for", {"text_gone": "bob@example.com"})
        assert [row["name"] for row in recorded.rows] == ["alice", "carol"]
        saved = await tools.call("browser_save_flow", {"name": "team", "params": {"who": "carol"}})
        assert not saved.is_error, saved.text
    finally:
        recorded.stop()
    env = {"PYTHONPATH": str(Path(webhand.__file__).parents[1]), "HOME": str(tmp_path), "XDG_DATA_HOME": str(data_home),
           "XDG_RUNTIME_DIR": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    made = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "webhand", "export", "--flow", "team",
                                                    "-o", str(tmp_path / "team.py")],
                                   capture_output=True, text=True, env=env, timeout=60)
    assert made.returncode == 0, made.stderr
    assert made.stderr == ""  # every step has a Playwright equivalent
    for shifted in (False, True):
        fresh = _AppServer(shifted=shifted)
        try:
            result = await asyncio.to_thread(run_script, tmp_path / "team.py", "--executable-path", chromium(),
                                             "--base-url", fresh.url(""), "--who", "dora")
            assert result.returncode == 0, result.stdout + result.stderr
            assert [row["name"] for row in fresh.rows] == ["alice", "dora"], (shifted, fresh.rows)
            assert fresh.rows[1] == {"name": "dora", "email": "dora@example.com", "admin": True, "team": "blue"}
        finally:
            fresh.stop()
