"""The dashboard, used as a person would: a second, separate Chromium (driven by Playwright) opens
the dashboard page while an agent works through webhand's tools.

The viewer's browser is launched once for the module (each test has a fresh context in it); when
the module ends it is closed, and none of its processes may be left.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import psutil
import pytest
from playwright.async_api import Browser, Page, async_playwright

from helpers import settings_for_tests, wait_until_gone_async
from webhand import Webhand
from webhand.engine.launch.chrome import find_chromium
from webhand.errors import ConfigError
from webhand.surfaces.cli.export import load_entries, steps_of
from webhand.surfaces.dashboard import DashboardServer, dashboard_app
from webhand.surfaces.dashboard.live import DashboardLiveView
from webhand.surfaces.http_security import HttpOptions

TOKEN = "dashboard-test-token-5b1e"
PERSON_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36"


def viewer_processes() -> list[psutil.Process]:
    """The viewer's Chromium: Playwright gives the browsers it launches its own profile folder."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if "playwright_chromiumdev_profile" in " ".join(process.cmdline()):
                found.append(process)
        except psutil.NoSuchProcess:
            continue
    return found


@pytest.fixture(scope="module")
async def watched(tmp_path_factory, driver) -> AsyncIterator[Webhand]:
    """A Webhand of its own: the dashboard's thumbnails and live views stay out of other tests."""
    async with Webhand(settings_for_tests(tmp_path_factory, warm_reserve=False, driver=driver)) as wh:
        yield wh


@pytest.fixture(scope="module")
async def dashboard(watched) -> AsyncIterator[str]:
    server = DashboardServer(watched, HttpOptions(host="127.0.0.1", port=0))
    yield await server.start()
    await server.stop()


@pytest.fixture
async def agent(watched):
    context = watched.conversation(f"agent-{uuid.uuid4().hex[:8]}")
    yield context
    await watched.end_conversation(context.conversation_id)


@pytest.fixture(scope="module")
async def viewer_browser(tmp_path_factory) -> AsyncIterator[Browser]:
    """A person's browser: its own Chromium, separate from webhand's (its temporary files, the
    singleton-socket folder among them, in a folder of its own rather than the shared /tmp).
    Launched once for the module (a launch per test cost some 2 s each); each test gets a fresh
    context in it (``viewer``)."""
    async with async_playwright() as playwright:
        # A person's browser says Chrome, not HeadlessChrome (the dashboard refuses headless ones:
        # webhand's own), in every request, a page's last keepalive one too: hence the flag.
        browser = await playwright.chromium.launch(executable_path=find_chromium(),
                                                   args=["--no-sandbox", f"--user-agent={PERSON_UA}"],
                                                   env={**os.environ, "TMPDIR": str(tmp_path_factory.mktemp("viewer"))})
        processes = viewer_processes()
        assert processes, "the viewer's Chromium should be running"
        try:
            yield browser
        finally:
            await browser.close()
    assert not await wait_until_gone_async(processes), "the viewer's Chromium was left running"


@pytest.fixture
async def viewer(viewer_browser: Browser) -> AsyncIterator[Page]:
    """The person's page, in a context of its own (cookies, storage, a token typed earlier: none)."""
    # The page forbids eval (its CSP); Playwright needs it for wait_for_function.
    context = await viewer_browser.new_context(viewport={"width": 1400, "height": 1000}, bypass_csp=True)
    try:
        yield await context.new_page()
    finally:
        await context.close()


def artifacts(tmp_path: Path) -> Path:
    """Where a test keeps its screenshots: $WEBHAND_TEST_ARTIFACTS (CI uploads it), else its tmp_path.
    Printed, so that a person can look at them (``pytest -s`` or the captured output of a failure)."""
    folder = Path(os.environ.get("WEBHAND_TEST_ARTIFACTS") or tmp_path) / "dashboard"
    folder.mkdir(parents=True, exist_ok=True)
    print(f"dashboard screenshots in {folder}")
    return folder


