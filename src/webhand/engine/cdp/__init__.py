"""The Driver on raw CDP: webhand launches Chromium itself (or connects to ``cdp_url``) and talks
to it over one WebSocket with ``cdp-use``'s typed client. No Node process, no Playwright.

    engine (here) ─► CdpBrowser ─► CdpContext (context.py) ─► CdpTab (tab.py) ─► CdpElement (element.py)

Every page target is auto-attached at the browser level (``Target.setAutoAttach`` with
``waitForDebuggerOnStart`` and ``flatten``), so a tab, a popup included, is set up — listeners,
domains, viewport, the origin policy — before its first request. Protocol errors never leave
this package (``connection.guarded`` turns them into webhand errors).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable
from typing import Any

from webhand.config import Settings
from webhand.engine.capped import answers_within, dropped_within
from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded
from webhand.engine.cdp.context import CdpContext
from webhand.engine.cdp.policy import CdpPolicy
from webhand.engine.cdp.relay import ExtensionRelay, RelayClient, refused
from webhand.engine.cdp.shared_tabs import SharedTabsContext
from webhand.engine.cdp.stealth import StealthProfile
from webhand.engine.cdp.workers import CONTEXT_WORKERS
from webhand.engine.launch.chrome import ChromeProcess
from webhand.engine.driver import BrowserExtension, TabEvents
from webhand.engine.launch.local_launch import LocalLauncher
from webhand.engine.policy import RefusalLog
from webhand.engine.policy_proxy import PolicyProxy
from webhand.engine.pool import redacted_url
from webhand.errors import BrowserLaunchFailed
from webhand.security.origins import OriginRules

__all__ = ["CdpBrowser", "CdpDriver", "SharedTabsBrowser"]


class CdpBrowser:
    def __init__(self, connection: CdpConnection, chrome: ChromeProcess | None, policy: CdpPolicy | None) -> None:
        self.connection = connection
        self.chrome = chrome
        self.policy = policy
        self.pid = chrome.pid if chrome else None
        self.contexts: dict[str, CdpContext] = {}
        self.version = ""
        self.user_agent = ""
        self.stealth: StealthProfile | None = None  # stealth = true: every context's pages wear it

    async def start(self) -> None:
        on = self.connection.on
        on("Target.attachedToTarget", None, lambda p: asyncio.ensure_future(self._attached(p)))
        on("Target.detachedFromTarget", None, self._detached)
        on("Target.targetDestroyed", None, lambda p: self._target_gone(p["targetId"]))
        on("Target.targetCrashed", None, self._crashed)
        on("Browser.downloadWillBegin", None, self._download_began)
        on("Browser.downloadProgress", None, self._download_progress)
        version = await self.connection.send.Browser.getVersion()
        self.version, self.user_agent = version.get("product", ""), version.get("userAgent", "")
        await self.connection.send.Target.setDiscoverTargets(params={"discover": True})
        await self.connection.send.Target.setAutoAttach(params={"autoAttach": True, "waitForDebuggerOnStart": True,
                                                                "flatten": True})

    async def _attached(self, params: dict[str, Any]) -> None:
        info, session = params["targetInfo"], params["sessionId"]
        context = self.contexts.get(info.get("browserContextId", ""))
        if context is not None and context.tab_of_target(info.get("targetId", "")) is not None:
            # A second session on a page that already is a tab: one webhand attached itself (a
            # channel's fork, e.g. the dashboard's live view). It is not a new tab; its owner uses it.
            return
        if info.get("type") == "page" and context is not None and not context.closed:
            await context.adopt(info, session)
            return
        if info.get("type") in CONTEXT_WORKERS and context is not None and not context.closed:
            await context.adopt_worker(info, session)  # its console (workers.py)
            return
        try:  # not ours (another context's page, a browser-wide worker): let it run, and let go of it
            await self.connection.send.Runtime.runIfWaitingForDebugger(session_id=session)
            await self.connection.send.Target.detachFromTarget(params={"sessionId": session})
        except PROTOCOL_ERRORS:
            pass

    def _detached(self, params: dict[str, Any]) -> None:
        target = params.get("targetId") or (params.get("targetInfo") or {}).get("targetId", "")
        session = params.get("sessionId", "")
        # Only the tab's own session leaving means the tab is gone; a fork's leaving (the live view
        # stopped) leaves the tab as it was.
        if not any((tab := c.tab_of_target(target)) is not None and session and tab.session_id != session
                   for c in self.contexts.values()):
            self._target_gone(target)
        self.connection.forget_session(session)

    def _target_gone(self, target_id: str) -> None:
        for context in self.contexts.values():
            context.target_gone(target_id)

    def _crashed(self, params: dict[str, Any]) -> None:
        for context in self.contexts.values():
            tab = context.tab_of_target(params["targetId"])
            if tab is not None:
                tab.on_crash()

    def _download_began(self, params: dict[str, Any]) -> None:
        for context in self.contexts.values():
            if context.tab_of_frame(params.get("frameId", "")) is not None:
                context.download_began(params)
                return

    def _download_progress(self, params: dict[str, Any]) -> None:
        for context in self.contexts.values():
            context.download_progress(params)

    @property
    def alive(self) -> bool:
        return not self.connection.closed and (self.chrome is None or self.chrome.alive)

    async def new_context(self, *, width: int, height: int, downloads_dir: str | None, events: TabEvents) -> CdpContext:
        proxy = None
        params: dict[str, Any] = {"disposeOnDetach": True}
        if self.policy is not None and self.policy.active:
            # As with Playwright: all of the context's traffic, loopback included, goes through its proxy.
            refusals = RefusalLog()
            proxy = PolicyProxy(self.policy, self.policy.proxy_refused(refusals))
            params.update(proxyServer=await proxy.start(), proxyBypassList="<-loopback>")
        try:
            created = await asyncio.wait_for(self.connection.send.Target.createBrowserContext(params=params), 30)  # type: ignore[arg-type]
            context = CdpContext(self.connection, created["browserContextId"], events, width=width, height=height,
                                 downloads_dir=downloads_dir, policy=self.policy, proxy=proxy,
                                 staging_parent=self.chrome.scratch_dir if self.chrome is not None else None)
            if proxy is not None and self.policy is not None:
                self.policy.log_for(context, refusals)
            context.stealth = self.stealth
            self.contexts[context.context_id] = context
            await context.start_downloads()
        except (TimeoutError, *PROTOCOL_ERRORS) as error:
            if proxy is not None:
                await proxy.close()
            from webhand.engine.cdp.connection import translate
            raise translate(error, "Creating a browser context", 30) from None
        return context

    async def close(self) -> None:
        """Disconnect; and when webhand launched this browser, kill its process group."""
        try:
            if not self.chrome:  # side by side: each waits (capped) for a browser that may not answer
                await asyncio.gather(*(context.close() for context in list(self.contexts.values())))
            await self.connection.close()
        finally:
            if self.chrome:
                await self.chrome.close()

    def kill_now(self) -> None:
        if self.chrome:
            self.chrome.kill_now()

    async def abandon(self) -> None:
        """Cut the socket: the browser disposes the contexts of a connection that detached
        (``disposeOnDetach``), when it answers again."""
        self.connection.abort()
        if self.chrome:
            await self.chrome.close()

    # What a pool asks of an endpoint's browser (engine/pool.py) -------------------------------
    def on_disconnected(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the connection drops (a remote endpoint died or went away)."""
        self.connection.on_close.append(callback)

    async def wait_disconnected(self, timeout: float) -> bool:
        """Whether the connection drops within ``timeout`` (a page may report its close first)."""
        return await dropped_within(self.connection, timeout)

    async def ping(self, timeout: float) -> bool:
        """A round trip to the browser itself (not just an open socket), given up at ``timeout``."""
        return await answers_within(self.connection.send.Browser.getVersion(), timeout)

    async def extensions(self, timeout: float) -> list[BrowserExtension]:
        async with guarded("Listing the browser's extensions", timeout):
            found = (await self.connection.send.Extensions.getExtensions())["extensions"]
        return [BrowserExtension(e["name"], e["version"], e["id"], e["path"], e["enabled"]) for e in found]

    async def existing_context(self, *, events: TabEvents, width: int = 1280, height: int = 720) -> CdpContext:
        """The default context of a browser webhand launched on a kept profile: the one context whose
        cookies and storage Chromium writes to the profile's folder (a created context lives in
        memory only). Closing the session closes its tabs, never the context."""
        if self.chrome is None:
            raise BrowserLaunchFailed("Attaching to a browser's own default context (attach_to_existing_context) is "
                                      "not built on the raw CDP driver.", 'Use driver = "playwright" for it.')
        try:
            contexts = await asyncio.wait_for(self.connection.send.Target.getBrowserContexts(), 30)
            context_id = contexts["defaultBrowserContextId"]  # type: ignore[typeddict-item]
            context = CdpContext(self.connection, context_id, events, width=width, height=height,
                                 downloads_dir=None, policy=self.policy, proxy=None, owns_context=False,
                                 staging_parent=self.chrome.scratch_dir)
            context.stealth = self.stealth
            self.contexts[context.context_id] = context
            await context.start_downloads()
        except (TimeoutError, KeyError, *PROTOCOL_ERRORS) as error:
            from webhand.engine.cdp.connection import translate
            raise translate(error, "Opening the browser's default context", 30) from None
        return context


