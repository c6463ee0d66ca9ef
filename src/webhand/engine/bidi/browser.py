"""The Firefox driver's browser and contexts: one BiDi session per Firefox, one user context
(``browser.createUserContext``) per webhand session, tabs as its top-level browsing contexts.

Events are subscribed once for the whole browser and routed to the tab whose browsing context
(or a frame of it) they name.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from webhand.engine.bidi import page_requests, storage_state
from webhand.engine.bidi.connection import PROTOCOL_ERRORS, BidiConnection, BidiError, guarded
from webhand.engine.bidi.files import BidiFileChooser, SessionDownloads
from webhand.engine.bidi.firefox import FirefoxProcess
from webhand.engine.bidi.interception import Interception, as_websocket
from webhand.engine.bidi.network import SessionNetwork
from webhand.engine.bidi.policy import BidiPolicy
from webhand.engine.bidi.realms import WorkerScripts
from webhand.engine.bidi.tab import BidiTab
from webhand.engine.capped import answers_within, dropped_within
from webhand.engine.launch.chrome import PROFILE_CLOSE_GRACE_SECONDS
from webhand.engine.driver import (CLOSE_TIMEOUT_SECONDS, BrowserExtension, Cookie, NetworkConditions, RequestDetail,
                                   RouteRule, TabEvents)
from webhand.engine.network import RequestsInFull
from webhand.engine.policy import RefusalLog
from webhand.engine.policy_proxy import PolicyProxy
from webhand.errors import NotOnFirefox, WebhandError

#: The events every tab listens to (routed by browsing context).
EVENTS = ["log.entryAdded", "browsingContext.userPromptOpened", "browsingContext.navigationStarted",
          "browsingContext.navigationCommitted",
          "browsingContext.domContentLoaded", "browsingContext.load", "browsingContext.contextCreated",
          "browsingContext.contextDestroyed",
          "network.beforeRequestSent", "network.responseStarted", "network.responseCompleted",
          "network.fetchError"]
#: Events newer than some Firefox releases: each is subscribed on its own, and a Firefox that does not
#: know one goes without it (a URL the page changes with history.pushState is then learnt later).
OPTIONAL_EVENTS = ["browsingContext.fragmentNavigated", "browsingContext.historyUpdated",
                   "browsingContext.downloadWillBegin", "browsingContext.downloadEnd", "input.fileDialogOpened",
                   "script.realmCreated", "script.realmDestroyed"]
#: The user context of a Firefox's own profile: the one a named profile's session drives.
DEFAULT_USER_CONTEXT = "default"
_SAME_SITE = {"strict": "Strict", "lax": "Lax", "none": "None"}


class BidiContext:
    """One webhand session's cookies, storage and tabs: a Firefox user context."""

    def __init__(self, browser: "BidiBrowser", user_context: str, events: TabEvents, *, width: int, height: int,
                 downloads_dir: str | None, proxy: PolicyProxy | None = None, refusals: RefusalLog | None = None) -> None:
        self.browser = browser
        self.connection = browser.connection
        self.user_context = user_context
        self.events = events
        self.width, self.height = width, height
        self.tabs: list[BidiTab] = []
        self.closed = False
        self.origins: set[str] = set()  # of the documents its tabs showed (their localStorage is saved)
        self._request_count = ""  # the preload script that counts the page's requests (page_requests.py)
        self._next_index = 0
        # The origin policy (engine-wide) and this session's refusal log and proxy (policy.py).
        self.policy: BidiPolicy | None = browser.policy
        self.refusals: RefusalLog | None = browser.policy.log_for(self, refusals) if browser.policy is not None else None
        self.proxy = proxy
        self.network = SessionNetwork(self.connection, user_context, browser.interception, browser.routed)
        self.files = SessionDownloads(self.connection, user_context, events,
                                      browser.firefox.scratch_dir if browser.firefox is not None else None)
        self.downloads_dir = Path(downloads_dir) if downloads_dir else None
        self.requests_in_full = RequestsInFull(lambda: [tab.network_log for tab in self.tabs])
        self.workers = browser.workers  # which console messages are a dedicated worker's (realms.py)

    @property
    def downloads_dir(self) -> Path | None:
        return self.files.downloads_dir

    @downloads_dir.setter
    def downloads_dir(self, folder: Path | None) -> None:
        self.files.downloads_dir = folder

    async def start(self) -> None:
        """The session's download folder, its bodies kept (when the network tools are served), and the
        browser's intercept for what this session adds to it (webhand's own endpoints)."""
        await self.files.start()
        self._request_count = await page_requests.install(self.connection, self.user_context)
        if self.browser.collect_bodies:
            await self.network.collect_bodies()
        await self.browser.interception.update(self.browser.routed())

    def route_for(self, url: str) -> RouteRule | None:
        return self.network.route_for(url)

    def file_dialog_opened(self, params: dict[str, Any], tab: BidiTab) -> None:
        if self.events.file_chooser:
            self.events.file_chooser(BidiFileChooser(self.connection, tab.index, params))

    def tab_of(self, context_id: str) -> BidiTab | None:
        return next((tab for tab in self.tabs if tab.owns(context_id)), None)

    def tab_closed(self, tab: BidiTab) -> None:
        if tab in self.tabs:
            self.tabs.remove(tab)

    async def new_tab(self) -> BidiTab:
        # A window of its own, as each tab of a headless Chromium renders on its own: Firefox ticks only
        # the selected tab of a window, so a tab behind another session's (or the warm reserve's) would
        # get no animation frames and timers throttled to 1 s (actions would wait for a frame that never
        # comes). A window also never opens inside a popup's window another session is closing.
        params: dict[str, Any] = {"type": "window", "userContext": self.user_context, "background": False}
        async with guarded("Opening a tab", 30):
            for attempt in range(3):
                try:
                    created = await self.connection.send("browsingContext.create", params)
                    break
                except BidiError as error:
                    # Firefox 153 now and then discards the browsing context it is creating (the new
                    # tab's first document swapped out while it answers): the next attempt succeeds.
                    if "DiscardedBrowsingContext" not in error.message or attempt == 2:
                        raise
        tab = self.tab_of(created["context"]) or self._add_tab(created["context"])
        await tab.set_viewport(self.width, self.height)
        if self.events.tab_opened:
            self.events.tab_opened(tab)
        return tab

    def _add_tab(self, context_id: str) -> BidiTab:
        tab = BidiTab(self, context_id, self._next_index)
        self._next_index += 1
        self.tabs.append(tab)
        return tab

    def context_created(self, params: dict[str, Any]) -> None:
        """A top-level browsing context appeared in this user context. One a page opened (it has an
        opener: ``window.open``, a link with a target) becomes a tab here; ours come from new_tab."""
        parent = self.tab_of(params["parent"]) if params.get("parent") else None
        if parent is not None:  # a frame of one of our tabs: its events (console, prompts) are that tab's
            parent.frame_created(params["context"])
            return
        if params.get("parent") or not params.get("originalOpener") or self.tab_of(params["context"]) or self.closed:
            return
        tab = self._add_tab(params["context"])
        asyncio.ensure_future(self._size_popup(tab))
        if self.events.tab_opened:
            self.events.tab_opened(tab)

    async def _size_popup(self, tab: BidiTab) -> None:
        with contextlib.suppress(WebhandError):
            await tab.set_viewport(self.width, self.height)

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.browser.contexts.pop(self.user_context, None)
        if self.user_context != DEFAULT_USER_CONTEXT:  # the default one (a profile's) cannot be removed
            with contextlib.suppress(WebhandError):
                async with guarded("Closing the session's Firefox user context", CLOSE_TIMEOUT_SECONDS):
                    await self.connection.send("browser.removeUserContext", {"userContext": self.user_context})
        if self._request_count:
            with contextlib.suppress(WebhandError):
                async with guarded("Removing the session's preload script", CLOSE_TIMEOUT_SECONDS):
                    await self.connection.send("script.removePreloadScript", {"script": self._request_count})
        self.tabs.clear()
        self.files.close()
        if self.proxy is not None:
            await self.proxy.close()
        if self.network.routes:
            self.network.routes = []
            with contextlib.suppress(WebhandError):
                await self.browser.interception.update(self.browser.routed())

    # cookies ---------------------------------------------------------------------------------------
    @property
    def _partition(self) -> dict[str, Any]:
        return {"type": "storageKey", "userContext": self.user_context}

    async def cookies(self) -> list[Cookie]:
        async with guarded("Reading cookies", 30):
            found = await self.connection.send("storage.getCookies", {"partition": self._partition})
        return [Cookie(name=c["name"], value=c["value"].get("value", ""), domain=c.get("domain", ""),
                       path=c.get("path", "/"), expires=float(c["expiry"]) if c.get("expiry") else -1,
                       http_only=c.get("httpOnly", False), secure=c.get("secure", False),
                       same_site=_SAME_SITE.get(c.get("sameSite", "lax"), "Lax"))  # type: ignore[arg-type]
                for c in found.get("cookies", [])]

    async def set_cookie(self, cookie: Cookie) -> None:
        wanted: dict[str, Any] = {"name": cookie.name, "value": {"type": "string", "value": cookie.value},
                                  "domain": cookie.domain, "path": cookie.path, "httpOnly": cookie.http_only,
                                  "secure": cookie.secure, "sameSite": cookie.same_site.lower()}
        if cookie.expires >= 0:
            wanted["expiry"] = int(cookie.expires)
        async with guarded("Setting a cookie", 30):
            await self.connection.send("storage.setCookie", {"cookie": wanted, "partition": self._partition})

    async def delete_cookies(self, *, name: str | None = None, domain: str | None = None, path: str | None = None) -> None:
        wanted = {key: value for key, value in (("name", name), ("domain", domain), ("path", path)) if value is not None}
        async with guarded("Deleting cookies", 30):
            await self.connection.send("storage.deleteCookies", {"filter": wanted, "partition": self._partition})

    # the storage state (storage_state.py) ------------------------------------------------------------
    def note_origin(self, url: str) -> None:
        """A document of ``url`` committed in one of the tabs: its origin's localStorage is the session's."""
        origin = storage_state.origin_of(url)
        if origin is not None:
            self.origins.add(origin)

    def frame_of_origin(self, origin: str) -> str | None:
        return next((tab.context_id for tab in self.tabs if storage_state.origin_of(tab.url) == origin), None)

    async def storage_state(self) -> dict[str, Any]:
        return await storage_state.storage_state(self)

    async def set_storage_state(self, state: dict[str, Any], *, timeout: float) -> None:
        await storage_state.set_storage_state(self, state, timeout=timeout)

    # not built on Firefox yet ------------------------------------------------------------------------

    def expecting_tab(self) -> bool:
        return False

    # network (network.py, interception.py) and downloads (files.py) ---------------------------------
    def expecting_download(self) -> bool:
        return self.files.expecting()

    @property
    def network_conditions(self) -> NetworkConditions:
        return self.network.conditions

    @property
    def routes(self) -> list[RouteRule]:
        return self.network.routes

    async def request_detail(self, request_id: int, *, timeout: float) -> RequestDetail:
        return await self.requests_in_full.request_detail(request_id, timeout=timeout)

    async def response_body(self, request_id: int, *, timeout: float) -> bytes:
        return await self.requests_in_full.response_body(request_id, timeout=timeout)

    async def set_network_conditions(self, conditions: NetworkConditions) -> None:
        await self.network.set_conditions(conditions)

    async def add_route(self, rule: RouteRule) -> None:
        await self.network.add_route(rule)

    async def remove_routes(self, pattern: str | None) -> list[RouteRule]:
        return await self.network.remove_routes(pattern)


