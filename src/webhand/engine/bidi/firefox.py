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
from collections.abc import Mapping, Sequence

from webhand.engine.launch.chrome import ChromeProcess, _drain, _new_user_data_dir, spawn_registered
from webhand.errors import BrowserLaunchFailed, BrowserNotFound

CANDIDATE_NAMES = ("firefox-esr", "firefox")
CANDIDATE_PATHS = ("/usr/lib/firefox-esr/firefox-esr", "/usr/lib/firefox/firefox")
_BIDI_LINE = re.compile(r"WebDriver BiDi listening on (ws://\S+)")

#: Profile preferences of a Firefox driven by webhand, in the temporary profile's user.js so that they
#: hold from the first instant (``remote.prefs.recommended`` sets Firefox's own automation set only
#: once the remote agent starts, after some services have begun). Two aims:
#: - nothing the session did not ask for: no first-run pages, default-browser or update checks;
#: - no traffic of Firefox's own: a stock Firefox contacts Mozilla's services as it starts (remote
#:   settings, Normandy/Nimbus studies, safe browsing lists, captive-portal and connectivity probes,
#:   region and search updates, telemetry, push, add-on updates, DNS prefetch, speculative
#:   connections). Each is switched off here; the pages a session opens are its only traffic. This
#:   also makes the cold start cheaper: those services are work on the main thread, and BiDi's
#:   ``session.new`` answers only after the first window's idle startup tasks have run.
PREFERENCES = {
    # first run, prompts, updates
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "browser.startup.homepage": "about:blank",
    "startup.homepage_welcome_url": "about:blank",
    "browser.newtabpage.enabled": False,  # new tabs open on about:blank, not the heavy about:newtab
    "browser.aboutwelcome.enabled": False,
    "browser.sessionstore.resume_from_crash": False,
    "app.update.disabledForTesting": True,
    "app.update.auto": False,
    "app.update.checkInstallTime": False,
    "browser.tabs.warnOnClose": False,
    "browser.download.useDownloadDir": True,
    "remote.prefs.recommended": True,
    # Mozilla's services, off (see above); services.settings.server is honoured with the
    # MOZ_REMOTE_SETTINGS_DEVTOOLS environment variable (FirefoxProcess.start), as a release build
    # otherwise ignores it.
    "services.settings.server": "data:,#remote-settings-dummy/v1",
    "app.normandy.enabled": False,
    "app.normandy.api_url": "",
    "app.shield.optoutstudies.enabled": False,
    "messaging-system.rsexperimentloader.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.safebrowsing.blockedURIs.enabled": False,
    "browser.safebrowsing.passwords.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "captivedetect.canonicalURL": "",
    "network.dns.disablePrefetch": True,
    "network.prefetch-next": False,
    "network.predictor.enabled": False,
    "network.http.speculative-parallel-limit": 0,
    "browser.places.speculativeConnect.enabled": False,
    "network.trr.mode": 5,  # DNS over HTTPS off: names resolve through the system, as Chromium's do
    "doh-rollout.disable-heuristics": True,
    "browser.region.network.url": "",
    "browser.region.update.enabled": False,
    "browser.search.update": False,
    "browser.search.geoip.url": "",
    "extensions.getAddons.cache.enabled": False,
    "extensions.systemAddon.update.enabled": False,
    "extensions.update.enabled": False,
    "extensions.blocklist.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.unified": False,
    "toolkit.telemetry.archive.enabled": False,
    "toolkit.telemetry.server": "",
    "dom.push.connection.enabled": False,
    "identity.fxaccounts.enabled": False,
    "media.gmp-manager.updateEnabled": False,
    "security.remote_settings.crlite_filters.enabled": False,
    "security.remote_settings.intermediates.enabled": False,
    "privacy.trackingprotection.enabled": False,
    "browser.topsites.contile.enabled": False,
    "browser.urlbar.quicksuggest.enabled": False,
    "extensions.pocket.enabled": False,
    "browser.translations.enable": False,
    "browser.ml.enable": False,
    "geo.provider.network.url": "",
    "browser.newtabpage.activity-stream.feeds.system.topstories": False,
    "browser.newtabpage.activity-stream.feeds.topsites": False,
    "browser.newtabpage.activity-stream.testing.shouldInitializeFeeds": False,
    "browser.discovery.enabled": False,
    "browser.backup.enabled": False,
    # No /favicon.ico request of the browser's own: it is not the page's (Chromium's is not reported either).
    "browser.chrome.site_icons": False,
}

#: Environment of a Firefox webhand launches, beside TMPDIR and the cache folder (FirefoxProcess.start).
#: MOZ_REMOTE_SETTINGS_DEVTOOLS lets the profile's services.settings.server stand (a release build
#: otherwise contacts firefox.settings.services.mozilla.com whatever the profile says).
ENVIRONMENT = {"MOZ_CRASHREPORTER_DISABLE": "1", "MOZ_REMOTE_SETTINGS_DEVTOOLS": "1"}


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
                              "set firefox_path, or use driver = \"cdp\".")


def _write_preferences(profile: str, extra: Mapping[str, object]) -> None:
    lines = [f'user_pref("{name}", {_js(value)});' for name, value in {**PREFERENCES, **extra}.items()]
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
                    spawned: asyncio.Event | None = None,
                    preferences: Mapping[str, object] | None = None,
                    profile_dir: str | None = None) -> "FirefoxProcess":
        """``preferences``: set in the profile over the usual ones (an origin policy's: policy.py).
        ``profile_dir``: run on this profile folder and keep it on close (a named profile, whose lock
        the caller holds: session/profiles.py); else on a fresh temporary one."""
        scratch = _new_user_data_dir()  # 0700, random-named; removed on close or by the reaper
        profile = profile_dir or os.path.join(scratch, "profile")
        try:
            os.makedirs(profile, mode=0o700, exist_ok=True)
            _write_preferences(profile, preferences or {})  # a kept profile's user.js is webhand's, rewritten
        except OSError as error:
            shutil.rmtree(scratch, ignore_errors=True)
            raise BrowserLaunchFailed(f"Could not write Firefox's temporary profile: {error}.",
                                      "Check that the temporary folder (TMPDIR) is writable.") from None
        args = ["--remote-debugging-port=0", "--profile", profile, "--no-remote", "--new-instance",
                f"--width={width}", f"--height={height}", *(["--headless"] if headless else []), *extra_args]
        # TMPDIR and the cache inside the scratch folder: what a killed Firefox leaves goes with it.
        env = {**os.environ, "TMPDIR": os.path.join(scratch, "tmp"), "XDG_CACHE_HOME": os.path.join(scratch, "cache"),
               **ENVIRONMENT}
        os.makedirs(env["TMPDIR"], mode=0o700, exist_ok=True)
        try:
            process, ws, entry, tail = await spawn_registered(
                executable, args, env, scratch=scratch, user_data_dir=profile_dir or scratch,
                keeps_profile=profile_dir is not None, timeout=timeout,
                spawned=spawned, endpoint=_BIDI_LINE, kind="WebDriver BiDi")
        finally:
            if spawned is not None:
                spawned.set()
        firefox = cls(process, ws, profile_dir or scratch, entry, tail)
        firefox._drain = asyncio.create_task(_drain(process, tail))
        return firefox
