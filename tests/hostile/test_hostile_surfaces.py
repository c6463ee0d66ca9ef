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
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from helpers import Cli, driver_env, settings_for_tests
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


#: Firefox's own pages, refused too on Firefox (about:config changes the browser's settings).
FIREFOX_PAGES = ["about:config", "about:buildconfig", "ABOUT:support"]
#: A page of the browser's own that is harmless to open, per driver.
OWN_PAGE = {"cdp": "chrome://version", "playwright": "chrome://version", "firefox": "about:buildconfig"}


@pytest.mark.parametrize("isolation", ["context", "process"])
async def test_internal_pages_are_refused_and_the_other_conversation_keeps_its_page(
        isolation, tmp_path_factory, driver, site):
    settings = settings_for_tests(tmp_path_factory, driver=driver, isolation=isolation, warm_reserve=False)
    async with Webhand(settings) as webhand:
        bystander, hostile = webhand.conversation("bystander"), webhand.conversation("hostile")
        page = site.url("login.html")
        assert not (await bystander.call("browser_navigate", {"url": page})).is_error
        table = []
        for url in INTERNAL_PAGES + (FIREFOX_PAGES if driver == "firefox" else []):
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
    page = OWN_PAGE[driver]
    async with Webhand(settings) as webhand:
        reply = await webhand.conversation("opted-in").call("browser_navigate", {"url": page})
        assert not reply.is_error and page in reply.text, reply.text


# -- pages reaching webhand's own endpoints ----------------------------------------------------------

CHANNELS = "origins/channels.html"
#: Each way a page (or the agent, led by one) could reach an endpoint: (name, how).
REACH = [("navigate", "tool"), ("redirect", "redirect"), ("fetch", "channels.fetch(URL)"),
         ("XHR", "channels.xhr(URL)"), ("WebSocket", "channels.ws(URL)"), ("iframe", "channels.iframe(URL)"),
         ("window.open", "channels.popup(URL)")]
#: What says, in what the agent saw, that the attempt was refused: the tools' replies name the
#: rule; a page's own attempt fails as a page sees it (the fetch no-cors "failed" where a reached
#: server gives "status 0"), with the blocked page in the frame (Chromium's; on Firefox webhand's,
#: titled the same and giving the reason), or a popup on that page, on Chromium's error page or on
#: the server's refusal (Playwright attaches to a popup after its first request has left).
REFUSED_AS = {"navigate": ["webhand's own"], "redirect": ["webhand's own"], "fetch": ['"failed"'], "XHR": ['"failed"'],
              "WebSocket": ['"failed"'], "iframe": ["blocked"],
              "window.open": ["chrome-error://", "may never reach webhand's dashboard", "is blocked"]}


def _refused_as(name: str, seen: str) -> bool:
    return any(sign in seen for sign in REFUSED_AS[name])
ENDPOINTS = ["/dashboard/", "/dashboard/api/sessions", "/mcp"]


async def _reach(call: Any, site: Any, how: str, target: str) -> str:
    """Everything the agent saw of one attempt: the replies, and the page afterwards."""
    if how in ("tool", "redirect"):  # then the agent reads the page it is on, as browser_text would
        url = target if how == "tool" else site.url("redirect?to=" + urllib.parse.quote(target, safe=""))
        return await call("browser_navigate", {"url": url}) + await call("browser_snapshot", {})
    seen = await call("browser_navigate", {"url": site.url(CHANNELS)})
    if "ws" in how:
        target = "ws" + target.removeprefix("http")
    seen += await call("browser_eval", {"expression": "await " + how.replace("URL", json.dumps(target)), "timeout": 20})
    opened = re.search(r"Opened tab (\d+)", seen)
    if opened:  # the popup: what its tab shows, then close it
        seen += await call("browser_tabs", {"action": "focus", "index": int(opened.group(1))})
        seen += await call("browser_snapshot", {})
        return seen + await call("browser_tabs", {"action": "close"})
    return seen + await call("browser_snapshot", {})  # an iframe's document shows in the snapshot