class BidiBrowser:
    """One Firefox, launched here (``firefox`` set) or reached at a ws:// URL."""

    def __init__(self, connection: BidiConnection, firefox: FirefoxProcess | None, policy: BidiPolicy | None = None,
                 *, collect_bodies: bool = False) -> None:
        self.connection = connection
        self.firefox = firefox
        self.pid = firefox.pid if firefox else None
        self.contexts: dict[str, BidiContext] = {}
        self.policy = policy
        self.collect_bodies = collect_bodies  # the network tools are served: keep bodies (network.py)
        self.installed_extensions: list[BrowserExtension] = []  # by the engine at launch (extensions.py)
        self.interception = Interception(connection, policy, self._owner_of, self._shows_refusal)
        # Every browsing context Firefox reported (frames too): its parent, and its user context.
        self._parents: dict[str, str | None] = {}
        self._popups: set[str] = set()  # the top-level contexts a page opened (window.open, a link's target)
        self.workers = WorkerScripts()
        capabilities = connection.session.get("capabilities", {})
        self.version = f"Firefox/{capabilities.get('browserVersion', '')}"
        self.user_agent = capabilities.get("userAgent", "")

    async def start(self) -> None:
        for event in EVENTS + OPTIONAL_EVENTS:
            self.connection.on(event, lambda params, event=event: self._route(event, params))
        await self.connection.send("session.subscribe", {"events": EVENTS})
        for event in OPTIONAL_EVENTS:
            with contextlib.suppress(BidiError):
                await self.connection.send("session.subscribe", {"events": [event]})

    def routed(self) -> bool:
        """Whether any session has routes (the browser's intercept then pauses every request)."""
        return any(context.network.routes for context in self.contexts.values())

    def _top(self, context_id: str) -> str:
        """The top-level browsing context (the tab) of a frame's, as far as Firefox reported them."""
        seen = 0
        while (parent := self._parents.get(context_id)) and seen < 64:
            context_id, seen = parent, seen + 1
        return context_id

    def _owner_of(self, context_id: str | None) -> "BidiContext | None":
        """The session whose tab (or a frame of it) is ``context_id``."""
        if not context_id:
            return None
        top = self._top(context_id)
        return next((context for context in self.contexts.values() if context.tab_of(top) is not None), None)

    def _shows_refusal(self, params: dict[str, Any]) -> bool:
        """Whether a refused request is answered with a page saying so: a frame's document, or the
        first document of a popup (Chromium shows its blocked page there; a failed one stays blank).
        A tab's own navigation is failed: the navigation's reply names the refusal."""
        context_id = params.get("context") or ""
        if not params.get("navigation") or not context_id:
            return False
        if self._parents.get(context_id):
            return True
        owner = self._owner_of(context_id)
        tab = owner.tab_of(context_id) if owner is not None else None
        return context_id in self._popups and tab is not None and tab.tracker.commits == 0

    def _route(self, event: str, params: dict[str, Any]) -> None:
        if event == "script.realmDestroyed":
            self.workers.destroyed(params)
            for context in self.contexts.values():  # it names no browsing context: each tab checks its page's
                for tab in context.tabs:
                    tab.liveness.realm_destroyed(params.get("realm", ""))
            return
        if event == "script.realmCreated":
            page_owner = self._owner_of(params.get("context"))
            page = page_owner.tab_of(params.get("context", "")) if page_owner is not None else None
            if page is not None and page.context_id == params.get("context"):
                page.liveness.realm_created(params)  # a realm of the tab's main frame (liveness.py)
            worker = self.workers.created(params)
            owner = self._owner_of(worker[0]) if worker else None
            tab = owner.tab_of(self._top(worker[0])) if owner is not None and worker else None
            if tab is not None and worker:
                tab.worker_started(*worker)  # its first messages may have come before its realm
            return
        if event == "browsingContext.contextCreated":
            self._parents[params.get("context", "")] = params.get("parent")
            if params.get("originalOpener") and not params.get("parent"):
                self._popups.add(params.get("context", ""))
            owner = self.contexts.get(params.get("userContext", ""))
            if owner is not None:
                owner.context_created(params)
            return
        if event.startswith("network."):
            as_websocket(params.get("request") or {})
        if event == "network.beforeRequestSent":
            self.interception.request_sent(params)  # a paused request waits for this, whoever made it
        elif event == "network.fetchError":
            params["errorText"] = self.interception.failure_text(params)
        context_id = params.get("context") or (params.get("source") or {}).get("context")
        if not context_id:
            return
        if event == "browsingContext.contextDestroyed":
            self._parents.pop(context_id, None)
            self._popups.discard(context_id)
        elif event.startswith("network."):
            context_id = self._top(context_id)  # a frame's requests are its tab's (the network log, settling)
        for context in self.contexts.values():
            tab = context.tab_of(context_id)
            if tab is not None:
                if event == "browsingContext.contextDestroyed" and context_id == tab.context_id:
                    tab._closed = True
                    context.tab_closed(tab)
                elif event == "browsingContext.contextDestroyed":
                    tab._frame_contexts.discard(context_id)
                elif event in ("browsingContext.downloadWillBegin", "browsingContext.downloadEnd"):
                    context.files.began(params, tab.index) if event.endswith("Begin") else context.files.ended(params)
                elif event == "input.fileDialogOpened":
                    context.file_dialog_opened(params, tab)
                else:
                    tab.on_event(event, params)
                return

    @property
    def alive(self) -> bool:
        return not self.connection.closed and (self.firefox is None or self.firefox.alive)

    async def new_context(self, *, width: int, height: int, downloads_dir: str | None, events: TabEvents) -> BidiContext:
        params: dict[str, Any] = {}
        proxy = refusals = None
        if self.policy is not None and self.policy.active:
            # As on Chromium: all of the session's traffic, loopback included, goes through its own
            # policy proxy (the profile lets loopback through a proxy: policy.POLICY_PREFERENCES).
            refusals = RefusalLog()
            # A refusal closes the connection: what the proxy refuses is what BiDi does not pause (a
            # service or shared worker's request), and the page must see it fail, as on Chromium.
            proxy = PolicyProxy(self.policy, self.policy.proxy_refused(refusals), refuse_http_with_403=False)
            address = (await proxy.start()).removeprefix("http://")
            params["proxy"] = {"proxyType": "manual", "httpProxy": address, "sslProxy": address}
        try:
            async with guarded("Creating a Firefox user context", 30):
                created = await self.connection.send("browser.createUserContext", params)
            context = BidiContext(self, created["userContext"], events, width=width, height=height,
                                  downloads_dir=downloads_dir, proxy=proxy, refusals=refusals)
        except BaseException:
            if proxy is not None:
                await proxy.close()
            raise
        self.contexts[context.user_context] = context
        try:
            await context.start()
        except BaseException:
            await context.close()
            raise
        return context

    async def existing_context(self, *, events: TabEvents, width: int = 1280, height: int = 720) -> BidiContext:
        """The browser's own default user context, whose cookies and storage are the profile's (a
        named profile: session/profiles.py), with the tabs it has open. Only on a Firefox webhand
        launched on a kept profile: a user context ``createUserContext`` makes is dropped with its
        data when removed, the default one is written to the profile folder."""
        if self.firefox is None or not self.firefox.keeps_profile:
            raise NotOnFirefox("Driving a Firefox's own default context (other than on a named profile webhand launches)",
                               "Use profile = \"NAME\" (webhand launches Firefox on it), or a fresh session.")
        context = BidiContext(self, DEFAULT_USER_CONTEXT, events, width=width, height=height, downloads_dir=None)
        self.contexts[context.user_context] = context
        try:
            await context.start()
            async with guarded("Listing the Firefox window's tabs", 30):
                tree = await self.connection.send("browsingContext.getTree", {"maxDepth": 0})
            for found in tree.get("contexts", []):
                if found.get("userContext", DEFAULT_USER_CONTEXT) == DEFAULT_USER_CONTEXT and not context.tab_of(found["context"]):
                    await context._add_tab(found["context"]).set_viewport(width, height)
        except BaseException:
            await context.close()
            raise
        return context

    async def ping(self, timeout: float) -> bool:
        return await answers_within(self.connection.send("session.status", {}), timeout)

    def on_disconnected(self, callback: Callable[[], None]) -> None:
        self.connection.on_close.append(callback)

    async def wait_disconnected(self, timeout: float) -> bool:
        return await dropped_within(self.connection, timeout)

    async def extensions(self, timeout: float) -> list[BrowserExtension]:
        """The add-ons webhand installed at launch (extensions.py): BiDi has no way to list them."""
        return list(self.installed_extensions)

    async def close(self) -> None:
        """End the BiDi session and disconnect; a Firefox webhand launched is killed with its group."""
        try:
            if not self.firefox:
                await asyncio.gather(*(context.close() for context in list(self.contexts.values())))
            elif self.firefox.keeps_profile:
                await self._quit_keeping_profile(self.firefox)
            await self.connection.close()
        finally:
            if self.firefox:
                await self.firefox.close()

    async def _quit_keeping_profile(self, firefox: FirefoxProcess) -> None:
        """Let a Firefox on a kept profile quit as a user's quit does (``browser.close``), capped: it
        writes its cookies and storage to the profile on the way. Killed (or sent SIGTERM), it
        loses what it had not written yet, and marks the profile's last start incomplete."""
        with contextlib.suppress(WebhandError, *PROTOCOL_ERRORS, asyncio.TimeoutError):
            await asyncio.wait_for(self.connection.send("browser.close", {}), CLOSE_TIMEOUT_SECONDS)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(firefox.process.wait(), PROFILE_CLOSE_GRACE_SECONDS)

    async def abandon(self) -> None:
        self.connection.abort()
        if self.firefox:
            await self.firefox.close()

    def kill_now(self) -> None:
        if self.firefox:
            self.firefox.kill_now()
