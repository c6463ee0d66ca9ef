#!/usr/bin/env python3
"""Flows on real apps: a task done once through webhand's tools, saved as a flow, replayed on a fresh instance.

    .venv/bin/python bench/flows.py                 # every app; writes bench/results/flows.json and .md
    .venv/bin/python bench/flows.py --apps django   # one app (bench, django, swagger)
    make bench                                       # runs it too, as the `flows` suite

Three apps, each started fresh for the replay:
- ``bench``: the bench's own pages (bench/pages.py): sign in, then add, check and delete todos.
- ``django``: Django's admin from PyPI (the CRUD admin of tests/corpus/django_admin), a fresh SQLite
  database per instance: sign in (the password a secret), add a group, find it with the search
  box, open it, delete it. Success: the admin's own log has the addition and the deletion.
- ``swagger``: Swagger UI from npm (``swagger-ui-dist``, a client-rendered single-page app, pinned in
  tests/corpus/package.json) on the petstore spec: open an operation, Try it out, choose a status,
  Execute. Success: the app's API (served here) received the request with that status.

What each figure measures:
- recorded run: the agent's calls as a scripted agent makes them (a snapshot, then the actions it
  reads off it, a snapshot when the page changed), through webhand's Python API in one process:
  ``recorded s`` is the sum of every call's wall time (snapshots included), ``recorded chars`` the
  characters of every reply the model would read. The model's own thinking time between calls is
  not in it (it is seconds a call with a real model): the ratio is conservative.
- replay: ``browser_run_flow`` on a fresh instance of the app (new database, new browser context,
  no cookies), one call: ``replay s`` its wall time, ``replay chars`` the one reply the model reads
  (the steps' own replies are not shown to it).
- playwright script: the flow exported by ``webhand export --flow`` (tools/flows/playwright_script.py),
  run by plain Python with Playwright on Chromium, on another fresh instance: its exit status, the
  app's end state, and the time of its ``run()`` (the steps; the process and browser launch apart).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pages import PageServer  # noqa: E402

ADMIN_SITE = ROOT / "tests" / "corpus" / "django_admin"
SWAGGER_DIST = ROOT / "tests" / "corpus" / "node_modules" / "swagger-ui-dist"
SWAGGER_OVERLAY = ROOT / "tests" / "corpus" / "swagger"
APPS = ("bench", "django", "swagger")
#: A snapshot's control line: role "name" [ref] (the name a JSON string), as the snapshot contract writes it.
CONTROL_LINE = re.compile(r'^\s*(?P<role>[A-Za-z][\w-]*)(?: (?P<name>"(?:[^"\\]|\\.)*"))? \[(?P<ref>(?:f\d+)?e\d+)\]')
ADMIN_PASSWORD = "bench-admin-pass-1"  # a throwaway superuser of a throwaway database on 127.0.0.1
SCRIPT_TIMEOUT = 180


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ref_of(snapshot: str, role: str, name: str | re.Pattern[str]) -> str:
    for line in snapshot.splitlines():
        match = CONTROL_LINE.match(line)
        if not match or match["role"] != role:
            continue
        found = json.loads(match["name"]) if match["name"] else ""
        if (found == name) if isinstance(name, str) else name.search(found):
            return match["ref"]
    raise LookupError(f"no {role} {name!r} in the snapshot:\n{snapshot[:3000]}")


def ref_on(snapshot: str, role: str, text: str) -> str:
    """The ref of the first ``role`` line that holds ``text`` (an unnamed control, known by its value)."""
    for line in snapshot.splitlines():
        match = CONTROL_LINE.match(line)
        if match and match["role"] == role and text in line:
            return match["ref"]
    raise LookupError(f"no {role} with {text!r} in the snapshot:\n{snapshot[:3000]}")


class Agent:
    """A scripted agent: every call timed, every reply's characters counted (what the model reads)."""

    def __init__(self, conversation: Any) -> None:
        self.conversation = conversation
        self.calls: list[dict[str, Any]] = []

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> str:
        started = time.perf_counter()
        reply = await self.conversation.call(tool, arguments or {})
        seconds = time.perf_counter() - started
        text = reply.text
        if tool == "browser_snapshot":
            saved = [f for f in reply.files if f.endswith(".txt")]
            if saved:  # a snapshot too large for the reply: the model reads the file
                text = Path(saved[0]).read_text(encoding="utf-8")
        self.calls.append({"tool": tool, "seconds": seconds, "chars": len(text)})
        if reply.is_error:
            raise RuntimeError(f"{tool} failed: {reply.text[:2000]}")
        return text

    async def snapshot(self) -> str:
        return await self.call("browser_snapshot")


