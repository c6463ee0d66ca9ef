"""The extension bridge (engine/cdp/relay.py, src/webhand/extension/): webhand drives the tabs a
person shared from a Chrome it did not start, with no debugging port, through its extension.

One Chromium for the module, started here as a person's browser would be: its own profile, no
--remote-debugging-port, the extension loaded unpacked. The extension is a copy with a test-only
``test-config.json`` (the shipped folder has none) that stands in for the person: it pairs with the
relay's port and token and shares the tab whose URL contains "bridge_shared" when it loads.
Raw CDP only (the bridge is a raw-CDP connection), so these tests build their own Webhand.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import signal
import subprocess
import sys

import psutil
import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bridge_browser import first_reply, persons_browser, until as _until
from helpers import ref_of
from webhand.host import Webhand
from webhand.security.pairing import EXTENSION_ORIGIN, extension_folder, pairing_token


@pytest.fixture(scope="module")
def bridge(tmp_path_factory, site):
    """(the person's Chromium process, the relay's port, the token, settings for a Webhand)."""
    with persons_browser(tmp_path_factory.mktemp("bridge"), site) as person:
        yield person.chrome, person.port, person.token, person.settings


@pytest.mark.one_driver("the bridge is a raw-CDP connection; these tests start their own Webhand")
async def test_webhand_drives_a_shared_tab_and_nothing_else(bridge, site, caplog):
    chrome, port, token, settings = bridge
    caplog.set_level(logging.INFO, logger="webhand")
    async with Webhand(settings) as webhand:
        context = webhand.conversation("bridge")
        # The extension connects when the relay listens (it retries); the first call waits for it.
        reply = None
        for _ in range(60):
            reply = await context.call("browser_snapshot", {})
            if not reply.is_error:
                break
            await asyncio.sleep(0.25)
        assert not reply.is_error, reply.text
        assert "Press me" in reply.text and "Private" not in reply.text, reply.text

        tabs = await context.call("browser_tabs", {"action": "list"})
        assert "Shared page" in tabs.text and "Private page" not in tabs.text, tabs.text

        cookies = await context.call("browser_cookies", {})
        assert "bridge_cookie" in cookies.text and "set_by_the_page" in cookies.text, cookies.text

        click = await context.call("browser_click", {"ref": ref_of(reply.text, "button \"Press me\"")})
        assert not click.is_error, click.text
        await _until(lambda: site.received_paths("tab=shared&what=press"), what="the click reached the page")
        text = await context.call("browser_text", {})
        assert "pressed 1" in text.text

        # What chrome.debugger cannot do is refused, saying so; the person's browser is not touched.
        opened = await context.call("browser_tabs", {"action": "open"})
        assert opened.is_error and "extension" in opened.text, opened.text
        closed = await context.call("browser_tabs", {"action": "close", "index": 0})
        assert closed.is_error, closed.text
        workers = await context.call("browser_service_workers", {})  # a domain chrome.debugger leaves out
        assert workers.is_error and "extension" in workers.text, workers.text

        # A page on 127.0.0.1 cannot open the relay's WebSocket, even knowing the token.
        script = ("new Promise(done => { const ws = new WebSocket('ws://127.0.0.1:%d/extension');"
                  " ws.onopen = () => { ws.send(JSON.stringify({type: 'hello', token: %s})); done('open'); };"
                  " ws.onerror = () => done('refused'); })" % (port, json.dumps(token)))
        attempt = await context.call("browser_eval", {"expression": script})
        assert attempt.data["result"] == "refused", attempt.text
        # The extension itself refuses a tab that is not shared, whatever webhand's side asks.
        link = webhand.sessions.driver.relay.link
        for forged in ({"type": "attach", "tabId": 987654321},
                       {"type": "command", "tabId": 987654321, "method": "Page.navigate", "params": {"url": "about:blank"}},
                       {"type": "activate", "tabId": 987654321}):
            with pytest.raises(RuntimeError, match="not shared"):
                await link.request(forged, 10)
        assert not site.received_paths("tab=private&what=")  # the unshared tab was never touched

    # Letting go of the person's tabs is quiet: no step of the shutdown failed (it logged that the
    # relay's client had no socket of its own, each time).
    failed = [r.getMessage() for r in caplog.records if r.name.startswith("webhand") and "failed" in r.getMessage()]
    assert not failed, failed

    # webhand is gone: the browser and both tabs still run (their pages keep reporting).
    assert chrome.poll() is None
    for tab in ("shared", "private"):
        seen = len(site.received_paths(f"bridge-ping?tab={tab}"))
        await _until(lambda: len(site.received_paths(f"bridge-ping?tab={tab}")) > seen + 2,
                     what=f"the {tab} tab keeps running after webhand left")

    # A new webhand on the same port: the extension, whose connection closed, reconnects by itself
    # and the tab is still shared, with what the first webhand did in it.
    async with Webhand(settings) as webhand:
        again = await first_reply(webhand.conversation("bridge-again"), "browser_text", {})
        assert "pressed 1" in again.text, again.text
    assert chrome.poll() is None


def _proof(token: str, role: str, port: int, extension_nonce: str, relay_nonce: str) -> str:
    """The wire format, written out here as the extension's service worker computes it."""
    text = f"webhand-bridge-v2 {role} {port} {extension_nonce} {relay_nonce}"
    return hmac.new(token.encode(), text.encode(), hashlib.sha256).hexdigest()


