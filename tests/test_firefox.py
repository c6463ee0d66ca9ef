"""The Firefox driver (engine/bidi/, WebDriver BiDi) end to end on Debian's stock firefox-esr:
a first slice of what the conformance suite covers, on one Firefox for the whole module.

Skipped only when no Firefox is installed (scripts/ensure-firefox installs it).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import struct
from collections.abc import AsyncIterator

import pytest

from helpers import (own_browser_processes, own_registry_entries, processes_in_group, settings_for_tests,
                     wait_until_gone)
from webhand import Webhand
from webhand.config import Settings
from webhand.engine.bidi import BidiBrowser, FirefoxDriver
from webhand.engine.bidi.page_requests import ANNOUNCE_CAP, IN_FLIGHT, announced, known_in_flight
from webhand.engine.driver import ConsoleEntry, Dialog, NetworkConditions, TabEvents, WaitCondition
from webhand.errors import ActionTimeout, InvalidArgument, NavigationFailed, NotOnFirefox, WebhandError
from webhand.page.snapshot import take_snapshot
from webhand.session.manager import make_driver

if not (shutil.which("firefox-esr") or shutil.which("firefox")):
    pytest.skip("no Firefox installed (firefox-esr or firefox on PATH): run scripts/ensure-firefox",
                allow_module_level=True)


def _firefox_processes() -> list:
    return [p for p in own_browser_processes() if "firefox" in ((p.cmdline() or [""])[0]).lower()]


@pytest.fixture(scope="module")
async def host(tmp_path_factory) -> AsyncIterator[Webhand]:
    """One Webhand on one Firefox for the module (context isolation: each session is a Firefox user
    context). Closing it must leave no Firefox process, no temporary profile, no registry entry."""
    settings = settings_for_tests(tmp_path_factory, driver="firefox", warm_reserve=False,
                                  capabilities=["core", "tabs"])
    registered_before = set(own_registry_entries())  # the worker's shared Chromium stays registered
    webhand = Webhand(settings)
    await webhand.start()
    yield webhand
    browser = webhand.sessions._shared
    group = browser.pid if isinstance(browser, BidiBrowser) else None
    await webhand.close()
    # This host's Firefox and its helpers (its process group), not the worker's shared Firefox of the
    # conformance run, which lives on.
    left = wait_until_gone(processes_in_group(group) if group else _firefox_processes(), timeout=10)
    assert not left, f"Firefox processes left after close: {[p.pid for p in left]}"
    if isinstance(browser, BidiBrowser) and browser.firefox is not None:
        assert not os.path.exists(browser.firefox.scratch_dir), "the temporary profile was not removed"
    assert not set(own_registry_entries()) - registered_before, "PID registry entries left behind"


@pytest.fixture(scope="module")
async def firefox(host: Webhand) -> BidiBrowser:
    """The host's Firefox, for the tests that drive the Driver interface directly."""
    browser = await host.sessions._shared_browser()  # the browser every session of the host uses
    assert isinstance(browser, BidiBrowser) and browser.pid is not None and _firefox_processes()
    return browser