# ---------------------------------------------------------------------------------------------
# The apps: each starts a fresh instance, runs its task as the agent, and checks its end state.


class BenchPages:
    key, label = "bench", "bench pages (login, todos)"

    def __init__(self, port: int | None = None) -> None:
        self.server = PageServer(port or 0).__enter__()
        self.port = self.server._server.server_address[1]

    def stop(self) -> None:
        self.server.__exit__()

    async def task(self, agent: Agent) -> None:
        await agent.call("browser_navigate", {"url": self.server.url("/login")})
        page = await agent.snapshot()
        await agent.call("browser_type", {"ref": ref_of(page, "textbox", "Username"), "text": "ada"})
        await agent.call("browser_type", {"ref": ref_of(page, "textbox", "Password"), "text": "<secret>BENCH_PASSWORD</secret>"})
        await agent.call("browser_check", {"ref": ref_of(page, "checkbox", "Remember me")})
        await agent.call("browser_click", {"ref": ref_of(page, "button", "Sign in")})
        await agent.call("browser_navigate", {"url": self.server.url("/todo")})
        page = await agent.snapshot()
        await agent.call("browser_type", {"ref": ref_of(page, "textbox", "New todo"), "text": "Walk the dog",
                                          "submit": True})
        page = await agent.snapshot()
        await agent.call("browser_check", {"ref": ref_of(page, "checkbox", "Buy milk")})
        await agent.call("browser_click", {"ref": _second_delete(page)})
        await agent.snapshot()

    async def done(self, agent: Agent) -> bool:
        page = await agent.call("browser_snapshot")
        return "Walk the dog" in page and "Write report" not in page and "3 items" in page

    def done_after_script(self) -> bool | None:
        return None  # the todo list lives in the page: a script's end state is its exit status


def _second_delete(snapshot: str) -> str:
    """The Delete button of the second todo (Write report): the one after that todo's checkbox."""
    lines = snapshot.splitlines()
    start = next(i for i, line in enumerate(lines) if '"Write report"' in line)
    return ref_of("\n".join(lines[start:]), "button", "Delete")