@pytest.mark.one_driver("the extension in the person's browser; a listener in webhand's place, no Webhand")
async def test_a_listener_in_webhand_s_place_learns_nothing_and_drives_nothing(bridge):
    """Another local user listens on the relay's port while webhand is not running. The person's
    extension connects; whatever the listener answers (a command, a challenge with a made-up proof,
    a proof made with another token), the extension sends its hello with a fresh nonce and nothing
    more: never the token, never a proof, never a reply, never the list of shared tabs."""
    chrome, port, token, settings = bridge
    received: list[list[str]] = []
    closed = asyncio.Event()
    answers = [
        lambda hello: {"type": "command", "id": 1, "tabId": 1, "method": "Runtime.evaluate",
                       "params": {"expression": "document.cookie"}},
        lambda hello: {"type": "challenge", "nonce": secrets.token_hex(32), "proof": secrets.token_hex(32)},
        lambda hello: (lambda nonce: {"type": "challenge", "nonce": nonce,
                                      "proof": _proof("a token of the listener's own making", "relay",
                                                      port, hello["nonce"], nonce)})(secrets.token_hex(32)),
        lambda hello: {"type": "welcome"},
    ]

    async def listener(socket) -> None:
        messages: list[str] = []
        received.append(messages)
        try:
            hello = json.loads(await socket.recv())
            messages.append(json.dumps(hello))
            await socket.send(json.dumps(answers[min(len(received), len(answers)) - 1](hello)))
            await socket.send(json.dumps({"type": "attach", "id": 2, "tabId": 1}))
            async for raw in socket:  # until the extension closes the connection
                messages.append(str(raw))
        except ConnectionClosed:
            pass
        if len(received) >= len(answers):
            closed.set()

    async with serve(listener, "127.0.0.1", port):  # a plain server: no Origin check, no token
        await asyncio.wait_for(closed.wait(), 60)
    for messages in received[:len(answers)]:
        assert len(messages) == 1, messages  # the hello, then the extension closed the connection
        hello = json.loads(messages[0])
        assert set(hello) == {"type", "nonce", "userAgent"} and hello["type"] == "hello", hello
        assert re.fullmatch(r"[0-9a-f]{64}", hello["nonce"]), hello
        assert token not in messages[0]
    nonces = [json.loads(m[0])["nonce"] for m in received]
    assert len(set(nonces)) == len(nonces)  # a fresh nonce each time: nothing recorded can be replayed

    # The same extension then connects to the real relay, which proves itself, and is driven.
    async with Webhand(settings) as webhand:
        reply = await first_reply(webhand.conversation("after-the-listener"), "browser_text", {})
        assert not reply.is_error and "pressed" in reply.text, reply.text


