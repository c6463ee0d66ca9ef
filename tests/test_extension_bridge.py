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
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time

import psutil
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from helpers import ref_of
from webhand.config import Settings
from webhand.host import Webhand
from webhand.security.pairing import EXTENSION_ORIGIN, extension_folder, pairing_token

CHROMIUM = "/usr/lib/chromium/chromium"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _until(check, timeout: float = 15.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.1)


@pytest.fixture(scope="module")
def bridge(tmp_path_factory, site):
    """(the person's Chromium process, the relay's port, the token, settings for a Webhand)."""
    root = tmp_path_factory.mktemp("bridge")
    config_home = root / "config"
    previous = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(config_home)
    token = pairing_token()
    assert (config_home / "webhand" / "extension-token").stat().st_mode & 0o777 == 0o600
    port = _free_port()
    extension = root / "extension"
    shutil.copytree(extension_folder(), extension)
    assert not (extension_folder() / "test-config.json").exists()  # the shipped extension has no switch on
    (extension / "test-config.json").write_text(json.dumps({"port": port, "token": token,
                                                            "autoShareUrl": "bridge_shared", "retryMs": 200,
                                                            "openTabs": [site.url("bridge_shared.html")]}))
    chrome = subprocess.Popen([CHROMIUM, "--headless=new", f"--user-data-dir={root / 'profile'}", "--no-sandbox",
                               "--no-first-run", f"--load-extension={extension}",
                               f"--disable-extensions-except={extension}",
                               site.url("bridge_private.html")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**os.environ, "TMPDIR": str(root)})  # its singleton folder stays in root
    settings = Settings(extension_bridge=True, extension_port=port, output_dir=str(root / "out"), warm_reserve=False,
                        capabilities=["all"])
    try:
        yield chrome, port, token, settings
    finally:
        if chrome.poll() is None:
            os.killpg(chrome.pid, signal.SIGKILL)
            chrome.wait(10)
        if previous is None:
            os.environ.pop("XDG_CONFIG_HOME", None)
        else:
            os.environ["XDG_CONFIG_HOME"] = previous


@pytest.mark.one_driver("the bridge is a raw-CDP connection; these tests start their own Webhand")
async def test_webhand_drives_a_shared_tab_and_nothing_else(bridge, site):
    chrome, port, token, settings = bridge
    async with Webhand(settings) as webhand:
        context = webhand.context("bridge")
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
        link = webhand.sessions.engine.relay.link
        for forged in ({"type": "attach", "tabId": 987654321},
                       {"type": "command", "tabId": 987654321, "method": "Page.navigate", "params": {"url": "about:blank"}},
                       {"type": "activate", "tabId": 987654321}):
            with pytest.raises(RuntimeError, match="not shared"):
                await link.request(forged, 10)
        assert not site.received_paths("tab=private&what=")  # the unshared tab was never touched

    # webhand is gone: the browser and both tabs still run (their pages keep reporting).
    assert chrome.poll() is None
    for tab in ("shared", "private"):
        seen = len(site.received_paths(f"bridge-ping?tab={tab}"))
        await _until(lambda: len(site.received_paths(f"bridge-ping?tab={tab}")) > seen + 2,
                     what=f"the {tab} tab keeps running after webhand left")

    # A new webhand on the same port: the extension, whose connection closed, reconnects by itself
    # and the tab is still shared, with what the first webhand did in it.
    async with Webhand(settings) as webhand:
        context = webhand.context("bridge-again")
        for _ in range(80):
            again = await context.call("browser_text", {})
            if not again.is_error:
                break
            await asyncio.sleep(0.25)
        assert "pressed 1" in again.text, again.text
    assert chrome.poll() is None


@pytest.mark.one_driver("the relay's own handshake, no driver")
@pytest.mark.parametrize("origin, token, refused_how", [
    ("http://127.0.0.1:8000", "right", "403"),          # a web page on this machine
    ("null", "right", "403"),                            # a sandboxed frame or file:// page
    (None, "right", "403"),                              # a client that sends no Origin
    ("chrome-extension://aaaabbbbccccddddeeeeffffgggghhhh", "right", "403"),  # another extension
    (EXTENSION_ORIGIN, "wrong", "4003"),                 # the origin forged, without the token
    (EXTENSION_ORIGIN, "", "4003"),
    (EXTENSION_ORIGIN, None, "4003"),                    # no token at all
    (EXTENSION_ORIGIN, "right", "accepted"),             # the extension itself (the table's control)
])
async def test_the_relay_refuses_pages_forged_origins_and_wrong_tokens(origin, token, refused_how):
    from webhand.engine.cdp.relay import ExtensionRelay

    right_token = secrets.token_urlsafe(32)

    relay = ExtensionRelay(_free_port(), lambda: right_token)
    await relay.start()
    try:
        offered = {"right": right_token, "wrong": right_token[:-4] + "AAAA"}.get(token, token)
        headers = {"Origin": origin} if origin is not None else {}
        try:
            async with connect(f"ws://127.0.0.1:{relay.port}/extension", additional_headers=headers,
                               origin=None) as ws:
                await ws.send(json.dumps({"type": "hello", "token": offered}))
                await asyncio.wait_for(ws.recv(), 5)
                outcome = "accepted"
        except InvalidStatus as error:
            outcome = str(error.response.status_code)
        except ConnectionClosed as error:
            outcome = str(error.rcvd.code if error.rcvd else "closed")
        assert outcome == refused_how
        assert (relay.link is None) == (refused_how != "accepted")
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
    ("a symbolic link", "cannot be read"),           # whoever controls the link chooses the token
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
    elif tamper == "too short":
        path.write_text("short")
    if refused is None:
        assert pairing_token() == made and len(made) >= 40
    else:
        with pytest.raises(FileNotWritable, match=refused):
            pairing_token()


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