class DjangoAdmin:
    key, label = "django", "Django admin (CRUD, Django from PyPI)"

    def __init__(self, port: int | None = None) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="webhand-bench-django-"))
        self.env = {**os.environ, "PYTHONPATH": str(ADMIN_SITE), "DJANGO_SETTINGS_MODULE": "admin_site_settings",
                    "ADMIN_SITE_DB": str(self.folder / "admin.sqlite3"), "DJANGO_SUPERUSER_PASSWORD": ADMIN_PASSWORD}
        self.django(["migrate", "--noinput"])
        self.django(["createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com"])
        self.port = port or free_port()
        self.log = open(self.folder / "server.log", "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen([sys.executable, "-m", "django", "runserver", f"127.0.0.1:{self.port}",
                                         "--noreload"], env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.process)

    def django(self, command: list[str]) -> str:
        done = subprocess.run([sys.executable, "-m", "django", *command], env=self.env, capture_output=True,
                              text=True, timeout=180)
        if done.returncode:
            raise RuntimeError(done.stderr[-2000:])
        return done.stdout

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    async def task(self, agent: Agent) -> None:
        await agent.call("browser_navigate", {"url": self.url("/admin/login/?next=/admin/auth/group/add/")})
        page = await agent.snapshot()
        await agent.call("browser_type", {"ref": ref_of(page, "textbox", "Username:"), "text": "admin"})
        await agent.call("browser_type", {"ref": ref_of(page, "textbox", "Password:"),
                                          "text": "<secret>ADMIN_PASSWORD</secret>", "submit": True})
        page = await agent.snapshot()
        await agent.call("browser_type", {"ref": ref_of(page, "textbox", "Name:"), "text": "editors"})
        await agent.call("browser_click", {"ref": ref_of(page, "button", "Save")})
        page = await agent.snapshot()
        await agent.call("browser_type", {"ref": ref_of(page, "textbox", "Search"), "text": "editors",
                                          "submit": True})
        page = await agent.snapshot()
        await agent.call("browser_click", {"ref": ref_of(page, "link", "editors")})
        page = await agent.snapshot()
        await agent.call("browser_click", {"ref": ref_of(page, "link", "Delete")})
        page = await agent.snapshot()
        await agent.call("browser_click", {"ref": ref_of(page, "button", re.compile("^Yes, I.m sure$"))})
        await agent.snapshot()

    def done_after_script(self) -> bool | None:
        log = self.django(["shell", "-c", "from django.contrib.admin.models import LogEntry as L; from django.contrib."
                           "auth.models import Group as G; print(sorted((e.action_flag, e.object_repr) for e in "
                           "L.objects.all()), G.objects.count())"]).strip().splitlines()[-1]
        self.state = log
        return log == "[(1, 'editors'), (3, 'editors')] 0"

    async def done(self, agent: Agent) -> bool:
        return bool(self.done_after_script())


class _SwaggerHandler(SimpleHTTPRequestHandler):
    seen: list[str]

    def log_message(self, *_: object) -> None:
        pass

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        rest = clean.removeprefix("/swagger")
        for folder in (SWAGGER_OVERLAY, SWAGGER_DIST):
            self.directory = str(folder)
            candidate = super().translate_path(rest or "/")
            if Path(candidate).exists():
                return candidate
        return str(SWAGGER_OVERLAY / "not-found")

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/api/v3/"):
            self.seen.append(self.path)
            body = json.dumps([{"id": 7, "name": "Rex", "status": "sold", "photoUrls": []}]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


class Swagger:
    key, label = "swagger", "Swagger UI (SPA, swagger-ui-dist from npm)"

    def __init__(self, port: int | None = None) -> None:
        if not (SWAGGER_DIST / "swagger-ui-bundle.js").is_file():
            raise FileNotFoundError("swagger-ui-dist is missing: run `npm ci` in tests/corpus (make test does)")
        self.seen: list[str] = []
        handler = type("Handler", (_SwaggerHandler,), {"seen": self.seen})
        self.port = port or free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    async def task(self, agent: Agent) -> None:
        await agent.call("browser_navigate", {"url": f"http://127.0.0.1:{self.port}/swagger/index.html"})
        await agent.call("browser_wait_for", {"text": "/pet/findByStatus"})
        page = await agent.snapshot()
        await agent.call("browser_click", {"ref": ref_of(page, "button", re.compile(r"^GET /pet/findByStatus\b"))})
        page = await agent.snapshot()
        await agent.call("browser_click", {"ref": ref_of(page, "button", "Try it out")})
        page = await agent.snapshot()
        await agent.call("browser_select_option", {"ref": ref_on(page, "combobox", 'value="available"'), "values": ["sold"]})
        await agent.call("browser_click", {"ref": ref_of(page, "button", "Execute")})
        await agent.call("browser_wait_for", {"text": "Response body"})
        await agent.snapshot()

    def done_after_script(self) -> bool | None:
        return any("/api/v3/pet/findByStatus?status=sold" in path for path in self.seen)

    async def done(self, agent: Agent) -> bool:
        return bool(self.done_after_script())


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the app exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)  # the bench polling a server it started
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout:g} s")


def start(key: str, port: int | None = None) -> Any:
    if key == "bench":
        return BenchPages(port)
    if key == "django":
        return DjangoAdmin(port)
    return Swagger(port)