#: Visible header cells, names and network cells whose text wraps onto a second line (a header
#: broken letter by letter, a long name or "styleshee t" over two lines).
_WRAPPED = """() => [...document.querySelectorAll('th, td.clip, #network td:not(:last-child)')].filter(e => {
    if (e.getBoundingClientRect().width === 0) return false;  // hidden at this width
    const text = document.createRange();
    text.selectNodeContents(e);
    return new Set([...text.getClientRects()].map(r => Math.round(r.top))).size > 1;  // more than one line
}).map(e => e.tagName + ' ' + JSON.stringify(e.textContent))"""


def session_id(webhand: Webhand, conversation: str) -> str:
    return next(s.public_id for s in webhand.sessions.sessions() if s.key.conversation == conversation)


async def open_session(viewer: Page, dashboard: str, sid: str) -> None:
    await viewer.goto(f"{dashboard}/dashboard/#session={sid}")
    await viewer.wait_for_function("Number(document.getElementById('screen').dataset.frames || 0) >= 1")


async def release(viewer: Page) -> None:
    """Hand control back from the dashboard and wait for the server's answer: the page sends the
    release without waiting for it, and an agent call that comes first rightly waits for it."""
    async with viewer.expect_response(lambda r: r.url.endswith("/control") and '"release"' in (r.request.post_data or "")):
        await viewer.click("#release")


async def test_dashboard_lists_a_running_session(watched, dashboard, agent, viewer, site):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    await viewer.goto(f"{dashboard}/dashboard/")
    row = viewer.locator("tr.session", has_text=agent.conversation_id)
    await row.wait_for()
    cells = await row.locator("td").all_inner_texts()
    assert cells[1] == "default" and cells[2] == "idle" and cells[3] == site.url("actions/form.html")
    assert cells[4] == "1" and cells[7] == "1"  # one tab, one action


async def test_live_view_frame_changes_after_the_agent_navigates(watched, dashboard, agent, viewer, site):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    await open_session(viewer, dashboard, session_id(watched, agent.conversation_id))
    first = await viewer.locator("#screen").get_attribute("src")
    await agent.call("browser_navigate", {"url": site.url("tall.html")})
    await viewer.wait_for_function("src => document.getElementById('screen').src !== src", arg=first)
    # The history timeline shows both navigations, with a thumbnail after each (someone was watching).
    await viewer.locator("#history .entry").nth(1).wait_for()
    assert await viewer.locator("#history .entry img").count() >= 1


async def test_takeover_typing_reaches_the_page_and_the_agent_waits_until_release(watched, dashboard, agent, viewer,
                                                                                 site):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    box = json.loads((await agent.call("browser_eval", {
        "expression": "(() => { const r = document.querySelector('#name').getBoundingClientRect();"
                      " return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()"})).text)
    await open_session(viewer, dashboard, session_id(watched, agent.conversation_id))
    await viewer.click("#take")
    await viewer.locator("#control-state", has_text="You have control").wait_for()

    # The agent's call waits while the person has control.
    reading = asyncio.ensure_future(agent.call("browser_eval", {"expression": "document.querySelector('#name').value"}))
    screen = viewer.locator("#screen")
    shown = await screen.bounding_box()
    frame_width = await viewer.evaluate("state.frame.w")
    scale = shown["width"] / frame_width
    await screen.click(position={"x": box["x"] * scale, "y": box["y"] * scale})
    await viewer.keyboard.type("Grace")
    await viewer.evaluate("sending")  # every input event has been answered by the server
    assert not reading.done(), "the agent's call ran while a person had control"

    await viewer.click("#release")
    reply = await reading
    assert not reply.is_error, reply.text
    assert '"Grace"' in reply.text
    assert "A person had control of this session" in reply.text


async def test_leaving_the_dashboard_hands_control_back(watched, dashboard, agent, viewer, site):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    await open_session(viewer, dashboard, session_id(watched, agent.conversation_id))
    await viewer.click("#take")
    await viewer.locator("#control-state", has_text="You have control").wait_for()
    waiting = asyncio.ensure_future(agent.call("browser_snapshot", {}))
    await viewer.goto("about:blank")  # the person closes the dashboard without releasing
    reply = await waiting
    assert not reply.is_error, reply.text
    assert "A person had control of this session" in reply.text


