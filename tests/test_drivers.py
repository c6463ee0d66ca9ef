"""The Driver seam: the raw-CDP driver stands on its own, and the settings pick the driver."""

from __future__ import annotations

import os
import subprocess
import sys

from webhand.config import Settings
from webhand.session.manager import make_engine


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
              f"        reply = await wh.context('t').call('browser_navigate', {{'url': {site.url('login.html')!r}}})\n"
              "        clicked = await wh.context('t').call('browser_snapshot', {})\n"
              "        print(reply.is_error or clicked.is_error, [m for m in sys.modules if m.startswith('cdp_use.cdp')])\n"
              "asyncio.run(main())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path)})
    assert done.stdout.strip() == "False []", done.stdout + done.stderr


def test_the_driver_setting_chooses_the_engine():
    assert type(make_engine(Settings(driver="cdp"))).__name__ == "CdpEngine"
    assert type(make_engine(Settings())).__name__ == "PlaywrightEngine"
