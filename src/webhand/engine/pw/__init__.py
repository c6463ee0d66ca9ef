"""The Driver on Playwright: webhand launches Chromium itself and attaches over CDP.

Launching ourselves (``engine/launch/chrome.py``) is what gives us the pid, the process group and the
registry; Playwright brings the well-tested actionability checks, frames and events.
Playwright exceptions never leave this package (``errors.py`` translates them).

    engine (here) ─► PlaywrightBrowser ─► PlaywrightContext (context.py) ─► PlaywrightTab (tab.py)
        PlaywrightTab ─► PlaywrightFrameTree (frames.py) ─► PlaywrightElement (element.py)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from typing import Any

from playwright.async_api import Browser as PWBrowser
from playwright.async_api import Error as PWError
from playwright.async_api import Playwright, async_playwright

from webhand.config import Settings
from webhand.engine.capped import abandon, answers_within
from webhand.engine.launch.chrome import ChromeProcess, discard_launch
from webhand.engine.driver import BrowserExtension, TabEvents
from webhand.engine.launch.local_launch import LocalLauncher
from webhand.engine.pool import redacted_url
from webhand.engine.pw.context import PlaywrightContext
from webhand.engine.pw.errors import translated
from webhand.engine.policy_proxy import PolicyProxy
from webhand.engine.pw.policy import PlaywrightRequestPolicy, RefusalLog
from webhand.engine.pw.stealth import PlaywrightStealth
from webhand.errors import ActionTimeout, BrowserLaunchFailed

__all__ = ["PlaywrightBrowser", "PlaywrightDriver", "redacted_url"]


class PlaywrightBrowser:
    def __init__(self, browser: PWBrowser, chrome: ChromeProcess | None, policy: PlaywrightRequestPolicy | None = None,
                 stealth: bool = False, response_sources: bool = True) -> None:
        self.browser = browser
        self.response_sources = response_sources
        self.chrome = chrome
        self.policy = policy
        self.pid = chrome.pid if chrome else None
        self.stealth = stealth
        self._stealth_profile: PlaywrightStealth | None = None
        self.disconnected = asyncio.Event()  # the connection dropped (a remote endpoint died or went away)
        browser.on("disconnected", lambda _: self.disconnected.set())

    @property
    def alive(self) -> bool:
        return self.browser.is_connected() and (self.chrome is None or self.chrome.alive)

    async def new_context(self, *, width: int, height: int, downloads_dir: str | None,
                          events: TabEvents) -> PlaywrightContext:
        options: dict[str, Any] = {"viewport": {"width": width, "height": height}, "accept_downloads": True}
        if self.stealth:
            async with translated("Preparing stealth"):
                self._stealth_profile = self._stealth_profile or await PlaywrightStealth.of(self.browser)
            options.update(self._stealth_profile.context_options())
        if self.policy is None or not self.policy.active:
            async with translated("Creating a browser context"):
                context = await self.browser.new_context(**options)
                await self._disguise(context)
                return PlaywrightContext(context, events, downloads_dir, policy=self.policy,
                                         response_sources=self.response_sources)
        # An origin policy holds at two layers (policy.py): every request the context routes, and
        # every connection it makes, through its own policy proxy (Playwright sends loopback
        # through it too, so nothing local is exempt).
        refusals = RefusalLog()
        proxy = PolicyProxy(self.policy, self.policy.proxy_refused(refusals))
        try:
            async with translated("Creating a browser context"):
                context = await self.browser.new_context(**options, proxy={"server": await proxy.start()})
                self.policy.log_for(context, refusals)
                await context.route("**/*", self.policy.router(context))
                await self._disguise(context)
        except BaseException:
            await proxy.close()
            raise
        return PlaywrightContext(context, events, downloads_dir, policy=self.policy, proxy=proxy,
                                 response_sources=self.response_sources)

    async def _disguise(self, context: Any) -> None:
        if self._stealth_profile is not None:
            await self._stealth_profile.apply(context)  # an init script in every page and frame of the context

    def on_disconnected(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the connection drops (a remote endpoint died or went away)."""
        self.browser.on("disconnected", lambda _: callback())

    async def wait_disconnected(self, timeout: float) -> bool:
        """Whether the connection drops within ``timeout`` (a page may report its close first)."""
        try:
            await asyncio.wait_for(self.disconnected.wait(), timeout)
        except asyncio.TimeoutError:
            pass
        return self.disconnected.is_set()

    async def extensions(self, timeout: float) -> list[BrowserExtension]:
        async def listed() -> list[dict[str, Any]]:
            cdp_session = await self.browser.new_browser_cdp_session()
            try:
                return list((await cdp_session.send("Extensions.getExtensions"))["extensions"])
            finally:
                with contextlib.suppress(PWError):
                    await cdp_session.detach()

        try:
            async with translated("Listing the browser's extensions", timeout):
                found = await asyncio.wait_for(listed(), timeout)
        except TimeoutError:
            raise ActionTimeout(f"Listing the browser's extensions did not finish within {timeout:g} s.",
                                "Try again with a larger timeout.") from None
        return [BrowserExtension(e["name"], e["version"], e["id"], e["path"], e["enabled"]) for e in found]

    async def ping(self, timeout: float) -> bool:
        """A round trip to the browser itself (not just an open socket): a CDP session, one call,
        given up at ``timeout``. The session is detached without waiting: a detach waits for the
        browser's answer too, and awaiting it on the way out made the check outlast its cap."""
        async def round_trip() -> None:
            session = await self.browser.new_browser_cdp_session()
            try:
                await session.send("Browser.getVersion")
            finally:
                abandon(asyncio.ensure_future(session.detach()), cancel=False)

        return await answers_within(round_trip(), timeout)

    @property
    def version(self) -> str:
        return self.browser.version

    async def existing_context(self, *, events: TabEvents, width: int = 1280, height: int = 720) -> PlaywrightContext:
        """The browser's own default context, with the tabs, cookies and logins already in it
        (attach_to_existing_context). Closing the session leaves them, and the context, open."""
        if not self.browser.contexts:
            raise BrowserLaunchFailed("The browser has no default context to attach to (it is not a browser "
                                      "started with --remote-debugging-port, or it was started headless "
                                      "without one).", "Set attach_to_existing_context = false to get a fresh context.")
        return PlaywrightContext(self.browser.contexts[0], events, None, policy=self.policy,
                                 response_sources=self.response_sources, attached=True)

    async def close(self) -> None:
        """Disconnect; and when webhand launched this browser, kill its process group."""
        try:
            await asyncio.wait_for(self.browser.close(), 5)
        except (PWError, asyncio.TimeoutError):
            pass
        if self.chrome:
            await self.chrome.close()

    def kill_now(self) -> None:
        if self.chrome:
            self.chrome.kill_now()

    async def abandon(self) -> None:
        """Playwright owns the socket (in its Node driver): its disconnect is asked for, and waited
        for only briefly; the driver drops the connection when it can."""
        closing = asyncio.ensure_future(self.browser.close())
        await asyncio.wait({closing}, timeout=_ABANDON_CAP_SECONDS)
        if not closing.done():
            abandon(closing, cancel=False)
        elif not closing.cancelled():
            closing.exception()  # a disconnect that failed is no news
        if self.chrome:
            await self.chrome.close()