@pytest.mark.one_driver("the extension in the person's browser; a go-between on its port, a webhand on another")
async def test_a_go_between_on_the_extensions_port_cannot_pass_the_handshake_to_another_webhand(bridge):
    """Another local user holds the extension's port while a real webhand listens on another port,
    and passes every frame through, both ways (the Origin header forged, as a local process can): the
    relay's proof names its own port, not the one the extension dialled, so the extension refuses it
    and the go-between is never left holding an authenticated connection to inject commands into."""
    from bridge_browser import free_port

    chrome, port, token, settings = bridge
    elsewhere = settings.model_copy(update={"extension_port": free_port()})
    extension_frames: list[str] = []
    relay_frames: list[str] = []
    refused = asyncio.Event()

    async def go_between(extension_socket) -> None:
        try:
            async with connect(f"ws://127.0.0.1:{elsewhere.extension_port}/extension", origin=EXTENSION_ORIGIN,
                               max_size=None) as relay_socket:
                async def pass_on(source, target, seen: list[str]) -> None:
                    async for frame in source:
                        seen.append(str(frame))
                        await target.send(frame)

                await asyncio.gather(pass_on(extension_socket, relay_socket, extension_frames),
                                     pass_on(relay_socket, extension_socket, relay_frames))
        except ConnectionClosed:
            pass
        if any('"challenge"' in frame for frame in relay_frames):
            refused.set()

    async with Webhand(elsewhere) as webhand, serve(go_between, "127.0.0.1", port):
        await asyncio.wait_for(refused.wait(), 60)
        # The extension saw the relay's challenge and closed: it never sent its proof, and the
        # webhand behind the go-between has no extension.
        assert not any('"auth"' in frame for frame in extension_frames), extension_frames
        assert webhand.sessions.driver.relay.link is None
        reply = await webhand.conversation("behind-a-go-between").call("browser_text", {})
        assert reply.is_error, reply.text
    assert chrome.poll() is None


@pytest.mark.one_driver("the extension in the person's browser; the shared tab is lost: runs after the tests using it")
async def test_a_shared_tab_that_leaves_the_web_is_lost_and_the_next_call_says_so(bridge, site):
    """The page's own script sends the shared tab to the extension's popup (where chrome.debugger
    would reach the extension's APIs: every tab, the token). The extension lets go of that tab at
    once and stops sharing it; webhand's next call says what happened and what to do."""
    chrome, port, token, settings = bridge
    async with Webhand(settings) as webhand:
        context = webhand.conversation("leaves-the-web")
        await first_reply(context, "browser_text", {})
        link = webhand.sessions.driver.relay.link
        tab_id = next(iter(link.shared))
        await context.call("browser_eval", {"expression": f"setTimeout(() => location.href = "
                                                          f"'{EXTENSION_ORIGIN}/popup.html', 0); 1"})
        await _until(lambda: tab_id not in link.shared, what="the extension stopped sharing the tab")
        for tool in ("browser_snapshot", "browser_navigate"):
            reply = await context.call(tool, {"url": site.url("bridge_shared.html")} if tool == "browser_navigate" else {})
            assert reply.is_error and "not a web page" in reply.text and "Share this tab" in reply.text, reply.text
            assert "Opening a new tab" not in reply.text
        # The extension drives nothing in that tab any more, whatever webhand's side asks.
        for forged in ({"type": "attach", "tabId": tab_id},
                       {"type": "command", "tabId": tab_id, "method": "Runtime.evaluate",
                        "params": {"expression": "Object.keys(chrome)"}}):
            with pytest.raises(RuntimeError, match="not shared|not on a web page"):
                await link.request(forged, 10)
    assert chrome.poll() is None


async def _extension_side(ws, token: str, port: int, *, proof_with: str | None = None) -> None:
    """The extension's side of the handshake, as a client in the test: hello, check the relay's
    proof, answer with its own (made with ``proof_with`` instead of the token, if given)."""
    nonce = secrets.token_hex(32)
    await ws.send(json.dumps({"type": "hello", "nonce": nonce, "userAgent": "test"}))
    challenge = json.loads(await asyncio.wait_for(ws.recv(), 5))
    assert challenge["type"] == "challenge"
    assert hmac.compare_digest(challenge["proof"], _proof(token, "relay", port, nonce, challenge["nonce"]))
    await ws.send(json.dumps({"type": "auth",
                              "proof": _proof(proof_with or token, "extension", port, nonce, challenge["nonce"])}))


