"""One session's browser context: its tabs, cookies, storage state and downloads, network
emulation; it owns the console of its pages and workers (events.py), the mocks of browser_route
(routes.py) and the console of its shared workers (workers.py)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from playwright.async_api import BrowserContext as PWContext
from playwright.async_api import Download as PWDownload
from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage
from playwright.async_api import Response as PWResponse

from webhand.engine.announcements import Announcements
from webhand.engine.downloads import free_path, keep_private
from webhand.engine.driver import CLOSE_TIMEOUT_SECONDS, Cookie, Download, NetworkConditions, RequestDetail, RouteRule, TabEvents
from webhand.engine.network import RequestsInFull
from webhand.engine.policy_proxy import PolicyProxy
from webhand.engine.pw.errors import translated
from webhand.engine.pw.events import ContextConsole
from webhand.engine.pw.policy import PlaywrightRequestPolicy
from webhand.engine.pw.routes import PlaywrightRoutes
from webhand.engine.pw.tab import PlaywrightTab
from webhand.engine.pw.workers import SharedWorkerConsole
from webhand.errors import ActionTimeout

#: Longest a download may take to save before it is reported as failed.
_DOWNLOAD_CAP_SECONDS = 600.0


class PlaywrightContext:
    def __init__(self, context: PWContext, events: TabEvents, downloads_dir: str | None = None,
                 policy: PlaywrightRequestPolicy | None = None, proxy: PolicyProxy | None = None,
                 response_sources: bool = True, attached: bool = False) -> None:
        self.context = context
        self.response_sources = response_sources
        # attached: the user's own default context (attach_to_existing_context). Its tabs were there
        # before webhand; closing the session closes only the tabs webhand opened, never the context.
        self.attached = attached
        self.events = events
        self.policy = policy
        self.proxy = proxy  # the context's policy proxy: it lives exactly as long as the context
        if proxy is not None:
            context.on("close", lambda _: asyncio.ensure_future(proxy.close()))
        self.tabs: list[PlaywrightTab] = []
        self._opened = 0
        self.downloads_dir = Path(downloads_dir) if downloads_dir else None
        self._reserved_names: set[str] = set()
        self._announced_downloads = Announcements()  # attachment responses whose download event has not come
        self._announced_tabs = Announcements()  # windows pages asked for whose tabs do not exist yet
        # For the debugging tools: network emulation, the mocks of browser_route, and console
        # messages of every source (pages and their workers, service workers, shared workers).
        self.network_conditions = NetworkConditions()
        self.mocks = PlaywrightRoutes(context, policy)
        self.routes: list[RouteRule] = self.mocks.rules  # the same list, as the Driver's Context shows it
        self.shared_workers = SharedWorkerConsole(context, lambda entry: self.events.console and self.events.console(entry))
        self.console = ContextConsole(context, events, self.tabs)
        self.requests_in_full = RequestsInFull(lambda: [tab.network_log for tab in self.tabs])
        context.on("page", self._adopt)
        self._preexisting = list(context.pages) if attached else []
        for page in self._preexisting:
            self._adopt(page)

    def _adopt(self, page: PWPage) -> PlaywrightTab:
        """Every page of the context becomes a tab, including those the page opens itself."""
        for tab in self.tabs:
            if tab.page is page:
                return tab
        tab = PlaywrightTab(page, self._opened, self.events, self.policy, lambda: self.network_conditions,
                            response_sources=self.response_sources)
        if not self.shared_workers.started:
            asyncio.ensure_future(self.shared_workers.start_through(tab._session))
        self._opened += 1
        self.tabs.append(tab)
        page.on("close", lambda _: self.tabs.remove(tab) if tab in self.tabs else None)
        page.on("download", lambda download: self._on_download(download, tab))
        tab.on_window_open = self._announced_tabs.announce
        self._announced_tabs.arrived()
        if self.events.tab_opened:
            self.events.tab_opened(tab)
        page.on("response", self._on_response)
        return tab

    async def new_tab(self) -> PlaywrightTab:
        async with translated("Opening a tab"):
            page = await self.context.new_page()
        return self._adopt(page)

    async def close(self) -> None:
        # Playwright waits for the browser's answer to a close without any timeout: a frozen
        # browser would hang the session's close, and the host's shutdown, for good.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._close_in_browser(), CLOSE_TIMEOUT_SECONDS)
        if self.proxy is not None and not self.attached:
            await self.proxy.close()

    async def _close_in_browser(self) -> None:
        await self.shared_workers.close()
        if self.attached:
            for tab in [t for t in self.tabs if t.page not in self._preexisting]:
                with contextlib.suppress(PWError):
                    await tab.page.close()
            return
        with contextlib.suppress(PWError):
            await self.context.close()

    # downloads --------------------------------------------------------------------------------
    def _on_response(self, response: PWResponse) -> None:
        # A navigation answered "attachment" becomes a download; Chromium tells Playwright a
        # moment later. Counting it lets an action wait for that event instead of missing it.
        if response.request.is_navigation_request() and \
                (response.headers.get("content-disposition") or "").lower().startswith("attachment"):
            self._announced_downloads.announce()

    def expecting_tab(self) -> bool:
        return self._announced_tabs.expecting()

    def expecting_download(self) -> bool:
        return self._announced_downloads.expecting()

    def _on_download(self, download: PWDownload, tab: PlaywrightTab) -> None:
        self._announced_downloads.arrived()
        record = Download(download.url, Path(download.suggested_filename).name or "download", tab.index)
        saving = asyncio.ensure_future(self._save(download, record))
        if self.events.download:
            self.events.download(record, saving)

    async def _save(self, download: PWDownload, record: Download) -> None:
        if self.downloads_dir is None:
            record.error = "no download folder is configured"
            await download.cancel()
            return
        try:
            target = free_path(self.downloads_dir, record.name, self._reserved_names)
        except OSError as error:
            record.error = str(error)
            await download.cancel()
            return
        try:
            await asyncio.wait_for(download.save_as(target), _DOWNLOAD_CAP_SECONDS)
            record.size = keep_private(target)
            record.path = str(target)
        except (PWError, OSError, asyncio.TimeoutError) as error:
            record.error = (await _failure(download)) or str(error).splitlines()[0] or type(error).__name__
        finally:
            self._reserved_names.discard(target.name)

    # requests in full (engine/network.py) ---------------------------------------------------------
    async def request_detail(self, request_id: int, *, timeout: float) -> RequestDetail:
        return await self.requests_in_full.request_detail(request_id, timeout=timeout)

    async def response_body(self, request_id: int, *, timeout: float) -> bytes:
        return await self.requests_in_full.response_body(request_id, timeout=timeout)

    # network emulation and mocks -------------------------------------------------------------
    async def set_network_conditions(self, conditions: NetworkConditions) -> None:
        async with translated("Changing the network conditions"):
            # Playwright's offline switch also reaches the service workers and the tabs opened later;
            # latency and throughput are set on each tab's own session after it (the last word counts).
            await self.context.set_offline(conditions.offline)
            self.network_conditions = conditions
            await asyncio.gather(*(tab.cdp_session.emulate(conditions) for tab in self.tabs if not tab.closed))

    async def add_route(self, rule: RouteRule) -> None:
        await self.mocks.add(rule)

    async def remove_routes(self, pattern: str | None) -> list[RouteRule]:
        return await self.mocks.remove(pattern)

    # cookies and storage ----------------------------------------------------------------------
    async def cookies(self) -> list[Cookie]:
        async with translated("Reading cookies"):
            raw = await self.context.cookies()
        return [Cookie(c["name"], c["value"], c["domain"], c["path"], c["expires"], c["httpOnly"], c["secure"],
                       c.get("sameSite", "Lax")) for c in raw]

    async def set_cookie(self, cookie: Cookie) -> None:
        async with translated(f"Setting cookie {cookie.name}"):
            await self.context.add_cookies([{
                "name": cookie.name, "value": cookie.value, "domain": cookie.domain, "path": cookie.path,
                "expires": cookie.expires, "httpOnly": cookie.http_only, "secure": cookie.secure,
                "sameSite": cookie.same_site}])

    async def delete_cookies(self, *, name: str | None = None, domain: str | None = None, path: str | None = None) -> None:
        async with translated("Deleting cookies"):
            await self.context.clear_cookies(name=name, domain=domain, path=path)

    async def storage_state(self) -> dict[str, Any]:
        async with translated("Reading the storage state"):
            return dict(await self.context.storage_state())

    async def set_storage_state(self, state: dict[str, Any], *, timeout: float) -> None:
        try:
            async with translated("Loading the storage state", timeout):
                await asyncio.wait_for(self.context.set_storage_state(state), timeout)  # type: ignore[arg-type]
        except asyncio.TimeoutError:
            raise ActionTimeout(f"Loading the storage state did not finish within {timeout:g} s.",
                                "Try again with a larger timeout.") from None


async def _failure(download: PWDownload) -> str | None:
    try:
        return await asyncio.wait_for(download.failure(), 5)
    except (PWError, asyncio.TimeoutError):
        return None