#: How long abandoning a connection waits for Playwright to report it closed.
_ABANDON_CAP_SECONDS = 1.0


def _first_line(error: Exception, url: str) -> str:
    line = (str(error).splitlines() or [type(error).__name__])[0]
    return line.replace(url, redacted_url(url))


class PlaywrightDriver:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._playwright: Playwright | None = None
        self._manager: Any = None
        self.policy = PlaywrightRequestPolicy.from_settings(settings)
        self.launcher = LocalLauncher(settings, lambda: self.policy.active)  # browsers launched here (cold start too)
        self.response_sources = bool({"network", "all"} & set(settings.capabilities))  # the host may change it
        self._driver_start: asyncio.Future[Playwright] | None = None

    async def start(self) -> None:
        # One driver however many callers start it at once (the boot and an early launch).
        if self._driver_start is None:
            self._manager = async_playwright()
            self._driver_start = asyncio.ensure_future(self._manager.start())
        self._playwright = await asyncio.shield(self._driver_start)

    async def launch(self, *, profile_dir: str | None = None) -> PlaywrightBrowser:
        # Chromium (about 0.3 s to its DevTools endpoint) and the Node driver (about 0.4 s) boot side
        # by side: a first launch waits for the slower of the two, not for their sum.
        starting = self.launcher.take(profile_dir)
        try:
            await self.start()
        except BaseException:
            await asyncio.shield(discard_launch(starting))
            raise
        assert self._playwright is not None
        settings = self.settings
        chrome = await starting
        try:
            browser = await self._playwright.chromium.connect_over_cdp(chrome.ws_endpoint, timeout=settings.launch_timeout * 1000)
        except BaseException as error:  # cancellation too: never strand the browser we just started
            await asyncio.shield(chrome.close())
            if not isinstance(error, PWError):
                raise
            raise BrowserLaunchFailed(f"Chromium started but webhand could not attach to it: {str(error).splitlines()[0]}",
                                      "Run `webhand doctor` to see what is wrong.") from None
        return PlaywrightBrowser(browser, chrome, self.policy, stealth=settings.stealth,
                                 response_sources=self.response_sources)

    async def connect(self, url: str, *, kind: str = "cdp", headers: dict[str, str] | None = None,
                      timeout: float | None = None) -> PlaywrightBrowser:
        """Connect to a browser webhand did not start: a Playwright browser server (``kind``
        "playwright", Playwright's own protocol, which keeps downloads, uploads and routing working
        across the wire) or any Chromium speaking CDP. Closing it later only disconnects."""
        await self.start()
        assert self._playwright is not None
        milliseconds = (timeout or self.settings.launch_timeout) * 1000
        try:
            if kind == "playwright":
                browser = await self._playwright.chromium.connect(url, timeout=milliseconds, headers=headers or None)
            else:
                browser = await self._playwright.chromium.connect_over_cdp(url, timeout=milliseconds,
                                                                           headers=headers or None)
        except PWError as error:
            where = redacted_url(url)  # a query string or user:password may hold the API key
            hint = ("Check that the Playwright server runs (playwright run-server / launch-server), its version "
                    "matches, and the URL and headers are right." if kind == "playwright" else
                    "Check that it runs with --remote-debugging-port (or that the service is up) and that the URL "
                    "and headers are right.")
            raise BrowserLaunchFailed(f"Could not connect to the {kind} browser at {where}: "
                                      f"{_first_line(error, url)}", hint) from None
        return PlaywrightBrowser(browser, None, self.policy, stealth=self.settings.stealth,
                                 response_sources=self.response_sources)

    async def stop(self) -> None:
        await self.launcher.discard_early()  # launched ahead for a session that never came
        if self._driver_start is not None and not self._driver_start.done():
            # The driver is mid-start: let it finish (capped) so that exiting ends its process.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._driver_start), self.settings.launch_timeout)
        if self._manager is not None:
            try:
                await self._manager.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001 - the driver process may already be gone at exit
                pass
            self._manager = self._playwright = self._driver_start = None

    def kill_now(self) -> list[int]:
        """SIGKILL, by pid, the browsers this engine launched that nobody closed, and the Node
        driver: shutdown's last resort when closing them overran its cap. Every Playwright call
        still waiting on either then fails at once. Returns the pids."""
        pids = self.launcher.launched.kill_now()
        # Playwright keeps the driver's process private (its client's pipe transport); the version
        # is pinned in constraints.txt, and another layout finds nothing here (the driver then
        # exits by itself once its pipe closes).
        transport = getattr(getattr(self._manager, "_client", None), "_transport", None)
        driver = getattr(transport, "_proc", None)
        if isinstance(driver, asyncio.subprocess.Process) and driver.returncode is None:
            # The transport then reports "connection closed" on a future nobody reads: read it here.
            lost = getattr(transport, "on_error_future", None)
            if isinstance(lost, asyncio.Future):
                lost.add_done_callback(lambda future: future.cancelled() or future.exception())
            with contextlib.suppress(ProcessLookupError):
                os.kill(driver.pid, signal.SIGKILL)
                pids.append(driver.pid)
        return pids

