"""The Driver on WebDriver BiDi, for Firefox (Debian's stock ``firefox-esr``): webhand starts
Firefox itself (or connects to a ``ws://`` BiDi endpoint) and talks to it over one WebSocket
with a thin, data-driven client (connection.py).

    engine (here) ─► BidiBrowser ─► BidiContext (browser.py) ─► BidiTab ─► BidiElement (tab.py)

A first slice: navigation, the page agent in a sandbox realm, refs, click/type/press, screenshots,
console, dialogs, cookies and user-context isolation; the origin policy, routes, the network log,
offline emulation, downloads and the file chooser (interception.py, policy.py, network.py,
files.py); input at viewport points (point_input.py) and the dashboard's live view from
screenshots (screen_capture.py). What is not built yet raises
``NotOnFirefox`` saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from webhand.config import Settings
from webhand.engine.bidi import extensions
from webhand.engine.bidi.browser import BidiBrowser
from webhand.engine.bidi.connection import PROTOCOL_ERRORS, BidiConnection
from webhand.engine.bidi.firefox import FirefoxProcess, find_firefox
from webhand.engine.bidi.policy import POLICY_PREFERENCES, BidiPolicy
from webhand.engine.launch.chrome import LaunchedBrowsers
from webhand.engine.pool import redacted_url
from webhand.errors import BrowserLaunchFailed, NotOnFirefox, WebhandError

__all__ = ["BidiBrowser", "BidiEngine"]


class BidiEngine:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # Bodies are kept for browser_network_request only when the network tools are served.
        self.response_sources = bool({"network", "all"} & set(settings.capabilities))
        self.version: str | None = None
        self.launched = LaunchedBrowsers()
        self._spawned = asyncio.Event()
        self._early: asyncio.Future[FirefoxProcess] | None = None
        self.policy = BidiPolicy.from_settings(settings)

    @property
    def browser_spawned(self) -> asyncio.Event:
        return self._spawned

    async def start(self) -> None:
        """Nothing to start: no driver process."""

    def launch_plan(self) -> dict[str, Any]:
        settings = self.settings
        # Firefox's remote agent navigates only to web pages (http, https, file, blob, about:blank)
        # unless started with -remote-allow-system-access: the user's opt-in to the browser's own
        # pages (about:support, about:buildconfig ...) is what starts it so.
        system_access = ["--remote-allow-system-access"] if settings.allow_internal_pages else []
        return {"browser": "firefox", "executable": find_firefox(settings.firefox_path), "headless": settings.headless,
                "width": settings.viewport.width, "height": settings.viewport.height,
                "extra_args": [*system_access, *settings.extra_args],
                "timeout": settings.launch_timeout, "preferences": POLICY_PREFERENCES if self.policy.active else {}}

    def prelaunch(self) -> None:
        if self._early is None:
            self._early = asyncio.ensure_future(self._start())

    def adopt_prelaunched(self, starting: asyncio.Future[Any]) -> None:
        """A browser launched before the engine existed is a Chromium (launch_memo.py): not ours to use."""
        starting.cancel()

    async def _start(self, profile_dir: str | None = None) -> FirefoxProcess:
        plan = self.launch_plan()
        firefox = await FirefoxProcess.start(plan["executable"], headless=plan["headless"], width=plan["width"],
                                             height=plan["height"], extra_args=plan["extra_args"],
                                             timeout=plan["timeout"], spawned=self._spawned,
                                             preferences=plan["preferences"], profile_dir=profile_dir)
        self.launched.add(firefox)
        return firefox

    def _refuse_unenforced_policy(self) -> None:
        """A Firefox webhand did not launch cannot be held to the policy (its profile's preferences
        send loopback traffic around the proxy, and WebRTC around every proxy): refuse to run."""
        if self.policy.active:
            raise NotOnFirefox("The origin policy on a Firefox webhand connects to",
                               "Let webhand launch Firefox (remove the ws:// URL), or unset the origin rules.")

    async def launch(self, *, profile_dir: str | None = None) -> BidiBrowser:
        if profile_dir is not None:
            # A kept profile's browser is always launched now, on that folder (the one started
            # ahead, if any, runs on a temporary profile and stays for the next session).
            starting: asyncio.Future[FirefoxProcess] = asyncio.ensure_future(self._start(profile_dir))
        else:
            starting, self._early = self._early or asyncio.ensure_future(self._start()), None
        firefox = await starting
        try:
            connection = await BidiConnection.open(firefox.ws_endpoint, timeout=self.settings.launch_timeout)
            browser = BidiBrowser(connection, firefox, self.policy, collect_bodies=self.response_sources)
            await asyncio.wait_for(browser.start(), self.settings.launch_timeout)
            if self.settings.extensions:
                browser.installed_extensions = await extensions.install(connection, self.settings.extensions,
                                                                         self.settings.launch_timeout)
        except BaseException as error:  # cancellation too: never strand the browser we just started
            await asyncio.shield(firefox.close())
            if isinstance(error, (asyncio.CancelledError, KeyboardInterrupt, WebhandError)):
                raise
            raise BrowserLaunchFailed(f"Firefox started but webhand could not open a WebDriver BiDi session: {error}",
                                      "Run `webhand doctor` to see what is wrong.") from None
        self.version = browser.version
        return browser

    async def connect(self, url: str, *, kind: str = "cdp", headers: dict[str, str] | None = None,
                      timeout: float | None = None) -> BidiBrowser:
        """A Firefox already running with ``--remote-debugging-port``, at its ``ws://host:port`` (BiDi)."""
        self._refuse_unenforced_policy()
        timeout = timeout or self.settings.launch_timeout
        if kind not in ("cdp", "bidi") or not url.startswith(("ws://", "wss://")):
            raise BrowserLaunchFailed(f"The Firefox driver connects to a WebDriver BiDi ws:// URL, not {redacted_url(url)}.",
                                      "Pass the URL Firefox prints: \"WebDriver BiDi listening on ws://…\".")
        connection: BidiConnection | None = None
        try:
            connection = await BidiConnection.open(url, timeout=timeout)
            browser = BidiBrowser(connection, None, self.policy, collect_bodies=self.response_sources)
            await asyncio.wait_for(browser.start(), timeout)
        except (TimeoutError, ValueError, *PROTOCOL_ERRORS) as error:
            if connection is not None:
                connection.abort()
            raise BrowserLaunchFailed(f"Could not open a WebDriver BiDi session at {redacted_url(url)}: {error}",
                                      "Check that Firefox runs with --remote-debugging-port and has no other "
                                      "BiDi session (Firefox allows one).") from None
        self.version = browser.version
        return browser

    async def stop(self) -> None:
        early, self._early = self._early, None
        if early is not None:
            early.cancel()
            with contextlib.suppress(BaseException):
                await (await early).close()

    def kill_now(self) -> list[int]:
        return self.launched.kill_now()
