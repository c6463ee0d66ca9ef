#!/usr/bin/env python3
"""Real apps, tried as a new user would: a scripted agent does real tasks through webhand and
checks that no data is lost and no reply says something untrue.

    python3 scripts/trial_real_apps.py --install      # once: a venv with the apps (.trial-apps/)
    .venv/bin/python scripts/trial_real_apps.py       # the tasks, both drivers
    .venv/bin/python scripts/trial_real_apps.py --driver cdp --apps wagtail,streamlit

The apps come from PyPI, pinned below, in their own virtualenv (they are heavy, and none of
webhand's tests need them): Wagtail (a CMS with a rich-text editor, on Django, whose admin is
served beside it), JupyterLab (a notebook app) and Streamlit (a data-app framework whose widgets
re-render over a WebSocket). Every app listens on 127.0.0.1 only and keeps its files in a
temporary folder that is removed at the end.

The agent acts as fast as a model batching its calls would: no pause between calls. For each
step it records the reply and checks it against the truth:

- the data the task saved (the CMS's database, the order file) is what was typed;
- a reply that says the page did not change is checked by looking again a second later: if the
  page had changed by then, the reply was false;
- no tool error.

The script prints every call and reply, then one line per task, and exits 1 when a check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS_DIR = ROOT / ".trial-apps"
PINS = ["wagtail==8.0.1", "Django==5.2.19", "jupyterlab==4.6.6", "streamlit==1.67.0"]
PASSWORD = "trial-pass-123"  # a throwaway superuser of a throwaway database on 127.0.0.1
NO_CHANGE = ("did not change", "No change seen")
_REF_LINE = re.compile(r'^\s*[-+~]?\s*(?P<role>[\w-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")? \[(?P<ref>(?:f\d+)?e\d+)\]')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def install() -> None:
    venv = APPS_DIR / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *PINS], check=True)
    print(f"apps installed in {venv}")


class App:
    """A server process of one app, on 127.0.0.1, ended by PID at the end."""

    def __init__(self, command: list[str], cwd: Path, port: int, ready_path: str = "/",
                 env: dict[str, str] | None = None) -> None:
        self.port = port
        self.log = open(cwd / "server.log", "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(command, cwd=cwd, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, **(env or {})}, start_new_session=True)
        self.ready_path = ready_path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 90) -> None:
        import urllib.error
        import urllib.request
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.flush()
                tail = Path(self.log.name).read_text()[-1500:]
                raise RuntimeError(f"the app exited ({self.process.returncode}):\n{tail}")
            try:
                urllib.request.urlopen(self.url + self.ready_path, timeout=2)
                return
            except urllib.error.HTTPError:
                return  # it answers
            except OSError:
                time.sleep(0.3)  # a test script polling a server it started; not product code
        raise RuntimeError(f"the app did not answer within {timeout} s; see {self.log.name}")

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 15)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, 9)
            self.process.wait(10)
        self.log.close()


class Agent:
    """Calls webhand's tools with no pause between calls, and checks each reply against the truth."""

    def __init__(self, tools, task: str) -> None:
        self.tools = tools
        self.task = task
        self.page = ""
        self.problems: list[str] = []
        self.steps = 0
        self.fresh = False  # whether the last call was a look: only then is ``page`` the page before an action

    async def call(self, name: str, arguments: dict | None = None, *, changes_expected: bool | None = None) -> str:
        arguments = arguments or {}
        before = self.page if self.fresh else ""
        started = time.monotonic()
        result = await self.tools.call(name, arguments)
        elapsed = (time.monotonic() - started) * 1000
        self.steps += 1
        print(f"\n>>> {name} {json.dumps(arguments)}   ({elapsed:.0f} ms)")
        print(result.text if len(result.text) < 20000 else result.text[:20000] + f"\n… ({len(result.text)} chars)")
        if result.is_error:
            self.problems.append(f"{name} {arguments}: tool error: {result.text.splitlines()[0][:200]}")
        self.fresh = name == "browser_snapshot"
        if self.fresh:
            self.page = result.text
        if any(marker in result.text for marker in NO_CHANGE) and before:
            # Look again a second later (the script's check, not product code): was the reply true?
            await asyncio.sleep(1.0)
            later = (await self.tools.call("browser_snapshot", {})).text
            if _outline(later) != _outline(before):
                self.problems.append(f"{name} {arguments}: the reply said nothing changed, but a second later "
                                     "the page had changed")
            self.page, self.fresh = later, True
        elif changes_expected and not result.is_error and not _says_change(result.text):
            self.problems.append(f"{name} {arguments}: the action changed the page but the reply shows no change")
        return result.text

    async def look(self) -> str:
        return await self.call("browser_snapshot")

    def ref(self, role: str, name: str | re.Pattern[str], text: str | None = None) -> str:
        """The ref of the first control of that role whose name matches, in the last look."""
        for line in (text or self.page).splitlines():
            match = _REF_LINE.match(line)
            if not match or match["role"] != role:
                continue
            found = match["name"] or ""
            if (name.search(found) if isinstance(name, re.Pattern) else found == name):
                return match["ref"]
        raise LookupError(f"{self.task}: no {role} named {name!r} on the page")

    async def find(self, role: str, name: str) -> str:
        """The ref of a control by browser_find, as a model does when a big page's snapshot left refs out."""
        found = await self.call("browser_find", {"query": f"{role} {name}"})
        return self.ref(role, name, found)

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.problems.append(what)


