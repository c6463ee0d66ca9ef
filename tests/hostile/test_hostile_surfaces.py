"""webhand's own control surfaces against other local users and against the pages it drives.

- The CLI daemon's dashboard (``webhand dashboard``) listens on a loopback port any local user can
  reach: every route that returns or changes anything needs the user's token.
- A page in a browser webhand drives must not reach a dashboard or /mcp (its requests carry the
  browser's marker, and its Origin is not the dashboard's own).
- Internal pages (chrome://, devtools:// ...) are refused, so that one conversation cannot end the
  browser others share.

Rerun and print the counts: pytest -s -n 0 tests/hostile/test_hostile_surfaces.py
"""

from __future__ import annotations

import json
import os
import re
import stat
import urllib.error
import urllib.request

import pytest

from helpers import Cli, settings_for_tests
from webhand import Webhand


def _get(url: str, headers: dict[str, str] | None = None, data: bytes | None = None) -> int:
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_daemon_dashboard_needs_the_users_token(tmp_path, site):
    cli = Cli(tmp_path)
    try:
        cli("navigate", site.url("login.html"))
        printed = cli("dashboard").stdout
        link = re.search(r"(http://127\.0\.0\.1:\d+)/dashboard/#token=([\w-]+)", printed)
        assert link, f"the printed link carries the token in its fragment: {printed!r}"
        base, token = link.group(1), link.group(2)
        token_file = cli.runtime / "webhand" / "dashboard-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and token_file.read_text().strip() == token
        assert token not in cli("dashboard").stdout.split("#")[0], "the token is never in the part a server sees"

        sessions = f"{base}/dashboard/api/sessions"
        # A session's public id, read with the token, for the routes that name one.
        request = urllib.request.Request(sessions, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=30) as reply:
            sid = json.loads(reply.read())["sessions"][0]["id"]
        routes = [("list sessions", sessions, None), ("details", f"{sessions}/{sid}", None),
                  ("history", f"{sessions}/{sid}/history", None),
                  ("take control", f"{sessions}/{sid}/control", b'{"action": "take"}')]
        attempts = {"no token": {}, "wrong token": {"Authorization": "Bearer " + "x" * len(token)},
                    "token in a query": {}, "the user's token": {"Authorization": f"Bearer {token}"}}
        table = []
        for who, headers in attempts.items():
            for route, url, body in routes:
                if route == "take control" and who == "the user's token":
                    continue  # would lock the agent out; taking control is the dashboard tests' subject
                status = _get(url + (f"?token={token}" if who == "token in a query" else ""), headers, body)
                table.append((who, route, status))
        print("\nattempt               route          status")
        for who, route, status in table:
            print(f"{who:21} {route:14} {status}")
        refused = [row for row in table if row[0] != "the user's token"]
        assert all(status == 401 for _, _, status in refused), refused
        assert all(status == 200 for who, _, status in table if who == "the user's token")
        print(f"{len(refused)} of {len(refused)} attempts without the token refused")
        assert _get(f"{base}/dashboard/") == 200, "the static page (no data) loads, then asks for the token"
    finally:
        cli("daemon", "stop", check=False)
    assert os.path.exists(cli.runtime / "webhand" / "dashboard-token"), "the token is the user's, kept for next time"


# -- internal pages ------------------------------------------------------------------------------

INTERNAL_PAGES = ["chrome://settings", "chrome://history", "chrome://crash", "CHROME://settings/",
                  "view-source:chrome://settings", "devtools://devtools/bundled/inspector.html",
                  "chrome-untrusted://terminal/", "chrome-extension://mhjfbmdgcfjbbpaeojofohoefgiehjai/index.html",
                  "chrome-search://local-ntp/local-ntp.html", "edge://settings"]


@pytest.mark.parametrize("isolation", ["context", "process"])
async def test_internal_pages_are_refused_and_the_other_conversation_keeps_its_page(
        isolation, tmp_path_factory, driver, site):
    settings = settings_for_tests(tmp_path_factory, driver=driver, isolation=isolation, warm_reserve=False)
    async with Webhand(settings) as webhand:
        bystander, hostile = webhand.context("bystander"), webhand.context("hostile")
        page = site.url("login.html")
        assert not (await bystander.call("browser_navigate", {"url": page})).is_error
        table = []
        for url in INTERNAL_PAGES:
            for tool, arguments in (("browser_navigate", {"url": url}),
                                    ("browser_tabs", {"action": "open", "url": url})):
                reply = await hostile.call(tool, arguments)
                table.append((tool, url, reply.is_error and "allow_internal_pages" in reply.text))
        print(f"\n[{driver}, {isolation} isolation] tool              internal page                    refused")
        for tool, url, refused in table:
            print(f"  {tool:16} {url:48} {refused}")
        print(f"{sum(r for *_, r in table)} of {len(table)} refused, saying how to opt in")
        assert all(refused for *_, refused in table), [row for row in table if not row[2]]
        kept = await bystander.call("browser_get_url", {})
        assert not kept.is_error and page in kept.text, kept.text
        assert not (await hostile.call("browser_navigate", {"url": page})).is_error, "the refusing one goes on too"


async def test_internal_pages_open_when_the_user_opts_in(tmp_path_factory, driver):
    settings = settings_for_tests(tmp_path_factory, driver=driver, allow_internal_pages=True, warm_reserve=False)
    async with Webhand(settings) as webhand:
        reply = await webhand.context("opted-in").call("browser_navigate", {"url": "chrome://version"})
        assert not reply.is_error and "chrome://version" in reply.text, reply.text
