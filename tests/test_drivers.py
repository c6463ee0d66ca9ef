"""The Driver seam: the raw-CDP driver stands on its own, and the settings pick the driver."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import settings_for_tests
from webhand import Webhand
from webhand.config import Settings
from webhand.session.manager import make_driver


def test_the_cdp_driver_runs_without_importing_playwright():
    # The raw-CDP driver must not lean on Playwright anywhere (no import under engine/cdp/).
    script = ("import sys, webhand.engine.cdp, webhand.host, webhand.session.manager;"
              "print(sorted(m for m in sys.modules if m.split('.')[0] == 'playwright'))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_a_cdp_session_never_loads_cdp_uses_typed_libraries(tmp_path, site):
    # They are some 300 generated modules (about 0.1 s of CPU on the cold start's path); the
    # driver sends commands through cdp-use's client without them (engine/cdp/connection.py).
    script = ("import asyncio, sys\n"
              "from webhand import Settings, Webhand\n"
              "async def main():\n"
              "    async with Webhand(Settings(driver='cdp', warm_reserve=False)) as wh:\n"
              f"        reply = await wh.conversation('t').call('browser_navigate', {{'url': {site.url('login.html')!r}}})\n"
              "        clicked = await wh.conversation('t').call('browser_snapshot', {})\n"
              "        print(reply.is_error or clicked.is_error, [m for m in sys.modules if m.startswith('cdp_use.cdp')])\n"
              "asyncio.run(main())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path)})
    assert done.stdout.strip() == "False []", done.stdout + done.stderr


def test_the_driver_setting_chooses_the_engine():
    assert type(make_driver(Settings(driver="playwright"))).__name__ == "PlaywrightDriver"
    assert type(make_driver(Settings())).__name__ == "CdpDriver"


@pytest.mark.parametrize(("settings", "chosen"), [
    ({}, "cdp"),
    ({"cdp_url": "http://127.0.0.1:9222"}, "cdp"),
    ({"playwright_url": "ws://127.0.0.1:3000/pw"}, "playwright"),  # Playwright's own protocol
    ({"cdp_url": "http://127.0.0.1:9222", "attach_to_existing_context": True}, "playwright"),
    ({"pool": {"endpoints": [{"kind": "cdp", "url": "http://127.0.0.1:9222"}, {"kind": "local"}]}}, "cdp"),
    ({"pool": {"endpoints": [{"kind": "cdp", "url": "http://127.0.0.1:9222"},
                             {"kind": "playwright", "url": "ws://127.0.0.1:3000/pw"}]}}, "playwright"),
    ({"driver": "cdp", "playwright_url": "ws://127.0.0.1:3000/pw"}, "cdp"),  # set: kept (and refused when used)
    ({"driver": "playwright"}, "playwright"),
])
def test_an_unset_driver_is_raw_cdp_unless_the_settings_need_playwright(settings, chosen):
    assert Settings(**settings).driver == chosen
    assert Settings.from_sources(settings, env={}).driver == chosen
    assert Settings.from_sources({}, env={"WEBHAND_DRIVER": "playwright"}).driver == "playwright"


async def test_the_cdp_driver_sends_uncompressed_frames_to_a_browser_on_this_machine(tmp_path_factory, site):
    # permessage-deflate on a loopback socket only costs CPU at both ends, for every command.
    settings = settings_for_tests(tmp_path_factory, driver="cdp", warm_reserve=False)
    async with Webhand(settings) as wh:
        assert not (await wh.conversation("c").call("browser_navigate", {"url": site.url("login.html")})).is_error
        browser = wh.sessions.find("c", None).browser
        assert browser.connection.client.ws.protocol.extensions == []