def _outline(snapshot: str) -> str:
    """A snapshot without its first line (URL and title are compared by the page lines anyway)."""
    return "\n".join(snapshot.splitlines()[1:])


def _says_change(text: str) -> bool:
    return any(word in text for word in ("Page changes", "Navigated to", "snapshot", "Title changed", "+ ", "~ "))


# ---------------------------------------------------------------------------------------------
# Wagtail (CMS) and the Django admin it serves beside it


def wagtail_site(venv: Path, folder: Path) -> App:
    python = str(venv / "bin" / "python")
    subprocess.run([str(venv / "bin" / "wagtail"), "start", "trialsite", str(folder)], check=True,
                   capture_output=True)
    (folder / "home" / "models.py").write_text(
        "from wagtail.admin.panels import FieldPanel\nfrom wagtail.fields import RichTextField\n"
        "from wagtail.models import Page\n\n\nclass HomePage(Page):\n    pass\n\n\n"
        "class ArticlePage(Page):\n    body = RichTextField(blank=True)\n"
        "    content_panels = Page.content_panels + [FieldPanel('body')]\n")
    env = {**os.environ, "DJANGO_SUPERUSER_PASSWORD": PASSWORD}
    for command in (["makemigrations", "home"], ["migrate"],
                    ["createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com"]):
        subprocess.run([python, "manage.py", *command], cwd=folder, check=True, capture_output=True, env=env)
    port = free_port()
    return App([python, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"], folder, port, "/admin/login/")


def django_query(venv: Path, folder: Path, code: str) -> str:
    done = subprocess.run([str(venv / "bin" / "python"), "manage.py", "shell", "-c", code], cwd=folder,
                          capture_output=True, text=True, timeout=60)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]


async def wagtail_login(agent: Agent, app: App) -> None:
    await agent.call("browser_navigate", {"url": app.url + "/admin/login/"})
    await agent.look()
    await agent.call("browser_type", {"ref": agent.ref("textbox", "Username*"), "text": "admin"})
    await agent.call("browser_type", {"ref": agent.ref("textbox", "Password*"), "text": PASSWORD, "submit": True})


async def task_cms_publish(agent: Agent, app: App, venv: Path, folder: Path) -> None:
    """Create a page with a rich-text body and publish it at once: the body must be saved."""
    await wagtail_login(agent, app)
    await agent.call("browser_navigate", {"url": app.url + "/admin/pages/add/home/articlepage/3/"})
    await agent.look()
    await agent.call("browser_type", {"ref": agent.ref("textbox", "Title*"), "text": "Spring opening hours"})
    body = agent.ref("textbox", re.compile(r"^$|Body"), agent.page.split("## Body", 1)[1])
    await agent.call("browser_type", {"ref": body, "text": "We open at nine every weekday."})
    # As a model would: the Publish button's ref from the click's own reply, no look in between.
    opened = await agent.call("browser_click", {"ref": agent.ref("button", "More actions")}, changes_expected=True)
    await agent.call("browser_click", {"ref": agent.ref("button", "Publish", opened)}, changes_expected=True)
    saved = django_query(venv, folder, "from home.models import ArticlePage as A; p=A.objects.last(); "
                                       "print(repr((p.title, p.body, p.live)) if p else None)")
    agent.check("We open at nine every weekday." in saved and "True" in saved,
                f"the published page was not saved whole: {saved}")


async def task_admin_permissions(agent: Agent, app: App, venv: Path, folder: Path) -> None:
    """Django admin's two-list permission picker: choose the 34th permission, save; and the date
    pickers' icon links have names."""
    await wagtail_login(agent, app)
    await agent.call("browser_navigate", {"url": app.url + "/django-admin/auth/user/1/change/"})
    page = await agent.look()
    # The user form of this site holds ~170 permissions: past max_refs (200) the later controls are
    # reached with browser_find, as the snapshot says.
    date_links = await agent.call("browser_find", {"query": "link Choose a Date"})
    agent.check('link "Choose a Date"' in date_links, "the date picker's icon link has no name")
    options = [m for line in page.splitlines() if (m := _REF_LINE.match(line)) and m["role"] == "option"]
    agent.check(len(options) > 34, f"only {len(options)} options listed")
    wanted = options[33]
    await agent.call("browser_click", {"ref": wanted["ref"]}, changes_expected=True)
    await agent.look()
    await agent.call("browser_click", {"ref": await agent.find("button", "Choose selected user permissions")},
                     changes_expected=True)
    await agent.call("browser_click", {"ref": await agent.find("button", "Save")}, changes_expected=True)
    codename = wanted["name"].split("|")[-1].strip()
    saved = django_query(venv, folder, "from django.contrib.auth.models import User; "
                                       "print([p.name for p in User.objects.get(pk=1).user_permissions.all()])")
    agent.check(codename in saved, f"the chosen permission {codename!r} was not saved: {saved}")


# ---------------------------------------------------------------------------------------------
# JupyterLab (a notebook app)


def jupyter_app(venv: Path, folder: Path) -> App:
    port = free_port()
    (folder / "home").mkdir()
    return App([str(venv / "bin" / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                *(["--allow-root"] if os.geteuid() == 0 else []),
                "--IdentityProvider.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=False",
                f"--ServerApp.root_dir={folder / 'home'}", "--LabApp.news_url=", "--LabApp.check_for_updates_class="
                "jupyterlab.NeverCheckForUpdate"], folder, port, "/lab",
               env={"JUPYTER_CONFIG_DIR": str(folder / "config"), "JUPYTER_DATA_DIR": str(folder / "data"),
                    "JUPYTER_RUNTIME_DIR": str(folder / "runtime"), "IPYTHONDIR": str(folder / "ipython")})


async def task_notebook(agent: Agent, app: App, venv: Path, folder: Path) -> None:
    """Open a new notebook from the launcher, run a cell, read its output: one notebook only."""
    for notebook in (folder / "home").glob("*.ipynb"):  # the app serves every driver's run in turn
        notebook.unlink()
    await agent.call("browser_navigate", {"url": app.url + "/lab?reset"})  # a fresh workspace: the launcher
    await agent.call("browser_wait_for", {"text": "Notebook", "timeout": 30})
    await agent.look()
    card = agent.ref("button", re.compile(r"Python 3 \(ipykernel\)")) if re.search(
        r'button "[^"]*Python 3 \(ipykernel\)', agent.page) else agent.ref(
        "clickable", re.compile(r"Python 3 \(ipykernel\)"))
    reply = await agent.call("browser_click", {"ref": card}, changes_expected=True)
    agent.check("Untitled" in reply or "Untitled" in (await agent.look()), "the new notebook is not in the reply")
    await agent.call("browser_wait_for", {"text": "Idle", "timeout": 30})
    await agent.call("browser_press_key", {"key": "Enter"})
    await agent.call("browser_press_key", {"key": "Control+a"})
    await agent.call("browser_type", {"text": "print(6 * 7)", "ref": None} if False else
                     {"text": "print(6 * 7)", "ref": _cell_ref(await agent.look())})
    await agent.call("browser_press_key", {"key": "Shift+Enter"}, changes_expected=True)
    page = await agent.call("browser_wait_for", {"text": "42", "timeout": 20})
    agent.check("42" in page or "42" in await agent.look(), "the cell's output 42 is not on the page")
    notebooks = sorted(p.name for p in (folder / "home").glob("*.ipynb"))
    agent.check(len(notebooks) == 1, f"expected one notebook, found {notebooks}")


def _cell_ref(page: str) -> str:
    for line in page.splitlines():
        match = _REF_LINE.match(line)
        if match and match["role"] == "textbox" and "Markdown" not in (match["name"] or ""):
            return match["ref"]
    raise LookupError("no code cell on the page")


# ---------------------------------------------------------------------------------------------
# Streamlit (a data-app framework: widgets re-render over a WebSocket)

STREAMLIT_APP = '''
import json, os, streamlit as st
st.title("Flower shop")
flower = st.selectbox("Flower", ["Rose", "Orchid", "Tulip"])
quantity = st.number_input("Quantity", min_value=1, max_value=50, value=1)
if st.button("Place order"):
    with open(os.environ["ORDERS_FILE"], "a") as orders:
        orders.write(json.dumps({"flower": flower, "quantity": quantity}) + "\\n")
    st.success(f"Order placed: {quantity} x {flower}")
'''


def streamlit_app(venv: Path, folder: Path) -> App:
    port = free_port()
    (folder / "app.py").write_text(STREAMLIT_APP)
    return App([str(venv / "bin" / "streamlit"), "run", "app.py", f"--server.port={port}", "--server.address=127.0.0.1",
                "--server.headless=true", "--browser.gatherUsageStats=false"], folder, port, "/",
               env={"ORDERS_FILE": str(folder / "orders.jsonl"), "HOME": str(folder)})


async def task_data_app_order(agent: Agent, app: App, venv: Path, folder: Path) -> None:
    """Pick a flower, set the quantity, place the order once: the reply shows it was placed."""
    (folder / "orders.jsonl").unlink(missing_ok=True)  # the app serves every driver's run in turn
    await agent.call("browser_navigate", {"url": app.url})
    await agent.call("browser_wait_for", {"text": "Place order", "timeout": 30})
    await agent.look()
    # Streamlit's select box is a combobox of its own (not a <select>): open it, then click the option.
    opened = await agent.call("browser_click", {"ref": agent.ref("combobox", re.compile("Flower"))},
                              changes_expected=True)
    await agent.call("browser_click", {"ref": agent.ref("option", "Orchid", opened)}, changes_expected=True)
    await agent.look()
    await agent.call("browser_type", {"ref": agent.ref("spinbutton", re.compile("Quantity")), "text": "8",
                                      "submit": True})
    await agent.look()
    reply = await agent.call("browser_click", {"ref": agent.ref("button", "Place order")}, changes_expected=True)
    agent.check("Order placed: 8 x Orchid" in reply, "the reply to Place order does not show the order placed")
    orders = (folder / "orders.jsonl").read_text().splitlines() if (folder / "orders.jsonl").exists() else []
    agent.check(orders == ['{"flower": "Orchid", "quantity": 8}'], f"orders written: {orders}")


TASKS: dict[str, tuple[Callable[[Path, Path], App], list[Callable[..., Awaitable[None]]]]] = {
    "wagtail": (wagtail_site, [task_cms_publish, task_admin_permissions]),
    "jupyterlab": (jupyter_app, [task_notebook]),
    "streamlit": (streamlit_app, [task_data_app_order]),
}


async def run(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(ROOT / "src"))
    from webhand import Webhand, load_settings

    venv = Path(args.apps_venv)
    if not (venv / "bin" / "python").exists():
        print(f"no apps venv at {venv}: run with --install first", file=sys.stderr)
        return 2
    results: list[tuple[str, str, list[str], int]] = []
    for app_name in args.apps.split(","):
        make_app, tasks = TASKS[app_name]
        folder = Path(tempfile.mkdtemp(prefix=f"webhand-trial-{app_name}-"))
        try:
            app = make_app(venv, folder)
            try:
                try:
                    app.wait_ready()
                except RuntimeError as failed:
                    results.append((app_name, "-", [f"the app did not start: {failed}"], 0))
                    continue
                for driver in args.driver.split(","):
                    for task in tasks:
                        settings = load_settings(flags={"driver": driver, "output_dir": str(folder / "out")})
                        async with Webhand(settings, capabilities=["all"]) as webhand:
                            agent = Agent(webhand.conversation(f"trial-{task.__name__}"), task.__name__)
                            try:
                                await task(agent, app, venv, folder)
                            except LookupError as missing:
                                agent.problems.append(str(missing))
                            results.append((f"{app_name}/{task.__name__}", driver, agent.problems, agent.steps))
            finally:
                app.stop()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print("\n=== results")
    failed = 0
    for name, driver, problems, steps in results:
        failed += bool(problems)
        print(f"{'ok  ' if not problems else 'FAIL'} {name} [{driver}] ({steps} calls)")
        for problem in problems:
            print(f"       - {problem}")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true", help=f"create {APPS_DIR}/venv with {', '.join(PINS)}")
    parser.add_argument("--apps-venv", default=str(APPS_DIR / "venv"))
    parser.add_argument("--apps", default=",".join(TASKS))
    parser.add_argument("--driver", default="cdp,playwright")
    args = parser.parse_args()
    if args.install:
        install()
        return 0
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