async def test_agent_call_times_out_saying_a_person_has_control(watched, dashboard, agent, site):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    session = next(s for s in watched.sessions.sessions() if s.key.conversation == agent.conversation_id)
    token = session.control.take("a person in the dashboard (from 127.0.0.1)")
    try:
        reply = await agent.call("browser_wait_for", {"time": 0.1, "timeout": 1})
    finally:
        session.control.release(token)
    assert reply.is_error and "A person has control of this session in the dashboard" in reply.text
    # Who, since when, that the call waited its timeout and no more, and how control comes back.
    assert "a person in the dashboard (from 127.0.0.1) has control since" in reply.text
    assert "waited its whole timeout (1 s)" in reply.text
    assert "Force release" in reply.text and f"{dashboard}/dashboard/#session={session.public_id}" in reply.text


@pytest.mark.one_driver("the lease lives above the Driver: the holding page's renewals and the server's timer")
async def test_takeover_is_a_lease_that_ends_soon_after_the_holding_page_goes_away(watched, dashboard, agent,
                                                                                   viewer_browser, site):
    """Issue 38.15: a person takes control, then their dashboard page goes away without Release (its
    renderer dies; its connection is cut). The agent's waiting call runs within seconds, saying why;
    meanwhile another dashboard page and the session list say who holds control, and anyone with
    the token can force a release."""
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    sid = session_id(watched, agent.conversation_id)
    pages = []

    async def holder() -> Page:
        context = await viewer_browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
        page = await context.new_page()
        pages.append(page)
        await open_session(page, dashboard, sid)
        await page.click("#take")
        await page.locator("#control-state", has_text="You have control").wait_for()
        return page

    try:
        # 1. The holder's tab dies without a word (no pagehide, no Release): the lease lapses.
        crashing = await holder()
        waiting = asyncio.ensure_future(agent.call("browser_snapshot", {}))
        listed = (await agent.call("browser_session_list", {})).text
        assert "a person in the dashboard (from 127.0.0.1) has control since" in listed
        cdp = await crashing.context.new_cdp_session(crashing)
        async with crashing.expect_event("crash"):
            asyncio.ensure_future(cdp.send("Page.crash"))
        reply = await waiting
        assert not reply.is_error, reply.text
        assert "their dashboard page stopped answering (closed, asleep or cut off), so control lapsed" in reply.text

        # 2. The holder's connection is cut (the network drops, the laptop sleeps): the same.
        cut = await holder()
        waiting = asyncio.ensure_future(agent.call("browser_snapshot", {}))
        await cut.context.set_offline(True)
        reply = await waiting
        assert not reply.is_error and "so control lapsed" in reply.text, reply.text

        # 3. A holder that is still there, and another page with the token: it sees who holds control
        # and since when, and forces a release; the holder's page hears that its control ended.
        kept = await holder()
        waiting = asyncio.ensure_future(agent.call("browser_snapshot", {}))
        other = await (await viewer_browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)).new_page()
        pages.append(other)
        await open_session(other, dashboard, sid)
        state = other.locator("#control-state", has_text="a person in the dashboard (from 127.0.0.1) has control since")
        await state.wait_for()
        assert "Force release" in await state.inner_text()
        assert await other.locator("#take").is_hidden()
        await other.click("#force-release")
        reply = await waiting
        assert not reply.is_error and "someone with the dashboard's token forced a release" in reply.text, reply.text
        await kept.locator("#control-state", has_text="Control ended").wait_for()
        assert await kept.locator("#take").is_visible()
    finally:
        for page in pages:
            await page.context.close()