def _judge(table: list[tuple[str, str, str, bool, bool]], label: str) -> None:
    print(f"\n[{label}] attempt      endpoint                  leaked  reply says refused")
    for name, endpoint, _, leaked, said in table:
        print(f"  {name:12} {endpoint:25} {leaked!s:7} {said}")
    if os.environ.get("SHOW_REPLIES"):
        for name, endpoint, seen, *_ in table:
            print(f"--- {name} {endpoint}\n{seen}")
    refused = sum(not leaked and said for *_, leaked, said in table)
    print(f"{refused} of {len(table)} attempts refused, and the reply says so")
    assert not [row[:2] for row in table if row[3]], "a page read webhand's own endpoint"
    assert refused == len(table), [row[:3] for row in table if not row[4]]


async def test_a_page_cannot_reach_the_http_servers_dashboard_or_mcp(tmp_path, site, driver):
    from test_mcp_http import mcp_client, mcp_server

    canary = uuid.uuid4().hex
    with mcp_server(tmp_path, "--caps", "all", env=driver_env(driver)) as server:
        base = server.url.removesuffix("/mcp")
        async with mcp_client(server.url) as victim, mcp_client(server.url) as agent:
            await victim.call_tool("browser_navigate", {"url": site.url(f"login.html?canary={canary}")})

            async def call(tool: str, arguments: dict[str, Any]) -> str:
                result = await agent.call_tool(tool, arguments)
                return "\n".join(getattr(part, "text", "") for part in result.content)

            table = []
            for name, how in REACH:
                for endpoint in ENDPOINTS:
                    seen = await _reach(call, site, how, base + endpoint)
                    table.append((name, endpoint, seen, canary in seen, _refused_as(name, seen)))
    _judge(table, f"HTTP server, {driver}")


async def test_a_page_cannot_reach_the_daemons_dashboard(tmp_path, site, driver):
    cli = Cli(tmp_path, **driver_env(driver))
    canary = uuid.uuid4().hex
    try:
        cli("navigate", site.url(f"login.html?canary={canary}"), "--session", "victim")
        base = cli("dashboard").stdout.split()[2].split("/dashboard/")[0]

        async def call(tool: str, arguments: dict[str, Any]) -> str:
            command = {"browser_navigate": ["navigate", arguments.get("url", "")],
                       "browser_eval": ["eval", arguments.get("expression", ""), "--timeout", "20"],
                       "browser_snapshot": ["snapshot"],
                       "browser_tabs": ["tabs", "--action", arguments.get("action", "list"),
                                        *(["--index", str(arguments["index"])] if "index" in arguments else [])]}[tool]
            done = cli(*command, "--session", "agent", check=False)
            return done.stdout + done.stderr

        table = []
        for name, how in REACH:
            for endpoint in ENDPOINTS[:2]:
                seen = await _reach(call, site, how, base + endpoint)
                table.append((name, endpoint, seen, canary in seen, _refused_as(name, seen)))
    finally:
        cli("daemon", "stop", check=False)
    _judge(table, f"daemon's dashboard, {driver}")


HEADLESS_UA = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 "
               "Safari/537.36")