class SharedTabsBrowser(CdpBrowser):
    """The Chrome a person runs, reached through webhand's extension (relay.py): its only targets
    are the tabs the person shared. A session takes them as its context; nothing here closes them
    or the browser (closing only disconnects)."""

    def __init__(self, connection: CdpConnection, client: RelayClient, timeout: float) -> None:
        super().__init__(connection, None, None)
        self.client = client
        self._timeout = timeout

    async def new_context(self, *, width: int, height: int, downloads_dir: str | None,
                          events: TabEvents) -> CdpContext:
        raise refused("A fresh browser context")

    async def extensions(self, timeout: float) -> list[BrowserExtension]:
        raise refused("Listing the browser's extensions")

    async def existing_context(self, *, events: TabEvents, width: int = 1280, height: int = 720) -> SharedTabsContext:
        # width and height are not applied: the person's window keeps its size.
        for old in [c for c in self.contexts.values() if c.closed]:
            self.contexts.pop(old.context_id, None)
        context = SharedTabsContext(self.connection, self.client, events)
        self.contexts[context.context_id] = context
        try:
            await context.share_in(self._timeout)
        except BaseException:
            await context.close()
            self.contexts.pop(context.context_id, None)
            raise
        return context


class CdpDriver:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.policy = CdpPolicy.from_settings(settings)
        self.launcher = LocalLauncher(settings, lambda: self.policy.active)  # browsers launched here (cold start too)
        self.version: str | None = None
        # Where each response came from is told by the Network events every tab listens to anyway
        # (network.py): nothing more to ask for. Kept for the host, which sets it for either driver.
        self.response_sources = bool({"network", "all"} & set(settings.capabilities))
        self.relay: ExtensionRelay | None = None  # the extension bridge's server, once asked for

    async def start(self) -> None:
        """Nothing to start: no driver process."""

    def kill_now(self) -> list[int]:
        """SIGKILL, by pid, the browsers this engine launched that nobody closed: shutdown's last
        resort when closing them overran its cap. Returns the pids."""
        return self.launcher.launched.kill_now()

    async def launch(self, *, profile_dir: str | None = None) -> CdpBrowser:
        settings = self.settings
        starting = self.launcher.ahead.take(profile_dir)
        chrome = await starting
        try:
            connection = await CdpConnection.open(chrome.ws_endpoint, timeout=settings.launch_timeout)
            browser = CdpBrowser(connection, chrome, self.policy)
            await asyncio.wait_for(browser.start(), settings.launch_timeout)
        except BaseException as error:  # cancellation too: never strand the browser we just started
            await asyncio.shield(chrome.close())
            if isinstance(error, (asyncio.CancelledError, KeyboardInterrupt)):
                raise
            raise BrowserLaunchFailed(f"Chromium started but webhand could not attach to it: {error}",
                                      "Run `webhand doctor` to see what is wrong.") from None
        self._disguise(browser)
        self.version = browser.version
        return browser

    async def connect(self, cdp_url: str, *, kind: str = "cdp", headers: dict[str, str] | None = None,
                      timeout: float | None = None) -> CdpBrowser:
        if kind == "extension":
            return await self._connect_extension(timeout or self.settings.launch_timeout)
        if kind != "cdp":  # a Playwright browser server speaks Playwright's protocol, not CDP
            raise BrowserLaunchFailed(f"The raw CDP driver cannot connect to a {kind} endpoint ({redacted_url(cdp_url)}).",
                                      'Use driver = "playwright" for Playwright browser servers.')
        timeout = timeout or self.settings.launch_timeout
        connection: CdpConnection | None = None
        try:
            url = await asyncio.to_thread(_websocket_url, cdp_url, timeout, headers or {})
            connection = await CdpConnection.open(url, headers=headers, timeout=timeout)
            browser = CdpBrowser(connection, None, self.policy)
            await asyncio.wait_for(browser.start(), timeout)
        except (TimeoutError, OSError, ValueError, *PROTOCOL_ERRORS) as error:
            if connection is not None:
                connection.abort()  # opened, but the browser did not answer on it
            raise BrowserLaunchFailed(f"Could not connect to the browser at {redacted_url(cdp_url)}: {error}",
                                      "Check that it runs with --remote-debugging-port and that the URL is right.") from None
        self._disguise(browser)
        self.version = browser.version
        return browser

    async def _connect_extension(self, timeout: float) -> SharedTabsBrowser:
        """The tabs shared through webhand's extension: the relay starts (once) and the extension's
        connection is awaited up to ``timeout``."""
        from webhand.security.pairing import pairing_token

        if self.relay is None:
            self.relay = ExtensionRelay(self.settings.extension_port, pairing_token)
        await self.relay.start()
        link = await self.relay.wait_link(timeout)
        client = RelayClient(link, OriginRules.from_settings(self.settings))
        browser = SharedTabsBrowser(CdpConnection.over(client), client, timeout)
        try:
            await asyncio.wait_for(browser.start(), timeout)
        except (TimeoutError, *PROTOCOL_ERRORS) as error:
            await client.stop()
            raise BrowserLaunchFailed(f"The browser extension connected, but did not answer: {error}",
                                      "Reload the extension in chrome://extensions and try again.") from None
        self.version = browser.version
        return browser

    def _disguise(self, browser: CdpBrowser) -> None:
        if self.settings.stealth:
            browser.stealth = StealthProfile(browser.user_agent)

    async def stop(self) -> None:
        """No driver process to stop (each browser closes its own connection); a browser launched
        ahead for a session that never came is ended; the extension relay stops listening."""
        await self.launcher.ahead.discard()
        if self.relay is not None:
            await self.relay.close()


def _websocket_url(cdp_url: str, timeout: float, headers: dict[str, str]) -> str:
    """A ws:// URL as it is; for http://host:port, the browser's own from /json/version."""
    if cdp_url.startswith(("ws://", "wss://")):
        return cdp_url
    asked = urllib.request.Request(cdp_url.rstrip("/") + "/json/version", headers=headers)
    with urllib.request.urlopen(asked, timeout=timeout) as reply:
        return str(json.loads(reply.read())["webSocketDebuggerUrl"])