async def test_request_human_returns_the_link_and_resumes_after_release(watched, dashboard, agent, viewer, site):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    sid = session_id(watched, agent.conversation_id)
    asking = asyncio.ensure_future(agent.call("browser_request_human", {"reason": "Type your name", "timeout": 120}))
    await viewer.goto(f"{dashboard}/dashboard/")
    row = viewer.locator("tr.session", has_text="asks for help")
    await row.wait_for()
    await row.click()
    await viewer.locator("#help-request", has_text="Type your name").wait_for()
    await viewer.click("#take")
    await viewer.locator("#control-state", has_text="You have control").wait_for()
    await viewer.click("#release")
    reply = await asking
    assert not reply.is_error, reply.text
    assert f"{dashboard}/dashboard/#session={sid}" in reply.text
    assert reply.data == {"dashboard": f"{dashboard}/dashboard/#session={sid}", "handed_back": True, "how": "released"}
    assert "; they handed it back." in reply.text


async def test_request_human_without_anyone_taking_over_times_out_with_the_link(watched, dashboard, agent, site):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    reply = await agent.call("browser_request_human", {"reason": "Solve the CAPTCHA", "timeout": 0.5})
    assert reply.is_error and "Nobody took control" in reply.text and "/dashboard/#session=" in reply.text


#: Every element whose box reaches past the viewport's right edge (hidden ones have no box).
_OVERFLOWING = """() => [...document.querySelectorAll('body *')].filter(e => {
    const box = e.getBoundingClientRect();
    return box.width > 0 && box.right > window.innerWidth + 0.5;
}).map(e => e.tagName + (e.id ? '#' + e.id : '') + ' right=' + Math.round(e.getBoundingClientRect().right))"""


async def test_the_dashboard_reads_well_at_any_width_and_watching_leaves_the_session_alone(
        watched, dashboard, agent, viewer, site, tmp_path):
    """The issue's checks, as a person (and a keyboard) uses the page: each session is a named link
    reached with Tab, opening one leaves its tabs as they were, nothing runs past the window at a
    laptop's 1280x720 or a phone-like 600x900, the history shows sizes, the network is a table."""
    from helpers import ref_of

    other = watched.conversation(f"agent-{uuid.uuid4().hex[:8]}")
    try:
        await agent.call("browser_navigate", {"url": site.url("network.html")})
        page = (await agent.call("browser_snapshot", {})).text
        await agent.call("browser_click", {"ref": ref_of(page, 'button "Load data"')})
        await agent.call("browser_wait_for", {"text": "loaded 200 and 404"})
        await other.call("browser_navigate", {"url": site.url("actions/form.html")})
        session = next(s for s in watched.sessions.sessions() if s.key.conversation == agent.conversation_id)
        open_tabs = lambda: len([t for t in session.context.tabs if not t.closed])  # noqa: E731
        assert open_tabs() == 1

        await viewer.set_viewport_size({"width": 1280, "height": 720})
        await viewer.goto(f"{dashboard}/dashboard/")
        links = {c: viewer.get_by_role("link", name=f"Open session {c} / default")
                 for c in (agent.conversation_id, other.conversation_id)}
        for link in links.values():
            await link.wait_for()
        # Tab from the top of the page reaches every session's link.
        reached = set()
        for _ in range(40):
            await viewer.keyboard.press("Tab")
            reached.add(await viewer.evaluate("document.activeElement.getAttribute('aria-label')"))
        assert {f"Open session {c} / default" for c in links} <= reached
        # Opened with the keyboard, watched until frames arrive: the watched session keeps its one tab.
        await links[agent.conversation_id].focus()
        await viewer.keyboard.press("Enter")
        await viewer.wait_for_function("Number(document.getElementById('screen').dataset.frames || 0) >= 1")
        assert open_tabs() == 1

        # The history says what each reply cost, and the session's total.
        size = viewer.locator("#history .entry .size").first
        await size.wait_for()
        assert "chars ≈" in await size.inner_text() and "tokens" in await size.inner_text()
        assert (await viewer.locator("#history-total").inner_text()).startswith("Replies so far: ")
        # The network pane is a table with a filter.
        await viewer.locator("#network tr", has_text="/status/404").wait_for()
        assert await viewer.locator("#network-table th").all_inner_texts() == ["Method", "Status", "Type", "Size", "Time", "URL"]
        await viewer.fill("#network-filter", "status/")
        assert await viewer.locator("#network tr").all_inner_texts() == [await viewer.locator("#network tr", has_text="/status/404").inner_text()]

        for width, height in ((1280, 720), (600, 900)):
            await viewer.set_viewport_size({"width": width, "height": height})
            await viewer.screenshot(path=str(tmp_path / f"dashboard-{width}x{height}.png"))
            assert await viewer.evaluate(_OVERFLOWING) == [], f"at {width}x{height}"
            header = await viewer.locator("header").bounding_box()
            assert header["height"] < 80, f"the header is {header['height']} px high at {width}x{height}"
        # Side by side on the wide screen, stacked on the narrow one.
        await viewer.set_viewport_size({"width": 1280, "height": 720})
        live, history = await viewer.locator("#screen").bounding_box(), await viewer.locator("#history-title").bounding_box()
        assert history["x"] > live["x"] + live["width"] - 1
        await viewer.set_viewport_size({"width": 600, "height": 900})
        live, history = await viewer.locator("#screen").bounding_box(), await viewer.locator("#history-title").bounding_box()
        assert history["y"] > live["y"] + live["height"] - 1
        assert open_tabs() == 1
    finally:
        await watched.end_conversation(other.conversation_id)