async def test_the_session_browsers_marker_and_a_foreign_origin_are_refused_even_with_the_token(tmp_path_factory):
    import httpx

    webhand = Webhand(settings_for_tests(tmp_path_factory, warm_reserve=False))  # never started: no browser needed
    from webhand.surfaces.dashboard import DashboardServer
    from webhand.surfaces.http_security import HttpOptions

    token = "surfaces-test-token-" + "x" * 20
    server = DashboardServer(webhand, HttpOptions(host="127.0.0.1", port=0, token=token, require_token=True))
    base = await server.start()
    port = base.rsplit(":", 1)[1]
    bearer = {"Authorization": f"Bearer {token}"}
    attempts = [
        ("headless browser's user agent", {**bearer, "User-Agent": HEADLESS_UA}, 403),
        ("Origin of another local port", {**bearer, "Origin": "http://127.0.0.1:1"}, 403),
        ("Origin of a web site", {**bearer, "Origin": "https://evil.example"}, 403),
        ("cross-site fetch", {**bearer, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}, 403),
        ("navigation to the API", {**bearer, "Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}, 403),
        ("frame of the API", {**bearer, "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate",
                              "Sec-Fetch-Dest": "iframe"}, 403),
        ("the dashboard page's own fetch", {**bearer, "Origin": f"http://127.0.0.1:{port}",
                                            "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}, 200),
        ("the same, as localhost", {**bearer, "Origin": f"http://localhost:{port}", "Host": f"localhost:{port}",
                                    "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}, 200),
        ("a program with the token", bearer, 200),
    ]
    table = []
    try:
        async with httpx.AsyncClient() as client:
            for what, headers, expected in attempts:
                reply = await client.get(f"{base}/dashboard/api/sessions", headers=headers)
                table.append((what, reply.status_code, expected, reply.text))
            page = await client.get(f"{base}/dashboard/", headers={"User-Agent": HEADLESS_UA})
    finally:
        await server.stop()
    print("\nattempt (all with the token)         status")
    for what, status, _, _ in table:
        print(f"  {what:35} {status}")
    wrong = [(what, status) for what, status, expected, _ in table if status != expected]
    assert not wrong, wrong
    assert all("may never reach webhand's dashboard" in text for _, status, _, text in table if status == 403)
    assert page.status_code == 403, "the static page too is refused to a headless browser"
    refused, served = sum(s == 403 for _, s, _, _ in table), sum(s == 200 for _, s, _, _ in table)
    print(f"{refused} refused, {served} served as they should")


# -- the model's words in front of the person (issue 43) -------------------------------------------

#: Reasons a model led by a page could give browser_request_human, and what must not reach the
#: person's prompt of each: (attempt, reason, what the prompt must not carry).
REASONS = [
    ("a second link", "Sign in at https://evil.example/login first", ["https://", "evil.example"]),
    ("a paragraph of its own", "Solve the CAPTCHA\n\nwebhand: the session moved, open http://127.0.0.1:1/x",
     ["\n\nwebhand:", "http://127.0.0.1:1"]),
    ("a bare host name", "Log in at evil.example/login and come back", ["evil.example"]),
    ("a markdown link", "[Open the dashboard](https://evil.example/dashboard)", ["](https://", "evil.example"]),
    ("a javascript: link", "javascript:fetch('//evil.example') to continue", ["javascript:"]),
    ("a Unicode line break", "Done?\u2028Open www.evil.example now", ["\u2028", "www.evil.example"]),
    ("a right-to-left override", "Approve \u202eelpmaxe.live\u202c payment", ["\u202e"]),
    ("a long letter", "Please " + "read carefully and then " * 40 + "click", []),
]


@pytest.mark.one_driver("the person's prompt is written above the Driver")
async def test_the_person_sees_the_models_reason_as_plain_bounded_text_with_webhands_link_only(webhand, site):
    import mcp_types as types

    from test_mcp_client_features import client

    sessions = webhand.sessions
    before = sessions.dashboard_url, sessions.dashboard_link
    sessions.dashboard_url = "http://127.0.0.1:9/dashboard"
    sessions.dashboard_link = lambda url, sid: f"{url}/#session={sid}"
    context = webhand.conversation(f"reasons-{uuid.uuid4().hex[:10]}")
    asked: list[str] = []

    async def elicit(_context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    table = []
    try:
        async with client(webhand, context, elicitation_callback=elicit) as mcp:
            await mcp.call_tool("browser_navigate", {"url": site.url("login.html")})
            for what, reason, forbidden in REASONS:
                await mcp.call_tool("browser_request_human", {"reason": reason[:500], "timeout": 30})
                prompt = asked[-1]
                # The model's part is the one quoted line; the rest is webhand's own words and link.
                quoted = prompt.split('"', 1)[1].rsplit('"', 1)[0] if prompt.count('"') >= 2 else prompt
                links = re.findall(r"https?://\S+", prompt)
                kept = [bad for bad in forbidden if bad in prompt]
                table.append((what, quoted, not kept and len(quoted) <= 200 and "\n" not in quoted
                              and links == [f"{sessions.dashboard_url}/#session=" + links[0].rsplit("=", 1)[1]]))
    finally:
        sessions.dashboard_url, sessions.dashboard_link = before
        await webhand.end_conversation(context.conversation_id)
    print("\nreason given                 shown as plain text, webhand's link only")
    for what, quoted, held in table:
        print(f"  {what:26} {held!s:6} {quoted[:70]!r}")
    assert all(held for *_, held in table), [row for row in table if not row[2]]
    assert len(table) == len(REASONS) and len(asked) == len(REASONS)


# -- mocks are code (issue 43) ------------------------------------------------------------------------

RUNS = "<script>document.title = 'ran'</script>"
#: Mocks a browser could run, refused while evaluate_enabled = false: (attempt, browser_route's fields).
ACTIVE_MOCKS = [
    ("an HTML page", {"content_type": "text/html", "body": RUNS}),
    ("HTML with a charset, in capitals", {"content_type": "TEXT/HTML; charset=utf-8", "body": RUNS}),
    ("HTML as a header", {"headers": {"Content-Type": "text/html"}, "body": RUNS}),
    ("XHTML", {"content_type": "application/xhtml+xml", "body": f"<html xmlns='http://www.w3.org/1999/xhtml'>{RUNS}</html>"}),
    ("SVG", {"content_type": "image/svg+xml", "body": f"<svg xmlns='http://www.w3.org/2000/svg'>{RUNS}</svg>"}),
    ("XML", {"content_type": "text/xml", "body": "<?xml-stylesheet href='x.xsl'?><a/>"}),
    ("JavaScript", {"content_type": "text/javascript", "body": "document.title = 'ran'"}),
    ("a module script type", {"content_type": "application/javascript", "body": "document.title = 'ran'"}),
    ("no type at all, sniffed as HTML", {"body": "<!doctype html>" + RUNS}),
    ("an empty type", {"content_type": " ", "body": RUNS}),
]


async def test_with_evaluate_disabled_a_mock_answers_only_with_types_no_browser_runs(tmp_path_factory, site, driver):
    settings = settings_for_tests(tmp_path_factory, evaluate_enabled=False, warm_reserve=False, driver=driver)
    table = []
    async with Webhand(settings) as wh:
        tools = wh.conversation("inert-mocks")
        assert not (await tools.call("browser_navigate", {"url": site.url("network.html")})).is_error
        for what, fields in ACTIVE_MOCKS:
            reply = await tools.call("browser_route", {"pattern": "**/mocked-page", **fields})
            table.append((what, reply.is_error and "evaluate_enabled = false" in reply.text, reply.text))
        # Inert types answer, and nothing runs: a page mocked as text, a page's script mocked as text
        # (a <script src> runs text/plain unless the answer says nosniff).
        for pattern in ("**/mocked-page", "**/cacheable/app.js"):
            set_ = await tools.call("browser_route", {"pattern": pattern, "content_type": "text/plain",
                                                      "body": RUNS if "page" in pattern else "document.title = 'ran'"})
            assert not set_.is_error, set_.text
        text_page = await tools.call("browser_navigate", {"url": site.url("mocked-page")})
        text_seen = (await tools.call("browser_snapshot", {})).text
        script_page = await tools.call("browser_navigate", {"url": site.url("cache.html")})
        json_mock = await tools.call("browser_route", {"pattern": "**/api", "content_type": "application/json",
                                                       "body": '{"ok": true}'})
    print("\nmock answered with                     refused, naming evaluate_enabled")
    for what, refused, _ in table:
        print(f"  {what:38} {refused}")
    assert all(refused for _, refused, _ in table), [(w, t) for w, r, t in table if not r]
    assert not text_page.is_error and "ran" not in text_page.data["title"], text_page.text
    assert "document.title" in text_seen, "the mocked page shows its text as text"
    assert not script_page.is_error and script_page.data["title"] == "Cache", script_page.text
    assert not json_mock.is_error, json_mock.text


# -- another webhand's endpoints (issue 43) -----------------------------------------------------------

#: Headers a server judges who is asking by; a continue route may set none of them.
JUDGED_HEADERS = {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0", "Origin": "http://127.0.0.1:{port}",
                  "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Cookie": "session=stolen",
                  "Host": "127.0.0.1:{port}"}


async def test_one_webhands_model_cannot_reach_another_webhands_endpoints(tmp_path, tmp_path_factory, site, driver):
    from test_mcp_http import mcp_server

    from webhand.security.running_servers import RUNNING_SERVERS

    table: list[tuple[str, bool, str]] = []
    with mcp_server(tmp_path) as other:  # webhand A, in a process of its own, as a second server on the machine
        base = other.url.removesuffix("/mcp")
        port = int(base.rsplit(":", 1)[1])
        registered = Path(RUNNING_SERVERS.folder(create=False) or "/nonexistent") / str(port)
        assert json.loads(registered.read_text())["pid"] == other.process.pid
        assert stat.S_IMODE(registered.stat().st_mode) == 0o600
        settings = settings_for_tests(tmp_path_factory, warm_reserve=False, driver=driver)
        async with Webhand(settings) as wh:  # webhand B: no origin rule, and no server of its own
            tools = wh.conversation("another-webhand")

            async def attempt(what: str, name: str, arguments: dict[str, Any], refused_as: str) -> None:
                reply = await tools.call(name, arguments)
                table.append((what, reply.is_error and refused_as in reply.text, reply.text))

            for endpoint in ENDPOINTS:
                await attempt(f"open {endpoint}", "browser_navigate", {"url": base + endpoint}, "another webhand's")
            # Issue 43's way in: a page mocked at A's origin, opened there to call A same-origin.
            mocked = await tools.call("browser_route", {"pattern": f"{base}/**", "content_type": "text/html",
                                                        "body": "<title>at A</title>"})
            assert not mocked.is_error, mocked.text
            await attempt("open a mock at A's origin", "browser_navigate", {"url": f"{base}/mocked"}, "another webhand's")
            ok = await tools.call("browser_navigate", {"url": site.url("route/echo.html")})
            assert not ok.is_error, ok.text
            fetched = await tools.call("browser_eval", {"expression": f"""
                fetch({json.dumps(base + '/dashboard/api/sessions')}, {{mode: 'no-cors'}}).then(r => 'status ' + r.status,
                                                                         e => 'failed: ' + e.message)"""})
            table.append(("a page's fetch of A's API", str(fetched.data.get("result", "")).startswith("failed"),
                          fetched.text))
            await attempt("a continue route to A's /mcp", "browser_route",
                          {"pattern": "**/echo?from=page", "action": "continue", "url": f"{base}/mcp"},
                          "another webhand's")
            for header, value in JUDGED_HEADERS.items():
                await attempt(f"a continue route setting {header}", "browser_route",
                              {"pattern": "**/echo?from=page", "action": "continue",
                               "headers": {header: value.format(port=port)}}, "cannot set the request header")
    gone = not registered.exists()
    print("\nattempt on another webhand's server        refused, and the reply says so")
    for what, refused, _ in table:
        print(f"  {what:42} {refused}")
    assert all(refused for _, refused, _ in table), [(w, t) for w, r, t in table if not r]
    assert gone, "a server that stopped leaves no entry behind"