class Heard:
    """What a tab's events told, with an asyncio.Event set on each (waited for, never polled)."""

    def __init__(self) -> None:
        self.console: list[ConsoleEntry] = []
        self.dialogs: list[Dialog] = []
        self.changed = asyncio.Event()
        self.events = TabEvents(console=self._record(self.console), dialog=self._record(self.dialogs))

    def _record(self, into: list):
        def record(item) -> None:
            into.append(item)
            self.changed.set()
        return record

    async def until(self, condition, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while not condition():
                self.changed.clear()
                await self.changed.wait()


async def _tab(firefox: BidiBrowser, heard: Heard, width: int = 800, height: int = 600):
    context = await firefox.new_context(width=width, height=height, downloads_dir=None, events=heard.events)
    return context, await context.new_tab()


def test_the_settings_choose_the_firefox_driver(tmp_path) -> None:
    from webhand.config import load_settings

    settings = load_settings(env={"WEBHAND_DRIVER": "firefox"}, cwd=tmp_path)
    assert settings.driver == "firefox" and settings.browser == "firefox"
    assert isinstance(make_driver(settings), FirefoxDriver)
    assert load_settings(env={"WEBHAND_DRIVER": "firefox"}, flags={"driver": "cdp"}, cwd=tmp_path).driver == "cdp"
    assert load_settings(flags={"driver": "playwright"}, cwd=tmp_path).browser == "chromium"


def test_the_old_browser_key_still_picks_firefox_with_a_deprecation_line(tmp_path, caplog) -> None:
    """Issue 39: one setting picks the driver (``driver = cdp | playwright | firefox``); ``browser``, the
    key Firefox had before, is still read and says it is deprecated."""
    from webhand.config import load_settings

    with caplog.at_level("WARNING", logger="webhand"):
        settings = load_settings(env={"WEBHAND_BROWSER": "firefox"}, cwd=tmp_path)
    assert settings.driver == "firefox" and isinstance(make_driver(settings), FirefoxDriver)
    assert any('browser = "firefox" is deprecated; write driver = "firefox"' in r.getMessage() for r in caplog.records)
    assert load_settings(env={"WEBHAND_BROWSER": "firefox"}, flags={"browser": "chromium"}, cwd=tmp_path).driver == "cdp"
    config = tmp_path / "webhand.toml"
    config.write_text('[defaults.browser]\nbrowser = "firefox"\n')
    assert load_settings(cwd=tmp_path).driver == "firefox"


async def test_navigate_snapshot_click_and_type(firefox: BidiBrowser, site) -> None:
    heard = Heard()
    context, tab = await _tab(firefox, heard)
    try:
        result = await tab.navigate(site.url("firefox/core.html"), wait_until="load", timeout=30)
        assert result.title == "Firefox core" and result.url == site.url("firefox/core.html")
        assert result.status == 200
        snapshot = await take_snapshot(tab)
        assert "# Orders" in snapshot.text and "Three orders are waiting." in snapshot.text
        refs = {line.split('"')[1]: line.split("[")[1].split("]")[0]
                for line in snapshot.lines if "[e" in line and '"' in line}
        assert {"Name", "Record", "Ask"} <= set(refs), snapshot.text
        await (await tab.refs.resolve(refs["Name"], timeout=10)).fill("Ada Lovelace", timeout=10)
        await (await tab.refs.resolve(refs["Record"], timeout=10)).click(timeout=10)
        after = await take_snapshot(tab)
        assert 'status "recorded Ada Lovelace"' in after.text or "recorded Ada Lovelace" in after.text, after.text
        # The page saw a real pointer and real keys: the input's value came through key events.
        assert await tab.console.evaluate("document.getElementById('name').value", await_promise=False, timeout=10) == "Ada Lovelace"
        await heard.until(lambda: any(e.text == "recorded click" for e in heard.console))
        assert [e.level for e in heard.console if e.text == "recorded click"] == ["warning"]
    finally:
        await context.close()


async def test_the_page_cannot_reach_the_agent(firefox: BidiBrowser, site) -> None:
    """The agent lives in a sandbox realm: the page's own scripts do not see window.__webhand."""
    context, tab = await _tab(firefox, Heard())
    try:
        await tab.navigate(site.url("firefox/core.html"), wait_until="load", timeout=30)
        await take_snapshot(tab)
        assert await tab.console.evaluate("typeof window.__webhand", await_promise=False, timeout=10) == "undefined"
    finally:
        await context.close()


async def test_the_page_counts_its_requests_in_flight_and_a_faked_count_costs_the_cap_at_most(firefox: BidiBrowser,
                                                                                               site) -> None:
    # Firefox announces a request after the answer to a later script, so the settle asks the page how
    # many fetch/XHR requests it has in flight (page_requests.py) and waits until the tab knows as many.
    heard = Heard()
    context, tab = await _tab(firefox, heard)
    try:
        await tab.navigate(site.url("loading/endless_request.html"), wait_until="load", timeout=30)
        assert await tab.main_evaluate(IN_FLIGHT) == 1  # the long poll the page started in "load"
        await asyncio.wait_for(announced(tab), 10)
        assert known_in_flight(tab.tracker) >= 1
        # Requests that reach no network are not counted; the count is not among the window's keys.
        counted = await tab.main_evaluate(
            "async () => { await fetch('data:,x'); await fetch(URL.createObjectURL(new Blob(['x'])));"
            " return [window.__webhandRequests.pending, Object.keys(window).includes('__webhandRequests')]; }")
        assert counted == [1, False]
        # A page that fakes its count makes the wait end sooner or at the cap, never later (the bound is
        # the point: generous for a loaded machine).
        loop = asyncio.get_running_loop()
        for fake in ("window.__webhandRequests.pending = 1e9",
                     "Object.defineProperty(window, '__webhandRequests', {value: {pending: 'many'}})",
                     "delete window.__webhandRequests"):
            await tab.main_evaluate(f"() => {{ {fake}; }}")
            began = loop.time()
            await announced(tab)
            assert loop.time() - began < ANNOUNCE_CAP + 3, fake
    finally:
        await context.close()


async def test_screenshot_is_a_png_of_the_viewport(firefox: BidiBrowser, site) -> None:
    context, tab = await _tab(firefox, Heard(), width=640, height=480)
    try:
        await tab.navigate(site.url("firefox/core.html"), wait_until="load", timeout=30)
        png = await tab.capture.screenshot(full_page=False, timeout=30)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", png[16:24])
        assert (width, height) == (640, 480)
    finally:
        await context.close()


@pytest.mark.parametrize("accept, shown", [(True, "confirmed"), (False, "kept")])
async def test_a_dialog_is_answered(firefox: BidiBrowser, site, accept: bool, shown: str) -> None:
    heard = Heard()
    context, tab = await _tab(firefox, heard)
    try:
        await tab.navigate(site.url("firefox/core.html"), wait_until="load", timeout=30)
        snapshot = await take_snapshot(tab)
        ask = next(line for line in snapshot.lines if '"Ask"' in line).split("[")[1].split("]")[0]
        await (await tab.refs.resolve(ask, timeout=10)).click(timeout=10)
        await heard.until(lambda: bool(heard.dialogs))
        dialog = heard.dialogs[0]
        assert (dialog.kind, dialog.message) == ("confirm", "Delete the orders?")
        if accept:
            await dialog.accept(None, timeout=10)
        else:
            await dialog.dismiss(timeout=10)
        assert shown in (await take_snapshot(tab)).text
    finally:
        await context.close()


async def test_two_sessions_do_not_share_cookies(firefox: BidiBrowser, site) -> None:
    first, first_tab = await _tab(firefox, Heard())
    second, second_tab = await _tab(firefox, Heard())
    try:
        for tab in (first_tab, second_tab):
            await tab.navigate(site.url("firefox/core.html"), wait_until="load", timeout=30)
        await first_tab.console.evaluate("document.cookie = 'who=first; path=/'", await_promise=False, timeout=10)
        await first_tab.web_storage("local", "set", "who", "first", timeout=10)
        assert [c.name for c in await first.cookies()] == ["who"]
        assert await second.cookies() == []
        assert await second_tab.console.evaluate("document.cookie", await_promise=False, timeout=10) == ""
        assert await second_tab.web_storage("local", "get", timeout=10) == {}
    finally:
        await first.close()
        await second.close()


async def test_what_firefox_cannot_do_says_why(firefox: BidiBrowser) -> None:
    context, tab = await _tab(firefox, Heard())
    try:
        with pytest.raises(NotOnFirefox, match="not available on Firefox: WebDriver BiDi has no counters command"):
            await tab.performance.read(timeout=5)
        with pytest.raises(NotOnFirefox, match="WebDriver BiDi emulates only being offline"):
            await context.set_network_conditions(NetworkConditions(latency_ms=100))
    finally:
        await context.close()


async def test_waits_and_history(firefox: BidiBrowser, site) -> None:
    context, tab = await _tab(firefox, Heard())
    try:
        assert await tab.history.go_back(timeout=10) is None  # a new tab has nothing to go back to
        await tab.navigate(site.url("firefox/core.html"), wait_until="load", timeout=30)
        await tab.console.evaluate("setTimeout(() => document.body.append('arrived later'), 300)", await_promise=False, timeout=10)
        assert "done" in await tab.wait_for(WaitCondition("text", "arrived later"), timeout=10)
        with pytest.raises(ActionTimeout, match="never shown"):
            await tab.wait_for(WaitCondition("text", "never shown"), timeout=0.5)
        missing = await tab.navigate(site.url("firefox/missing.html"), wait_until="load", timeout=30)
        assert missing.status == 404
        back = await tab.history.go_back(timeout=30)
        assert back is not None and back.url == site.url("firefox/core.html") and back.title == "Firefox core"
    finally:
        await context.close()


async def test_an_origin_policy_on_a_firefox_webhand_did_not_launch_is_refused_not_ignored() -> None:
    """The origin policy holds on a Firefox webhand launches (its profile sends loopback traffic
    through the policy proxy and WebRTC through no other path, tests/test_policy.py); one reached at
    a ws:// URL cannot be held to it: refused before connecting, also for settings that skipped
    validation (``model_copy``)."""
    assert Settings(driver="firefox", allowed_origins=["https://example.com"]).allowed_origins
    driver = FirefoxDriver(Settings(driver="firefox").model_copy(update={"blocked_origins": ["https://example.com"]}))
    with pytest.raises(NotOnFirefox, match="origin policy"):
        await driver.connect("ws://127.0.0.1:9/session", kind="bidi", timeout=5)
    assert driver.launcher.launched.kill_now() == []  # nothing was spawned


async def test_a_frame_is_walked_and_its_refs_act(firefox: BidiBrowser, site) -> None:
    heard = Heard()
    context, tab = await _tab(firefox, heard)
    try:
        await tab.navigate(site.url("firefox/framed.html"), wait_until="load", timeout=30)
        snapshot = await take_snapshot(tab)
        assert "# Outer page" in snapshot.text and "Three orders are waiting." in snapshot.text, snapshot.text
        record = re.search(r'button "Record" \[(f\d+e\d+)\]', snapshot.text)
        assert record, snapshot.text
        await (await tab.refs.resolve(record.group(1), timeout=10)).click(timeout=10)
        assert "recorded" in (await take_snapshot(tab)).text
        await heard.until(lambda: any(e.text == "recorded click" for e in heard.console))  # the frame's console
    finally:
        await context.close()


async def test_the_tools_drive_firefox(host: Webhand, site) -> None:
    """The same tools, on every surface, over the Firefox driver: a session's first calls."""
    session = host.conversation("firefox-tools")
    try:
        opened = await session.call("browser_navigate", {"url": site.url("firefox/core.html")})
        assert not opened.is_error and "Title: Firefox core" in opened.text, opened.text
        snapshot = await session.call("browser_snapshot", {})
        refs = dict(re.findall(r'(?:textbox|button) "(\w+)" \[(e\d+)\]', snapshot.text))
        assert {"Name", "Record", "Ask"} <= set(refs), snapshot.text
        typed = await session.call("browser_type", {"ref": refs["Name"], "element": "Name", "text": "Grace"})
        assert not typed.is_error, typed.text
        clicked = await session.call("browser_click", {"ref": refs["Record"], "element": "Record"})
        assert "recorded Grace" in clicked.text, clicked.text  # the reply shows what the click changed
        asked = await session.call("browser_click", {"ref": refs["Ask"], "element": "Ask"})
        assert "confirm dialog" in asked.text and "Delete the orders?" in asked.text, asked.text
        answered = await session.call("browser_handle_dialog", {"accept": False})
        assert not answered.is_error, answered.text
        assert "status: kept" in (await session.call("browser_snapshot", {})).text
    finally:
        await host.end_conversation("firefox-tools")


async def test_sessions_of_the_tools_are_isolated(host: Webhand, site) -> None:
    first, second = host.conversation("firefox-first"), host.conversation("firefox-second")
    try:
        for session in (first, second):
            assert not (await session.call("browser_navigate", {"url": site.url("firefox/core.html")})).is_error
        firefox = await host.sessions._shared_browser()
        contexts = list(firefox.contexts.values())
        assert len({c.user_context for c in contexts}) == len(contexts) >= 2
        await contexts[0].tabs[0].console.evaluate("document.cookie = 'who=first; path=/'", await_promise=False, timeout=10)
        assert [c.name for c in await contexts[0].cookies()] == ["who"]
        for other in contexts[1:]:
            assert await other.cookies() == []
            assert await other.tabs[0].console.evaluate("document.cookie", await_promise=False, timeout=10) == ""
    finally:
        await host.end_conversation("firefox-first")
        await host.end_conversation("firefox-second")


async def test_files_are_given_to_a_file_input(firefox: BidiBrowser, site, tmp_path) -> None:
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("one")
    second.write_text("two")
    context, tab = await _tab(firefox, Heard())
    try:
        await tab.navigate(site.url("tabs_files/upload.html"), wait_until="load", timeout=30)
        await (await tab.refs.query("#files", timeout=10)).set_input_files([str(first), str(second)], timeout=10)
        names = await tab.console.evaluate("[...document.getElementById('files').files].map(f => f.name)",
                                   await_promise=False, timeout=10)
        assert names == ["a.txt", "b.txt"]
        with pytest.raises(WebhandError, match="not an <input type=file>"):
            await (await tab.refs.query("body", timeout=10)).set_input_files([str(first)], timeout=10)
    finally:
        await context.close()


async def test_options_and_boxes(firefox: BidiBrowser, site) -> None:
    context, tab = await _tab(firefox, Heard())
    try:
        await tab.navigate(site.url("actions/form.html"), wait_until="load", timeout=30)
        color = await tab.refs.query("#color", timeout=10)
        assert await color.select_option(["Green"], timeout=10) == ["Green"]
        with pytest.raises(InvalidArgument, match="no option 'Purple'"):
            await color.select_option(["Purple"], timeout=10)
        await (await tab.refs.query("#terms", timeout=10)).set_checked(True, timeout=10)
        await (await tab.refs.query("#newsletter", timeout=10)).set_checked(False, timeout=10)
        state = await tab.console.evaluate("document.getElementById('state').textContent", await_promise=False, timeout=10)
        assert "color=g" in state and "terms=on" in state and "newsletter=off" in state, state
    finally:
        await context.close()


async def test_a_tab_the_page_opens_is_a_tab(firefox: BidiBrowser, site) -> None:
    opened: list = []
    seen = asyncio.Event()
    events = TabEvents(tab_opened=lambda tab: (opened.append(tab), seen.set()))
    context = await firefox.new_context(width=800, height=600, downloads_dir=None, events=events)
    try:
        tab = await context.new_tab()
        assert opened == [tab]  # every new tab is announced, ours included
        seen.clear()
        await tab.navigate(site.url("firefox/opener.html"), wait_until="load", timeout=30)
        await (await tab.refs.query("#link", timeout=10)).click(timeout=10)
        async with asyncio.timeout(10):
            await seen.wait()
        popup = opened[-1]
        assert popup is not tab and context.tabs == [tab, popup]
        await popup.wait_for(WaitCondition("text", "Three orders are waiting."), timeout=10)
        assert await popup.title() == "Firefox core"
    finally:
        await context.close()


async def test_a_refused_connection_is_named(firefox: BidiBrowser) -> None:
    with socket.socket() as probe:  # a local port nothing listens on once released
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    context, tab = await _tab(firefox, Heard())
    try:
        with pytest.raises(NavigationFailed, match=r"connection was refused .*ERR_CONNECTION_REFUSED; Firefox: NS_ERROR"):
            await tab.navigate(f"http://127.0.0.1:{port}/", wait_until="load", timeout=30)
    finally:
        await context.close()


async def test_the_policy_profile_keeps_webrtc_from_sending_around_the_proxy() -> None:
    """Firefox gathers no ICE candidates through a loopback STUN/TURN server by default, so the origin
    table's WebRTC row cannot reach its loopback server on Firefox either way. Here loopback ICE is
    turned on: without the policy's preferences the page reaches the server (packets and a
    connection), with them (``media.peerconnection.ice.proxy_only``) it sends nothing."""
    from webhand.engine.bidi.connection import BidiConnection
    from webhand.engine.bidi.firefox import FirefoxProcess, find_firefox
    from webhand.engine.bidi.policy import POLICY_PREFERENCES

    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    port = udp.getsockname()[1]
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", port))
    tcp.listen(8)
    udp.setblocking(False)
    tcp.setblocking(False)

    def reached() -> int:
        count = 0
        for receive in (lambda: udp.recv(4096), lambda: tcp.accept()[0].close()):
            while True:
                try:
                    receive()
                except OSError:
                    break
                count += 1
        return count

    gather = f"""new Promise(async resolve => {{
        const peer = new RTCPeerConnection({{iceServers: [{{urls: 'stun:127.0.0.1:{port}'}},
            {{urls: 'turn:127.0.0.1:{port}?transport=tcp', username: 'u', credential: 'c'}}]}});
        peer.onicegatheringstatechange = () => {{ if (peer.iceGatheringState === 'complete') resolve('gathered'); }};
        peer.createDataChannel('probe');
        await peer.setLocalDescription(await peer.createOffer());
        setTimeout(() => resolve('capped'), 5000); }})"""
    seen = {}
    try:
        for name, preferences in (("plain", {}), ("policy", POLICY_PREFERENCES)):
            firefox = await FirefoxProcess.start(find_firefox(), preferences={**preferences,
                                                                             "media.peerconnection.ice.loopback": True})
            try:
                connection = await BidiConnection.open(firefox.ws_endpoint, timeout=60)
                tab = (await connection.send("browsingContext.create", {"type": "tab"}))["context"]
                await connection.send("script.evaluate", {"expression": gather, "target": {"context": tab},
                                                          "awaitPromise": True})
                await connection.close()
            finally:
                await firefox.close()
            seen[name] = reached()
    finally:
        udp.close()
        tcp.close()
    assert seen["plain"] > 0, "the page never reached the loopback STUN/TURN server: the check proves nothing"
    assert seen["policy"] == 0, f"WebRTC went around the policy proxy: {seen}"


async def test_an_html5_drag_is_refused_with_the_reason_not_reported_as_done(firefox: BidiBrowser, site) -> None:
    """Firefox never drops an HTML5 drag started by BiDi pointer actions: refused, not said to be done."""
    context, tab = await _tab(firefox, Heard())
    try:
        await tab.navigate(site.url("actions/drag.html"), wait_until="load", timeout=15)
        card, bin_ = await tab.refs.query("#card", timeout=5), await tab.refs.query("#bin", timeout=5)
        with pytest.raises(NotOnFirefox, match="not available on Firefox: an HTML5 drag"):
            await card.drag_to(bin_, timeout=5)
        assert await tab.console.evaluate("document.querySelector('#status').textContent", await_promise=False,
                                  timeout=5) == "not dropped"  # the page's own word before any drop
    finally:
        await context.close()


async def test_service_workers_are_the_page_origins_and_skip_waiting_says_why_not(firefox: BidiBrowser, site) -> None:
    """BiDi has no service worker registry: the listing is the page's origin's (the tab says so for
    the reply), and skip_waiting, which only the worker can do, is refused with what BiDi lacks."""
    context, tab = await _tab(firefox, Heard())
    try:
        await tab.navigate(site.url("pwa/index.html"), wait_until="load", timeout=30)
        async with asyncio.timeout(15):
            while not (listed := await tab.service_workers.registrations()) or [v.state for v in listed[0].versions] != ["active"]:
                await asyncio.sleep(0.1)  # the worker installs, then activates
        assert [v.running for v in listed[0].versions] == ["running"]
        assert tab.service_workers.reach is not None and "this page's origin only" in tab.service_workers.reach
        with pytest.raises(NotOnFirefox, match="BiDi cannot run code in a service worker"):
            await tab.service_workers.act("skip_waiting", listed[0].scope, timeout=5)
        await tab.service_workers.act("unregister", listed[0].scope, timeout=10)
        assert await tab.service_workers.registrations() == []
    finally:
        await context.close()
