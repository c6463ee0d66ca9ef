"""Finding and launching Debian's stock Firefox (``firefox-esr``) with WebDriver BiDi on.

The launch goes through ``chrome.spawn_registered``, like Chromium's: its own process group, an
entry in the PID registry (the reaper ends a Firefox whose webhand died), and the whole group
killed on close, the temporary profile removed with it. Only the command line, the profile and
the line that announces the endpoint differ.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Sequence

from webhand.engine.chrome import ChromeProcess, _drain, _new_user_data_dir, spawn_registered
from webhand.errors import BrowserLaunchFailed, BrowserNotFound

CANDIDATE_NAMES = ("firefox-esr", "firefox")
CANDIDATE_PATHS = ("/usr/lib/firefox-esr/firefox-esr", "/usr/lib/firefox/firefox")
_BIDI_LINE = re.compile(r"WebDriver BiDi listening on (ws://\S+)")

#: Profile preferences of a Firefox driven by webhand: no first-run pages, update checks or
#: telemetry (each would open tabs or make requests the session did not ask for).
PREFERENCES = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "browser.newtabpage.enabled": False,  # new tabs open on about:blank, not the heavy about:newtab
    "browser.aboutwelcome.enabled": False,
    "app.update.disabledForTesting": True,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "browser.tabs.warnOnClose": False,
    "browser.download.useDownloadDir": True,
    "remote.prefs.recommended": True,
    # No /favicon.ico request of the browser's own: it is not the page's (Chromium's is not reported either).
    "browser.chrome.site_icons": False,
}


def find_firefox(configured: str | None = None) -> str:
    """The Firefox to launch: ``configured`` (firefox_path) when set, else one on PATH or in Debian's place."""
    if configured:
        if os.access(configured, os.X_OK):
            return configured
        raise BrowserLaunchFailed(f"firefox_path {configured!r} is not an executable file.",
                                  "Point firefox_path (WEBHAND_FIREFOX_PATH) at a Firefox binary, or unset it.")
    for name in CANDIDATE_NAMES:
        found = shutil.which(name)
        if found:
            return found
    for path in CANDIDATE_PATHS:
        if os.access(path, os.X_OK):
            return path
    raise BrowserNotFound("No Firefox was found (looked for firefox-esr and firefox on PATH).",
                              "Install it (Debian/Ubuntu: apt-get install firefox-esr, or scripts/ensure-firefox), "
                              "set firefox_path, or use browser = \"chromium\".")


def _write_preferences(profile: str) -> None:
    lines = [f'user_pref("{name}", {_js(value)});' for name, value in PREFERENCES.items()]
    with open(os.path.join(profile, "user.js"), "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")


def _js(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


class FirefoxProcess(ChromeProcess):
    """A Firefox webhand launched and owns: closed and killed exactly like a Chromium (its group)."""

    @classmethod
    async def start(cls, executable: str, *, headless: bool = True, width: int = 1280, height: int = 720,
                    extra_args: Sequence[str] = (), timeout: float = 30.0,
                    spawned: asyncio.Event | None = None) -> "FirefoxProcess":
        scratch = _new_user_data_dir()  # 0700, random-named; removed on close or by the reaper
        profile = os.path.join(scratch, "profile")
        try:
            os.makedirs(profile, mode=0o700)
            _write_preferences(profile)
        except OSError as error:
            shutil.rmtree(scratch, ignore_errors=True)
            raise BrowserLaunchFailed(f"Could not write Firefox's temporary profile: {error}.",
                                      "Check that the temporary folder (TMPDIR) is writable.") from None
        args = ["--remote-debugging-port=0", "--profile", profile, "--no-remote", "--new-instance",
                f"--width={width}", f"--height={height}", *(["--headless"] if headless else []), *extra_args]
        # TMPDIR and the cache inside the scratch folder: what a killed Firefox leaves goes with it.
        env = {**os.environ, "TMPDIR": os.path.join(scratch, "tmp"), "XDG_CACHE_HOME": os.path.join(scratch, "cache"),
               "MOZ_CRASHREPORTER_DISABLE": "1"}
        os.makedirs(env["TMPDIR"], mode=0o700, exist_ok=True)
        try:
            process, ws, entry, tail = await spawn_registered(
                executable, args, env, scratch=scratch, user_data_dir=scratch, keeps_profile=False, timeout=timeout,
                spawned=spawned, endpoint=_BIDI_LINE, kind="WebDriver BiDi")
        finally:
            if spawned is not None:
                spawned.set()
        firefox = cls(process, ws, scratch, entry, tail)
        firefox._drain = asyncio.create_task(_drain(process, tail))
        return firefox