async def test_dashboard_refuses_a_missing_token(watched, viewer):
    server = DashboardServer(watched, HttpOptions(host="127.0.0.1", port=0, token=TOKEN, require_token=True))
    url = await server.start()
    try:
        await viewer.goto(f"{url}/dashboard/")  # the page itself holds no data: it loads, then asks
        await viewer.locator("#notice", has_text="needs its token").wait_for()
        assert await viewer.locator("tr.session").count() == 0
        async with httpx.AsyncClient() as client:
            refused = await client.get(f"{url}/dashboard/api/sessions")
            allowed = await client.get(f"{url}/dashboard/api/sessions", headers={"Authorization": f"Bearer {TOKEN}"})
        assert refused.status_code == 401 and allowed.status_code == 200
        await viewer.fill("#token", TOKEN)
        await viewer.click("#token-form button")
        await viewer.locator("#notice", has_text="needs its token").wait_for(state="hidden")
    finally:
        await server.stop()


def test_dashboard_off_loopback_refuses_to_start_without_a_token(watched):
    with pytest.raises(ConfigError, match="without a token"):
        dashboard_app(watched, HttpOptions(host="192.0.2.7", port=0))


async def test_dashboard_refuses_a_foreign_host_header(dashboard):
    async with httpx.AsyncClient() as client:
        reply = await client.get(f"{dashboard}/dashboard/api/sessions", headers={"Host": "attacker.example"})
    assert reply.status_code == 421


async def test_history_saved_from_the_dashboard_exports(watched, dashboard, agent, site, tmp_path):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    await agent.call("browser_snapshot", {})
    await agent.call("browser_type", {"ref": "e1", "text": "Ada"})
    sid = session_id(watched, agent.conversation_id)
    async with httpx.AsyncClient() as client:
        saved = await client.get(f"{dashboard}/dashboard/api/sessions/{sid}/history")
    assert saved.status_code == 200 and "attachment" in saved.headers["content-disposition"]
    (tmp_path / "history.json").write_bytes(saved.content)
    steps = steps_of(load_entries(tmp_path / "history.json"))
    assert [s["arguments"] for s in steps] == [{"url": site.url("actions/form.html")}, {"selector": "#name", "text": "Ada"}]


async def test_live_view_streams_only_while_someone_watches(watched, agent, site):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    session = next(s for s in watched.sessions.sessions() if s.key.conversation == agent.conversation_id)
    view = DashboardLiveView(session, max_fps=5)
    assert not view.streaming
    queue = await view.join()
    frame = await asyncio.wait_for(queue.get(), 15)
    assert frame.jpeg[:2] == b"\xff\xd8" and frame.width == 1280 and view.streaming
    await view.leave(queue)
    assert not view.streaming


