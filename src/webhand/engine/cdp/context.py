"""One session's browser context over raw CDP (``Target.createBrowserContext``): its tabs, cookies,
storage state and downloads.

The context owns its network settings and interception (``network``, routes.py) and its service
and shared workers (``workers``, workers.py); each of its tabs asks it for what a new session of
its page gets before it runs (``session_setup``).
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import tempfile
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded
from webhand.engine.cdp.routes import ContextNetwork
from webhand.engine.cdp.tab import CdpTab
from webhand.engine.cdp.workers import ContextWorkers
from webhand.engine.announcements import Announcements
from webhand.engine.downloads import store
from webhand.engine.driver import CLOSE_TIMEOUT_SECONDS, Cookie, Download, NetworkConditions, RequestDetail, RouteRule, TabEvents
from webhand.engine.network import RequestsInFull
from webhand.engine.policy_proxy import PolicyProxy
from webhand.errors import ActionTimeout

if TYPE_CHECKING:
    from webhand.engine.cdp.policy import CdpPolicy
    from webhand.engine.stealth import StealthProfile

# By index, not Object.entries: an item named like a Storage method ("key", "getItem", "length")
# is not an own property of localStorage, so entries would leave it out.
_READ_STORAGE = ("() => Array.from({length: localStorage.length}, (_, i) => localStorage.key(i))"
                 ".map((name) => ({name, value: localStorage.getItem(name)}))")
_WRITE_STORAGE = "(items) => { for (const {name, value} of items) localStorage.setItem(name, value); }"


class CdpContext:
    stealth: StealthProfile | None = None  # the browser's disguise when stealth = true (stealth.py)

    def __init__(self, connection: CdpConnection, context_id: str, events: TabEvents, *, width: int, height: int,
                 downloads_dir: str | None, policy: CdpPolicy | None, proxy: PolicyProxy | None,
                 owns_context: bool = True, staging_parent: str | None = None) -> None:
        self.connection = connection
        self.context_id = context_id
        self.events = events
        self.width, self.height = width, height
        self.downloads_dir = Path(downloads_dir) if downloads_dir else None
        self.policy = policy
        self.proxy = proxy
        self.owns_context = owns_context
        self.tabs: list[CdpTab] = []
        self._by_target: dict[str, CdpTab] = {}
        self._opened = 0
        self._waiting: dict[str, asyncio.Future[CdpTab]] = {}
        self._scratch: asyncio.Future[str] | None = None  # a page made only to reach an origin's storage
        self._create_lock = asyncio.Lock()
        self._announced_downloads = Announcements()  # attachment responses whose download has not begun
        self._announced_tabs = Announcements()  # windows pages asked for whose tabs do not exist yet
        self._downloads: dict[str, tuple[Download, asyncio.Future[None]]] = {}
        self.downloads_begun = 0
        # Inside a launched browser's user-data dir when there is one: what a killed server leaves
        # there goes with that dir (engine/launch/chrome.py).
        self._staging = tempfile.mkdtemp(prefix="webhand-cdp-downloads-", dir=staging_parent)
        self._reserved_names: set[str] = set()
        self._origins: set[str] = set()
        self.closed = False
        self.network = ContextNetwork(connection, policy, self, self._page_sessions)  # emulation, routes, interception
        self.workers = ContextWorkers(connection, events, self.network.session_setup)
        self.requests_in_full = RequestsInFull(lambda: [tab.network_log for tab in self.tabs])

    # tabs --------------------------------------------------------------------------------------
    async def adopt(self, info: dict[str, Any], session_id: str) -> None:
        """A page of this context attached (paused): make it a tab, then let it run."""
        if self._scratch is not None and not self._scratch.done():
            self._scratch.set_result(session_id)
            return
        tab = CdpTab(self, self.connection, info["targetId"], session_id, self._opened, self.events, self.policy)
        self._opened += 1
        try:
            await tab.start(width=self.width, height=self.height)
        except PROTOCOL_ERRORS:
            tab.detached()
            return
        self._by_target[info["targetId"]] = tab
        self.tabs.append(tab)
        self._announced_tabs.arrived()
        waiting = self._waiting.pop(info["targetId"], None)
        if waiting is not None and not waiting.done():
            waiting.set_result(tab)
        if self.events.tab_opened:
            self.events.tab_opened(tab)

    def target_gone(self, target_id: str) -> None:
        tab = self._by_target.pop(target_id, None)
        if tab is not None:
            tab.detached()
            if tab in self.tabs:
                self.tabs.remove(tab)

    async def adopt_worker(self, info: dict[str, Any], session_id: str) -> None:
        """A service or shared worker of this context attached (paused): hear it, then let it run."""
        await self.workers.adopt(info, session_id)

    def tab_of_target(self, target_id: str) -> CdpTab | None:
        return self._by_target.get(target_id)

    def tab_of_frame(self, frame_id: str) -> CdpTab | None:
        return next((t for t in self.tabs if frame_id in t.frame_tree.frames), None)

    async def new_tab(self) -> CdpTab:
        async with guarded("Opening a tab", 30):
            async with self._create_lock:
                created = await self.connection.send.Target.createTarget(
                    params={"url": "about:blank", "browserContextId": self.context_id})
            target = created["targetId"]
            if target in self._by_target:
                return self._by_target[target]
            waiting = self._waiting.setdefault(target, asyncio.get_running_loop().create_future())
            return await waiting

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.connection.closed:
            pass  # the browser is gone, and its contexts with it
        elif self.owns_context:
            try:
                await asyncio.wait_for(self.connection.send.Target.disposeBrowserContext(
                    params={"browserContextId": self.context_id}), CLOSE_TIMEOUT_SECONDS)
            except (TimeoutError, *PROTOCOL_ERRORS):
                pass
        else:
            for tab in list(self.tabs):
                await tab.close()
        for tab in list(self.tabs):
            tab.detached()
        self.tabs.clear()
        if self.proxy is not None:
            await self.proxy.close()
        shutil.rmtree(self._staging, ignore_errors=True)

    async def request_detail(self, request_id: int, *, timeout: float) -> RequestDetail:
        return await self.requests_in_full.request_detail(request_id, timeout=timeout)

    async def response_body(self, request_id: int, *, timeout: float) -> bytes:
        return await self.requests_in_full.response_body(request_id, timeout=timeout)

    def note_origin(self, origin: str) -> None:
        if origin.startswith("http"):
            self._origins.add(origin)

    # announcements -----------------------------------------------------------------------------
    def announce_download(self) -> None:
        self._announced_downloads.announce()

    def announce_tab(self) -> None:
        """A page of the context asked for a new window (``Page.windowOpen``): its tab is coming."""
        self._announced_tabs.announce()

    def expecting_tab(self) -> bool:
        return self._announced_tabs.expecting()

    def expecting_download(self) -> bool:
        return self._announced_downloads.expecting()

    # downloads (Browser.setDownloadBehavior "allowAndName": saved under their guid, then moved) -----
    async def start_downloads(self) -> None:
        await self.connection.send.Browser.setDownloadBehavior(params={
            "behavior": "allowAndName", "browserContextId": self.context_id, "downloadPath": self._staging,
            "eventsEnabled": True})

    def download_began(self, params: dict[str, Any]) -> None:
        self.downloads_begun += 1
        self._announced_downloads.arrived()
        tab = self.tab_of_frame(params.get("frameId", ""))
        record = Download(params["url"], Path(params.get("suggestedFilename") or "").name or "download",
                          tab.index if tab else 0)
        saving: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._downloads[params["guid"]] = (record, saving)
        if self.downloads_dir is None:
            record.error = "no download folder is configured"
            saving.set_result(None)
            asyncio.ensure_future(self._cancel(params["guid"]))
        if self.events.download:
            self.events.download(record, saving)

    async def _cancel(self, guid: str) -> None:
        try:
            await self.connection.send.Browser.cancelDownload(params={"guid": guid, "browserContextId": self.context_id})
        except PROTOCOL_ERRORS:
            pass

    def download_progress(self, params: dict[str, Any]) -> None:
        found = self._downloads.get(params["guid"])
        if found is None or params.get("state") == "inProgress":
            return
        record, saving = self._downloads.pop(params["guid"])
        if saving.done():
            return
        if params.get("state") == "canceled":
            record.error = record.error or "the download was canceled"
        else:
            try:
                target, record.size = store(Path(self._staging) / params["guid"], self.downloads_dir, record.name,
                                            self._reserved_names)
                record.path = str(target)
            except OSError as error:
                record.error = str(error)
        saving.set_result(None)

    # the network of every session (routes.py) -------------------------------------------------
    def session_setup(self, session_id: str, *, worker: bool = False, routed: bool = True) -> list[Awaitable[Any]]:
        return self.network.session_setup(session_id, worker=worker, routed=routed)

    def _page_sessions(self) -> list[str]:
        return [session for tab in self.tabs if not tab.closed for session in tab.sessions]

    @property
    def network_conditions(self) -> NetworkConditions:
        return self.network.conditions

    @property
    def routes(self) -> list[RouteRule]:
        return self.network.routes

    async def set_network_conditions(self, conditions: NetworkConditions) -> None:
        await self.network.set_conditions(conditions)

    async def add_route(self, rule: RouteRule) -> None:
        await self.network.add_route(rule)

    async def remove_routes(self, pattern: str | None) -> list[RouteRule]:
        return await self.network.remove_routes(pattern)

    # cookies and storage ----------------------------------------------------------------------
    async def cookies(self) -> list[Cookie]:
        async with guarded("Reading cookies", 30):
            raw = (await self.connection.send.Storage.getCookies(params={"browserContextId": self.context_id}))["cookies"]
        return [Cookie(c["name"], c["value"], c["domain"], c["path"], -1 if c.get("session") else c["expires"],
                       c["httpOnly"], c["secure"], c.get("sameSite", "Lax")) for c in raw]  # type: ignore[arg-type]

    async def set_cookie(self, cookie: Cookie) -> None:
        async with guarded(f"Setting cookie {cookie.name}", 30):
            await self._set_cookies([_cookie_param(cookie)])

    async def _set_cookies(self, cookies: list[dict[str, Any]]) -> None:
        if cookies:
            await self.connection.send.Storage.setCookies(params={"cookies": cookies, "browserContextId": self.context_id})  # type: ignore[typeddict-item]

    async def delete_cookies(self, *, name: str | None = None, domain: str | None = None, path: str | None = None) -> None:
        async with guarded("Deleting cookies", 30):
            kept = [c for c in await self.cookies() if not ((name is None or c.name == name) and
                                                            (domain is None or c.domain == domain) and
                                                            (path is None or c.path == path))]
            await self.connection.send.Storage.clearCookies(params={"browserContextId": self.context_id})
            await self._set_cookies([_cookie_param(c) for c in kept])

    async def storage_state(self) -> dict[str, Any]:
        cookies = [{"name": c.name, "value": c.value, "domain": c.domain, "path": c.path, "expires": c.expires,
                    "httpOnly": c.http_only, "secure": c.secure, "sameSite": c.same_site} for c in await self.cookies()]
        origins = []
        for origin in sorted(self._origins):
            items = await self._on_origin(origin, _READ_STORAGE, None, 30)
            if items:
                origins.append({"origin": origin, "localStorage": items})
        return {"cookies": cookies, "origins": origins}

    async def set_storage_state(self, state: dict[str, Any], *, timeout: float) -> None:
        try:
            async with asyncio.timeout(timeout):
                async with guarded("Loading the storage state", timeout):
                    await self.connection.send.Storage.clearCookies(params={"browserContextId": self.context_id})
                    await self._set_cookies([_cookie_param(Cookie(
                        c["name"], c["value"], c["domain"], c.get("path", "/"), c.get("expires", -1),
                        c.get("httpOnly", False), c.get("secure", False), c.get("sameSite", "Lax")))
                        for c in state.get("cookies", [])])
                for entry in state.get("origins", []):
                    await self._on_origin(entry["origin"], _WRITE_STORAGE, entry.get("localStorage", []), timeout)
                    self.note_origin(entry["origin"])
        except TimeoutError:
            raise ActionTimeout(f"Loading the storage state did not finish within {timeout:g} s.",
                                "Try again with a larger timeout.") from None

    async def _on_origin(self, origin: str, script: str, arg: Any, timeout: float) -> Any:
        """Run ``script`` in a document of ``origin``: an open tab's frame, or else a hidden page whose
        requests are answered here (nothing reaches the site) so that the origin's storage is reachable."""
        for tab in self.tabs:
            for state in tab.frame_tree.frames.values():
                if tab.frame_tree.origin_of(state.frame_id) == origin and state.context_id is not None:
                    return await tab.frame_tree.evaluate(state, script, *([arg] if arg is not None else []), timeout=timeout)
        send = self.connection.send
        async with self._create_lock:
            self._scratch = asyncio.get_running_loop().create_future()
            created = await send.Target.createTarget(params={"url": "about:blank", "browserContextId": self.context_id,
                                                             "background": True})
            session = await asyncio.wait_for(self._scratch, timeout)
        stops = [self.connection.on("Fetch.requestPaused", session, lambda p: asyncio.ensure_future(send.Fetch.fulfillRequest(
            params={"requestId": p["requestId"], "responseCode": 200,
                    "responseHeaders": [{"name": "Content-Type", "value": "text/html"}],
                    "body": base64.b64encode(b"<html></html>").decode()}, session_id=session)))]
        loaded = asyncio.Event()
        stops.append(self.connection.on("Page.loadEventFired", session, lambda _: loaded.set()))
        try:
            await send.Fetch.enable(params={"patterns": [{"urlPattern": "*"}]}, session_id=session)
            await send.Page.enable(session_id=session)
            await send.Runtime.runIfWaitingForDebugger(session_id=session)
            await send.Page.navigate(params={"url": origin.rstrip("/") + "/"}, session_id=session)
            await asyncio.wait_for(loaded.wait(), timeout)
            expression = f"({script})({'' if arg is None else __import__('json').dumps(arg)})"
            reply = await send.Runtime.evaluate(params={"expression": expression, "returnByValue": True}, session_id=session)
            return reply["result"].get("value")
        finally:
            for stop in stops:
                stop()
            try:
                await send.Target.closeTarget(params={"targetId": created["targetId"]})
            except PROTOCOL_ERRORS:
                pass


def _cookie_param(cookie: Cookie) -> dict[str, Any]:
    param: dict[str, Any] = {"name": cookie.name, "value": cookie.value, "domain": cookie.domain, "path": cookie.path,
                             "httpOnly": cookie.http_only, "secure": cookie.secure, "sameSite": cookie.same_site}
    if cookie.expires is not None and cookie.expires >= 0:
        param["expires"] = cookie.expires
    return param