@pytest.mark.one_driver("the relay's own handshake, no driver")
@pytest.mark.parametrize("origin, hello, refused_how", [
    ("http://127.0.0.1:8000", "right", "403"),          # a web page on this machine
    ("null", "right", "403"),                            # a sandboxed frame or file:// page
    (None, "right", "403"),                              # a client that sends no Origin
    ("chrome-extension://aaaabbbbccccddddeeeeffffgggghhhh", "right", "403"),  # another extension
    (EXTENSION_ORIGIN, "wrong token", "4003"),          # the origin forged, a proof made without the token
    (EXTENSION_ORIGIN, "the token itself", "4003"),     # the old hello: a token, no nonce
    (EXTENSION_ORIGIN, "the relay's proof back", "4003"),  # the relay's own proof reflected as the extension's
    (EXTENSION_ORIGIN, "no auth", "4001"),              # a hello, then silence
    (EXTENSION_ORIGIN, "right", "accepted"),            # the extension itself (the table's control)
])
async def test_the_relay_refuses_pages_forged_origins_and_wrong_proofs(origin, hello, refused_how):
    from webhand.engine.cdp.relay import ExtensionRelay
    from webhand.errors import BrowserLaunchFailed

    from bridge_browser import free_port

    right_token = secrets.token_urlsafe(32)
    relay = ExtensionRelay(free_port(), lambda: right_token)
    await relay.start()
    try:
        headers = {"Origin": origin} if origin is not None else {}
        try:
            async with connect(f"ws://127.0.0.1:{relay.port}/extension", additional_headers=headers,
                               origin=None, max_size=None, close_timeout=5) as ws:
                if hello == "right":
                    await _extension_side(ws, right_token, relay.port)
                elif hello == "wrong token":
                    await _extension_side(ws, right_token, relay.port, proof_with=secrets.token_urlsafe(32))
                elif hello == "the token itself":
                    await ws.send(json.dumps({"type": "hello", "token": right_token}))
                elif hello == "the relay's proof back":
                    await ws.send(json.dumps({"type": "hello", "nonce": secrets.token_hex(32)}))
                    challenge = json.loads(await ws.recv())
                    await ws.send(json.dumps({"type": "auth", "proof": challenge["proof"]}))
                elif hello == "no auth":
                    await ws.send(json.dumps({"type": "hello", "nonce": secrets.token_hex(32)}))
                    await ws.recv()  # the challenge; the relay waits 5 s for the answer, then closes
                assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "welcome"
                outcome = "accepted"
                # Once it proved itself, the extension may send what a full-page screenshot needs.
                answer = asyncio.ensure_future(relay.link.request({"type": "command"}, 10))
                asked = json.loads(await ws.recv())
                await ws.send(json.dumps({"type": "reply", "id": asked["id"], "result": {"data": "x" * 5_000_000}}))
                assert len((await answer)["data"]) == 5_000_000
        except InvalidStatus as error:
            outcome = str(error.response.status_code)
        except ConnectionClosed as error:
            outcome = str(error.rcvd.code if error.rcvd else "closed")
        assert outcome == refused_how
        assert (relay.link is None) == (refused_how != "accepted")
        if hello == "the token itself":  # an extension older than webhand: the wait says to reload it
            with pytest.raises(BrowserLaunchFailed, match="older than this webhand.*reload the extension"):
                await relay.wait_link(0.1)
    finally:
        await relay.close()


@pytest.mark.one_driver("the relay's own handshake, no driver")
async def test_a_big_frame_before_authentication_is_closed_unread():
    """Three 90 MB hellos once grew the server by 470 MB. Before the extension proved itself a
    message may be 4 KiB: the relay closes the connection on the frame's header (1009), before
    reading its payload, and holds no connection."""
    from webhand.engine.cdp.relay import ExtensionRelay

    from bridge_browser import free_port

    relay = ExtensionRelay(free_port(), lambda: secrets.token_urlsafe(32))
    await relay.start()
    try:
        for first in (True, False):  # as the hello, and as the answer to the challenge
            ws = await connect(f"ws://127.0.0.1:{relay.port}/extension", origin=EXTENSION_ORIGIN, max_size=None)
            try:
                if not first:
                    await ws.send(json.dumps({"type": "hello", "nonce": secrets.token_hex(32)}))
                    assert json.loads(await ws.recv())["type"] == "challenge"
                with pytest.raises(ConnectionClosed) as closed:
                    await ws.send(json.dumps({"type": "auth" if not first else "hello", "proof": "x" * 20_000_000}))
                    await asyncio.wait_for(ws.recv(), 10)
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009, closed.value
                assert "limit of 4096 bytes" in closed.value.rcvd.reason
            finally:
                if not ws.transport.is_closing():
                    ws.transport.abort()
            assert relay.link is None
    finally:
        await relay.close()