async def test_http_server_serves_the_dashboard_behind_its_token(tmp_path, site):
    from test_mcp_http import call, mcp_client, mcp_server

    with mcp_server(tmp_path, "--require-token", env={"WEBHAND_TOKEN": TOKEN}) as server:
        base = server.url.removesuffix("/mcp")
        async with mcp_client(server.url, TOKEN) as mcp, httpx.AsyncClient() as client:
            await call(mcp, "browser_navigate", {"url": site.url("actions/form.html")})
            page = await client.get(f"{base}/dashboard/")
            refused = await client.get(f"{base}/dashboard/api/sessions")
            listed = await client.get(f"{base}/dashboard/api/sessions", headers={"Authorization": f"Bearer {TOKEN}"})
        assert page.status_code == 200 and "webhand dashboard" in page.text
        assert refused.status_code == 401
        assert [s["url"] for s in listed.json()["sessions"]] == [site.url("actions/form.html")]

        # Printed just after the "listening" line, which is all the fixture waits for: read it last.
        assert f"webhand dashboard on {base}/dashboard/" in server.log()

@pytest.mark.one_driver("the dashboard page's layout and choice of session lie above the Driver")
async def test_the_dashboard_opens_on_something_and_holds_from_360_to_1440_px(watched, dashboard, agent, viewer, site,
                                                                          tmp_path):
    """Issue 42.8, 42.9, 42.13: with no session, a clear word and nothing to click; with the only
    one, it opens on it; with two, "pick a session" and no Take control. At 360, 800 and 1440 px
    nothing runs past the window, no header or name breaks over lines, a size is known or a dash,
    and a console error keeps its line breaks."""
    folder = artifacts(tmp_path)
    await viewer.set_viewport_size({"width": 1440, "height": 900})
    await viewer.goto(f"{dashboard}/dashboard/")
    await viewer.locator("#pick", has_text="No sessions yet").wait_for()
    assert await viewer.locator("#take").is_hidden() and await viewer.locator("#screen").is_hidden()

    await agent.call("browser_navigate", {"url": site.url("cache.html")})
    await agent.call("browser_navigate", {"url": site.url("network.html")})
    await agent.call("browser_navigate", {"url": site.url("cache.html")})  # its script now comes from the cache
    await agent.call("browser_eval", {"expression": "console.error('Failed to load\\n  at load (app.js:12)'), 1"})
    sid = session_id(watched, agent.conversation_id)
    # The only session opens by itself: its live view, its panels, and a Take control that works.
    await viewer.wait_for_function("Number(document.getElementById('screen').dataset.frames || 0) >= 1")
    # The list's next refresh clears the "No sessions yet" word; the live view may have painted first.
    await viewer.wait_for_function("document.getElementById('pick').innerText === ''")
    assert viewer.url.endswith(f"#session={sid}")
    await viewer.locator("#network tr", has_text="network-style.css").first.wait_for()
    await viewer.locator("#console", has_text="Failed to load").wait_for()
    console = await viewer.locator("#console").inner_text()
    # Its own line breaks kept, its later lines indented under it; no escaped "\\n".
    assert "[error] Failed to load\n      at load (app.js:12)" in console and "\\n" not in console
    sizes = await viewer.locator("#network td:nth-child(4)").all_inner_texts()
    assert sizes and "0 B" not in sizes and all(size == "—" or size[0].isdigit() for size in sizes), sizes

    for width, height in ((360, 740), (800, 900), (1440, 900)):
        await viewer.set_viewport_size({"width": width, "height": height})
        await viewer.screenshot(path=str(folder / f"first-view-{width}.png"), full_page=True)
        assert await viewer.evaluate(_OVERFLOWING) == [], f"at {width} px"
        assert await viewer.evaluate(_WRAPPED) == [], f"at {width} px"
        name = viewer.locator("tr.session td").first
        assert await name.get_attribute("title") == agent.conversation_id  # cut with "…", whole on hover

    other = watched.conversation(f"agent-{uuid.uuid4().hex[:8]}")
    try:
        await other.call("browser_navigate", {"url": site.url("actions/form.html")})
        second = await viewer.context.new_page()
        await second.goto(f"{dashboard}/dashboard/")
        await second.locator("tr.session").nth(1).wait_for()
        await second.locator("#pick", has_text="Pick a session above").wait_for()
        assert await second.locator("#take").is_hidden() and await second.locator("#detail").is_hidden()
    finally:
        await watched.end_conversation(other.conversation_id)


