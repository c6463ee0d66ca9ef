"""A real admin: Django's, from PyPI (the test extra pins it), with its own pages and scripts.

A model edits a user the way a person would, as fast as a model calls: it chooses a permission in
the two-list picker (a ``<select multiple>`` list box scrolled inside itself), moves it across, saves,
and reads the date pickers' icon links. What the admin saved is read back from its database.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.corpus

ADMIN_SITE = Path(__file__).parent / "corpus" / "django_admin"
PASSWORD = "admin-test-pass-1"  # a throwaway superuser of a throwaway database on 127.0.0.1
_CONTROL = re.compile(r'^\s*[-+~]?\s*(?P<role>[\w-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")? \[(?P<ref>(?:f\d+)?e\d+)\]')


class AdminSite:
    def __init__(self, folder: Path) -> None:
        self.env = {**os.environ, "PYTHONPATH": str(ADMIN_SITE), "DJANGO_SETTINGS_MODULE": "admin_site_settings",
                    "ADMIN_SITE_DB": str(folder / "admin.sqlite3"), "DJANGO_SUPERUSER_PASSWORD": PASSWORD}
        self.django(["migrate", "--noinput"])
        self.django(["createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com"])
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.log = open(folder / "server.log", "w")  # noqa: SIM115 - closed in close()
        self.server = subprocess.Popen([sys.executable, "-m", "django", "runserver", f"127.0.0.1:{self.port}",
                                        "--noreload"], env=self.env, stdout=self.log,
                                       stderr=subprocess.STDOUT)
        self._wait_for_port()

    def _wait_for_port(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.server.poll() is None, (Path(self.log.name).read_text())[-2000:]
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)  # test set-up polling a server it started
        raise AssertionError("the Django admin did not start within 60 s")

    def django(self, command: list[str]) -> str:
        done = subprocess.run([sys.executable, "-m", "django", *command], env=self.env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    def query(self, code: str) -> str:
        return self.django(["shell", "-c", code]).strip()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.server.terminate()
        try:
            self.server.wait(10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait(10)
        self.log.close()


@pytest.fixture(scope="module")
def admin_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdminSite]:
    pytest.importorskip("django", reason="Django is not installed: run `make test` (the test extra pins it)")
    site = AdminSite(tmp_path_factory.mktemp("django-admin"))
    yield site
    site.close()


def controls(text: str, role: str) -> list[re.Match[str]]:
    return [m for line in text.splitlines() if (m := _CONTROL.match(line)) and m["role"] == role]


def ref_of(text: str, role: str, name: str) -> str:
    found = [m["ref"] for m in controls(text, role) if m["name"] == name]
    assert found, f'no {role} "{name}" in:\n{text}'
    return found[0]


async def sign_in(tools, admin_site: AdminSite, then: str) -> str:
    await tools.call("browser_navigate", {"url": admin_site.url(f"/admin/login/?next={then}")})
    page = (await tools.call("browser_snapshot", {})).text
    await tools.call("browser_type", {"ref": ref_of(page, "textbox", "Username:"), "text": "admin"})
    reply = await tools.call("browser_type", {"ref": ref_of(page, "textbox", "Password:"), "text": PASSWORD,
                                              "submit": True})
    assert not reply.is_error, reply.text
    return (await tools.call("browser_snapshot", {})).text


async def test_a_permission_scrolled_out_of_its_list_box_is_chosen_and_saved(tools, admin_site):
    page = await sign_in(tools, admin_site, "/admin/auth/user/1/change/")
    available = [m for m in controls(page, "option") if "|" in (m["name"] or "")]
    assert len(available) >= 36, page
    wanted = available[33]  # below the list box's fold: its own scrolling must bring it into view
    clicked = await tools.call("browser_click", {"ref": wanted["ref"]})
    assert not clicked.is_error, clicked.text
    assert "selected" in clicked.text and "covered" not in clicked.text, clicked.text
    moved = await tools.call("browser_click", {"ref": ref_of(page, "button", "Choose selected user permissions")})
    assert not moved.is_error, moved.text
    saved = await tools.call("browser_click", {"ref": ref_of(page, "button", "Save")})
    assert not saved.is_error and "was changed successfully" in saved.text, saved.text
    permission = wanted["name"].split("|")[-1].strip()
    assert permission in admin_site.query(
        "from django.contrib.auth.models import User; "
        "print([p.name for p in User.objects.get(pk=1).user_permissions.all()])")


async def test_the_date_pickers_icon_links_are_named_by_their_icons_tooltip(tools, admin_site):
    page = await sign_in(tools, admin_site, "/admin/auth/user/1/change/")
    links = [m["name"] for m in controls(page, "link")]
    assert "Choose a Date" in links and "Choose a Time" in links, page
    assert not [m for m in controls(page, "link") if not m["name"]], "an unnamed link is left:\n" + page


async def test_a_link_to_the_page_itself_shows_its_address(tools, admin_site):
    page = await sign_in(tools, admin_site, "/admin/auth/user/")
    users = [line for line in page.splitlines() if re.search(r'link "Users" \[\w+\]', line)]
    assert users and all("url=/admin/auth/user/" in line for line in users), "\n".join(users) or page