@pytest.mark.one_driver("ends the module's browser: runs last")
async def test_the_person_s_browser_is_ended_by_pid(bridge):
    chrome, *_ = bridge
    process = psutil.Process(chrome.pid)
    os.killpg(chrome.pid, signal.SIGTERM)
    chrome.wait(15)
    assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE


@pytest.mark.one_driver("the pairing token's file, no browser")
@pytest.mark.parametrize("tamper, refused", [
    ("readable by others", "not a private file"),    # another local user could have read it
    ("a symbolic link", "is a symbolic link"),       # whoever controls the link chooses the token
    ("a FIFO", "not a regular file"),                # reading it would wait for a writer, for ever
    ("too short", "too short"),                      # not one webhand made
    (None, None),                                    # the table's control: made once, then the same
])
def test_a_tampered_pairing_token_file_is_refused(tmp_path, monkeypatch, tamper, refused):
    from webhand.errors import FileNotWritable
    from webhand.security.pairing import token_path

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    made = pairing_token()
    path = token_path()
    if tamper == "readable by others":
        path.chmod(0o644)
    elif tamper == "a symbolic link":
        (tmp_path / "planted").write_text("x" * 43)
        path.unlink()
        path.symlink_to(tmp_path / "planted")
    elif tamper == "a FIFO":
        path.unlink()
        os.mkfifo(path, 0o600)
    elif tamper == "too short":
        path.write_text("short")
    if tamper in ("a FIFO", "a symbolic link"):
        # The command the person runs says the same, at once (a FIFO made it wait for a writer).
        pair = subprocess.run([sys.executable, "-m", "webhand", "extension", "pair"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")})
        assert pair.returncode != 0 and refused in pair.stdout + pair.stderr, (pair.stdout, pair.stderr)
    if refused is None:
        assert pairing_token() == made and len(made) >= 40
    else:
        with pytest.raises(FileNotWritable, match=refused) as error:
            pairing_token()
        assert str(path) in str(error.value) and "Delete" in error.value.hint


@pytest.mark.one_driver("the shipped extension's files, no browser")
def test_the_shipped_extension_asks_for_little_and_reaches_only_loopback():
    import base64
    import hashlib

    from webhand.security.pairing import EXTENSION_ID

    folder = extension_folder()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["manifest_version"] == 3
    assert set(manifest["permissions"]) == {"debugger", "tabs", "storage", "alarms"}
    assert "host_permissions" not in manifest and "content_scripts" not in manifest
    policy = manifest["content_security_policy"]["extension_pages"]
    assert "connect-src 'self' ws://127.0.0.1:*" in policy and "script-src 'self'" in policy
    # Its id, and so the one origin the relay accepts, comes from the manifest's public key.
    digest = hashlib.sha256(base64.b64decode(manifest["key"])).hexdigest()[:32]
    assert "".join(chr(ord("a") + int(c, 16)) for c in digest) == EXTENSION_ID
    # No remote code: every script is a file of the folder, and none names a host but 127.0.0.1.
    for script in folder.glob("*.js"):
        text = script.read_text()
        assert not re.search(r"(https?|wss?)://(?!127\.0\.0\.1)", text), script.name
        assert "eval(" not in text and "new Function" not in text and "importScripts" not in text
    assert {p.name for p in folder.iterdir()} == {"manifest.json", "service_worker.js", "popup.html", "popup.js"}


@pytest.mark.one_driver("the relay's place among webhand's endpoints, no driver")
async def test_the_relay_is_one_of_the_endpoints_no_page_may_reach():
    """As the dashboards and MCP servers are: registered for every webhand of this user once it
    listens, gone when it stops."""
    from webhand.engine.cdp.relay import ExtensionRelay
    from webhand.security.origins import OWN_ENDPOINTS
    from webhand.security.running_servers import RunningServers

    from bridge_browser import free_port

    relay = ExtensionRelay(free_port(), lambda: secrets.token_urlsafe(32))
    await relay.start()
    try:
        assert "extension relay" in (OWN_ENDPOINTS.refusal("127.0.0.1", relay.port) or "")
        assert RunningServers().host_of(relay.port) is not None  # what another webhand reads
    finally:
        await relay.close()
    assert OWN_ENDPOINTS.refusal("127.0.0.1", relay.port) is None