async def test_takeover_shows_the_page_at_its_own_size_and_its_dialogs(watched, dashboard, agent, viewer, site,
                                                                       tmp_path):
    """Issue 42.10: taking control gives the live view the window (the page's 1280 px where they
    fit), and a confirm dialog the person's own click opens is shown in the dashboard and answered there."""
    folder = artifacts(tmp_path)
    await viewer.set_viewport_size({"width": 1440, "height": 900})
    await agent.call("browser_navigate", {"url": site.url("tabs_files/dialogs.html")})
    button = json.loads((await agent.call("browser_eval", {
        "expression": "(() => { const r = document.querySelector('#confirm').getBoundingClientRect();"
                      " return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()"})).text)
    await open_session(viewer, dashboard, session_id(watched, agent.conversation_id))
    await viewer.screenshot(path=str(folder / "before-takeover-1440.png"))
    await viewer.click("#take")
    await viewer.locator("#control-state", has_text="You have control").wait_for()
    frame_width = await viewer.evaluate("state.frame.w")
    await viewer.wait_for_function("w => Math.abs(document.getElementById('screen').getBoundingClientRect().width - w) < 1",
                                   arg=frame_width)
    shown = await viewer.locator("#screen").bounding_box()
    assert shown["y"] + shown["height"] <= 900 + 1, "the page's view fits in the window"
    await viewer.screenshot(path=str(folder / "takeover-1440.png"))

    await viewer.locator("#screen").click(position={"x": button["x"] * shown["width"] / frame_width,
                                                    "y": button["y"] * shown["width"] / frame_width})
    dialog = viewer.get_by_role("alertdialog")
    await dialog.locator("#dialog-message", has_text="Delete it?").wait_for()
    await viewer.screenshot(path=str(folder / "takeover-dialog-1440.png"))
    await viewer.evaluate("sending")  # the click's request was answered, though the dialog is open
    await dialog.get_by_role("button", name="OK").click()
    await dialog.wait_for(state="hidden")
    await release(viewer)
    reply = await agent.call("browser_eval", {"expression": "document.querySelector('#out').textContent"})
    assert reply.text.strip('"') == "deleted", reply.text
    for width in (360, 800):
        await viewer.click("#take")
        await viewer.locator("#control-state", has_text="You have control").wait_for()
        await viewer.set_viewport_size({"width": width, "height": 800})
        await viewer.screenshot(path=str(folder / f"takeover-{width}.png"))
        assert await viewer.evaluate(_OVERFLOWING) == [], f"at {width} px"
        await release(viewer)


@pytest.mark.one_driver("the HTTP gates answer before any browser is reached")
async def test_a_browser_without_the_token_gets_a_page_and_an_api_client_json(watched, viewer):
    """Issue 42.11: a person's browser that opens an address of the dashboard's server without the
    token gets a page that says where the dashboard is; an API client still gets JSON."""
    server = DashboardServer(watched, HttpOptions(host="127.0.0.1", port=0, token=TOKEN, require_token=True))
    url = await server.start()
    try:
        for path in ("/", "/dashboard/api/sessions"):
            answer = await viewer.goto(url + path)
            assert answer.status in (401, 403) and answer.headers["content-type"].startswith("text/html")
            assert await viewer.get_by_role("heading").inner_text() == "This address is not a page to open"
            assert await viewer.get_by_role("link", name="/dashboard/").get_attribute("href") == "/dashboard/"
        async with httpx.AsyncClient() as client:
            refused = await client.get(f"{url}/dashboard/api/sessions")
        assert refused.status_code == 401 and "bearer token" in refused.json()["error"]
    finally:
        await server.stop()


def _link_parts(line: str) -> tuple[str, str]:
    """The server and the token of a printed dashboard link (http://127.0.0.1:PORT/dashboard/#token=T)."""
    link = line[line.index("http://"):].split()[0]
    return link.split("/dashboard/")[0], link.split("token=")[1]


