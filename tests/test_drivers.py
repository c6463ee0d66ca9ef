"""The Driver seam: the raw-CDP driver stands on its own, and the settings pick the driver."""

from __future__ import annotations

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


def test_the_driver_setting_chooses_the_engine():
    assert type(make_engine(Settings(driver="cdp"))).__name__ == "CdpEngine"
    assert type(make_engine(Settings())).__name__ == "PlaywrightEngine"
