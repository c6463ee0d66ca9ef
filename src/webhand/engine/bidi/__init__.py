"""The Driver on WebDriver BiDi, for Firefox (Debian's stock ``firefox-esr``): webhand starts
Firefox itself (or connects to a ``ws://`` BiDi endpoint) and talks to it over one WebSocket
with a thin, data-driven client (connection.py).

    engine (here) ─► BidiBrowser ─► BidiContext (browser.py) ─► BidiTab (tab.py) ─► BidiElement (element.py)

A first slice: navigation, the page agent in a sandbox realm, refs, click/type/press, screenshots,
console, dialogs, cookies and user-context isolation; the origin policy, routes, the network log,
offline emulation, downloads and the file chooser (interception.py, policy.py, network.py,
files.py); input at viewport points (point_input.py) and the dashboard's live view from
screenshots (screen_capture.py). What is not built yet raises
``NotOnFirefox`` saying so.
"""

from __future__ import annotations

import asyncio

from webhand.config import Settings
from webhand.engine.bidi import extensions
from webhand.engine.bidi.browser import BidiBrowser
from webhand.engine.bidi.connection import PROTOCOL_ERRORS, BidiConnection
from webhand.engine.bidi.launcher import FirefoxLauncher
from webhand.engine.bidi.policy import BidiPolicy
from webhand.engine.pool import redacted_url
from webhand.errors import BrowserLaunchFailed, NotOnFirefox, WebhandError

__all__ = ["BidiBrowser", "FirefoxDriver"]


class FirefoxDriver:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # Bodies are kept for browser_network_request only when the network tools are served.
        self.response_sources = bool({"network", "all"} & set(settings.capabilities))
        self.version: str | None = None
        self.policy = BidiPolicy.from_settings(settings)
        self.launcher = FirefoxLauncher(settings, lambda: self.policy.active)  # browsers launched here (cold start too)

    async def start(self) -> None:
        """Nothing to start: no driver process."""

    def _refuse_unenforced_policy(self) -> None:
        """A Firefox webhand did not launch cannot be held to the policy (its profile's preferences
        send loopback traffic around the proxy, and WebRTC around every proxy): refuse to run."""
        if self.policy.active:
            raise NotOnFirefox("The origin policy on a Firefox webhand connects to",
                               "Let webhand launch Firefox (remove the ws:// URL), or unset the origin rules.")

    async def launch(self, *, profile_dir: str | None = None) -> BidiBrowser:
        firefox = await self.launcher.ahead.take(profile_dir)
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
        await self.launcher.ahead.discard()  # launched ahead for a session that never came

    def kill_now(self) -> list[int]:
        return self.launcher.launched.kill_now()