@pytest.mark.one_driver("the stdio server's start-up and advice lie above the Driver")
async def test_mcp_over_stdio_serves_its_dashboard_and_request_human_leads_there(tmp_path, site):
    """Issue 42.12: `webhand mcp --dashboard` prints its dashboard's link on stderr at start; that
    dashboard serves this server's session, and browser_request_human gives the session's page in it."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "WEBHAND_OUTPUT_DIR": str(tmp_path / "out")}
    server = StdioServerParameters(command=sys.executable, args=["-m", "webhand", "mcp", "--dashboard", "--caps", "core,human"],
                                    env=env)
    with open(tmp_path / "stderr.txt", "w+", encoding="utf-8") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            await mcp.call_tool("browser_navigate", {"url": site.url("actions/form.html")})
            asked = await mcp.call_tool("browser_request_human", {"reason": "Sign in", "timeout": 0.5})
            errlog.seek(0)
            printed = next(line for line in errlog if line.startswith("webhand dashboard on http://127.0.0.1:"))
            base, token = _link_parts(printed)
            async with httpx.AsyncClient() as client:
                listed = await client.get(f"{base}/dashboard/api/sessions", headers={"Authorization": f"Bearer {token}"})
            text = asked.content[0].text
            assert asked.is_error and "Nobody took control" in text, text
            sid = listed.json()["sessions"][0]["id"]
            assert f"{base}/dashboard/#session={sid}" in text
            assert [s["url"] for s in listed.json()["sessions"]] == [site.url("actions/form.html")]
    assert any(runtime.rglob("dashboard-token")), "the link carries the user's dashboard token, kept in its file"


@pytest.mark.one_driver("the daemon's status lies above the Driver")
async def test_daemon_status_says_who_holds_control_and_how_to_release_it(cli, site):
    """Issue 38.15: `webhand daemon status` names who holds a session's control, since when, and how
    it ends; a forced release (with the dashboard's token) hands it back."""
    cli("navigate", site.url("actions/form.html"))
    base, token = _link_parts(cli("dashboard").stdout)
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(headers=auth) as client:
        sid = (await client.get(f"{base}/dashboard/api/sessions")).json()["sessions"][0]["id"]
        taken = await client.post(f"{base}/dashboard/api/sessions/{sid}/control", json={"action": "take"})
        assert taken.status_code == 200, taken.text
        status = cli("daemon", "status").stdout
        assert "a person in the dashboard (from 127.0.0.1) has control since" in status
        assert "Force release" in status and f"/dashboard/#session={sid}" in status
        again = await client.post(f"{base}/dashboard/api/sessions/{sid}/control", json={"action": "take"})
        assert again.status_code == 409 and "has control since" in again.json()["error"]
        forced = await client.post(f"{base}/dashboard/api/sessions/{sid}/control", json={"action": "force_release"})
        assert forced.status_code == 200, forced.text
    assert "has control" not in cli("daemon", "status").stdout
    assert site.url("actions/form.html") in cli("get_url").stdout  # the session runs calls again


async def test_a_flow_saved_from_the_dashboard_runs_again(watched, dashboard, agent, site, data_home):
    await agent.call("browser_navigate", {"url": site.url("actions/form.html")})
    await agent.call("browser_snapshot", {})
    await agent.call("browser_type", {"ref": "e1", "text": "Ada"})
    sid = session_id(watched, agent.conversation_id)
    async with httpx.AsyncClient() as client:
        bad = await client.post(f"{dashboard}/dashboard/api/sessions/{sid}/flow", json={"name": "../x"})
        saved = await client.post(f"{dashboard}/dashboard/api/sessions/{sid}/flow", json={"name": "form"})
    assert bad.status_code == 400 and "A flow's name is letters" in bad.json()["error"]
    assert saved.status_code == 200 and saved.json()["steps"] == 2, saved.text
    ran = await agent.call("browser_run_flow", {"name": "form"})
    assert "Ran the flow 'form': 2 of 2 steps." in ran.text, ran.text