# ---------------------------------------------------------------------------------------------


async def measure_app(key: str, webhand: Any, chrome: str, folder: Path) -> dict[str, Any]:
    app = start(key)
    row: dict[str, Any] = {"app": key, "label": app.label}
    try:
        agent = Agent(webhand.conversation(f"record-{key}"))
        await app.task(agent)
        row["recorded_calls"] = len(agent.calls)
        row["recorded_seconds"] = round(sum(c["seconds"] for c in agent.calls), 3)
        row["recorded_chars"] = sum(c["chars"] for c in agent.calls)
        row["recorded_snapshots"] = sum(1 for c in agent.calls if c["tool"] == "browser_snapshot")
        saved = await agent.conversation.call("browser_save_flow", {"name": f"bench-{key}",
                                                                    "description": app.label})
        if saved.is_error:
            raise RuntimeError(f"browser_save_flow failed: {saved.text[:2000]}")
        row["saved"] = saved.text.splitlines()[0]
    finally:
        port = getattr(app, "port", None)
        app.stop()
        await webhand.end_conversation(f"record-{key}")
    fresh = start(key, port)  # the flow's URLs name the recorded port: the fresh instance takes it again
    try:
        replayer = Agent(webhand.conversation(f"replay-{key}"))
        text = await replayer.call("browser_run_flow", {"name": f"bench-{key}"})
        row["replay_seconds"] = round(replayer.calls[0]["seconds"], 3)
        row["replay_chars"] = replayer.calls[0]["chars"]
        row["replay_reply_first_line"] = text.splitlines()[0]
        checker = Agent(webhand.conversation(f"replay-{key}"))  # the harness's check: not counted
        row["replay_success"] = text.startswith("Ran the flow") and await app_done(fresh, checker)
        if getattr(fresh, "state", None) is not None:
            row["replay_end_state"] = fresh.state
    except RuntimeError as error:
        row["replay_success"] = False
        row["replay_error"] = str(error)[:500]
    finally:
        fresh.stop()
    row["ratio"] = round(row["recorded_seconds"] / row["replay_seconds"], 1) if row.get("replay_seconds") else None
    if row.get("replay_seconds"):  # each recorded call is one model turn: the turn time from which replay is 5x faster
        row["model_turn_for_5x_seconds"] = round(max(0.0, (5 * row["replay_seconds"] - row["recorded_seconds"])
                                                     / row["recorded_calls"]), 2)
    row["playwright_script"] = await asyncio.to_thread(run_export, key, chrome, folder, port)
    return row


async def app_done(app: Any, agent: Agent) -> bool:
    return bool(await app.done(agent))


def run_export(key: str, chrome: str, folder: Path, port: int | None) -> dict[str, Any]:
    """The saved flow exported as a Playwright script and run by plain Python on Chromium, on another fresh instance."""
    from webhand.tools.flows.playwright_script import export_flow
    from webhand.tools.flows.store import load_flow

    flow = load_flow(f"bench-{key}")
    export = export_flow(flow)
    script = folder / f"bench_{key}.py"
    script.write_text(export.text, encoding="utf-8")
    app = start(key, port)
    try:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update({"BENCH_PASSWORD": "pw-1", "ADMIN_PASSWORD": ADMIN_PASSWORD})
        started = time.perf_counter()
        done = subprocess.run([sys.executable, str(script), "--executable-path", chrome], capture_output=True,
                              text=True, timeout=SCRIPT_TIMEOUT, env=env, cwd=folder)
        seconds = time.perf_counter() - started
        state = app.done_after_script()
        ok = done.returncode == 0 and state is not False
        steps = re.search(r": done in ([0-9.]+) s", done.stdout)
        return {"ok": ok, "seconds": round(seconds, 2), "steps_seconds": float(steps.group(1)) if steps else None,
                "healed": sum(1 for line in done.stderr.splitlines() if ": healed: found by " in line),
                "unsupported": export.unsupported,
                **({"end_state": app.state} if getattr(app, "state", None) is not None else {}),
                **({} if ok else {"error": (done.stderr or done.stdout)[-800:]})}
    finally:
        app.stop()


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| app | recorded: calls, s | replay s | faster (no model time) | 5× once a model turn takes | "
             "chars read: recorded → replay | replay ok | Playwright script (Chromium) |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['label']} | failed: {r['error'][:120]} | | | | | | |")
            continue
        script = r.get("playwright_script") or {}
        lines.append(f"| {r['label']} | {r['recorded_calls']} calls, {r['recorded_seconds']:.2f} s | "
                     f"{r.get('replay_seconds', float('nan')):.2f} s | {r.get('ratio')}× | "
                     f"≥ {r.get('model_turn_for_5x_seconds', float('nan')):.2f} s | "
                     f"{r['recorded_chars']:,} → {r.get('replay_chars', 0):,} | {'yes' if r.get('replay_success') else 'NO'} | "
                     f"{'green' if script.get('ok') else 'FAILED'}, steps {script.get('steps_seconds') or 0:.2f} s |")
    return "\n".join(lines)


EXPLAINED = ("recorded: the scripted agent's calls (snapshots included), the sum of their wall times, no model "
             "thinking time (so the ratio is conservative: each recorded call is one model turn, and '5× once a model "
             "turn takes' is the turn time from which the replay is 5× faster than the recorded run); replay: one browser_run_flow call on a fresh instance "
             "(new database, new browser context); chars: every reply the model would read; the Playwright "
             "script's steps time is its run() alone (its process and browser launch not counted).")


async def measure_all(apps: list[str], chrome: str, keep: bool = False) -> dict[str, Any]:
    from webhand import Settings
    from webhand.host import Webhand

    work = Path(tempfile.mkdtemp(prefix="webhand-bench-flows-"))
    os.chmod(work, 0o700)
    data_home = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(work / "data")  # the flows folder: a throwaway one
    (work / "data").mkdir(mode=0o700)
    secrets = work / "secrets.env"
    secrets.write_text(f"ADMIN_PASSWORD={ADMIN_PASSWORD}\nBENCH_PASSWORD=pw-1\n", encoding="utf-8")
    settings = Settings.from_sources({"executable_path": chrome, "isolation": "context", "warm_reserve": False,
                                      "output_dir": str(work / "out"), "secrets_file": str(secrets),
                                      "capabilities": ["all"]}, env={})
    rows = []
    try:
        async with Webhand(settings, capabilities=["all"]) as webhand:
            for key in apps:
                try:
                    rows.append(await measure_app(key, webhand, chrome, work))
                except Exception as error:  # noqa: BLE001 - one app failing is reported, the others run
                    rows.append({"app": key, "label": key, "error": f"{type(error).__name__}: {error}"})
                print(table(rows[-1:]).splitlines()[-1], flush=True)
    finally:
        if data_home is None:
            os.environ.pop("XDG_DATA_HOME", None)
        else:
            os.environ["XDG_DATA_HOME"] = data_home
        if keep:
            print(f"kept the flows, scripts and logs in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return {"rows": rows, "measures": EXPLAINED, "target": "replay at least 5x faster than the recorded run"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--apps", default=",".join(APPS), help=f"comma-separated subset of {', '.join(APPS)}")
    parser.add_argument("--chrome", help="the Chromium binary (default: the one webhand finds)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"), help="results folder")
    parser.add_argument("--keep", action="store_true", help="keep the flows and exported scripts (printed folder)")
    args = parser.parse_args(argv)
    from webhand.engine.launch.chromium_binary import find_chromium

    chrome = args.chrome or find_chromium()
    result = asyncio.run(measure_all([a.strip() for a in args.apps.split(",")], chrome, args.keep))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "flows.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    text = f"{table(result['rows'])}\n\n{EXPLAINED}\n\nCommand: .venv/bin/python bench/flows.py --apps {args.apps}\n"
    (out / "flows.md").write_text(text, encoding="utf-8")
    print("\n" + text)
    return 0 if all(r.get("replay_success") for r in result["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
