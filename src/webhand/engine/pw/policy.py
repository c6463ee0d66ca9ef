"""Origin policy, the request layer: what Playwright can route, refused inside the browser.

The rules (``webhand/origins.py``) are enforced at two layers. This one sees requests with their
full URL, so its refusals are the ones a reply can name precisely:

- a context-level route checks every request before it is sent: navigations, subresources,
  the pages of new tabs, and the requests of dedicated and service workers;
- Playwright does not route the hops of a redirect, so each page also gets a CDP Fetch
  interception at the *response* stage that refuses a 3xx whose Location is refused.

What this layer cannot see (WebSockets, shared workers, a redirect inside a worker) the network
layer refuses: every context with a policy sends all its traffic through ``PolicyProxy``
(``engine/policy_proxy.py``). A request refused here fails with ERR_BLOCKED_BY_CLIENT, one
refused there with a 403 or a failed tunnel; both are written to the context's ``RefusalLog``,
and ``refusal(url)`` gives the rule behind a failed request, so replies and errors name it.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage
from playwright.async_api import Route

from webhand.engine.policy_proxy import REFUSED_HEADER
from webhand.hosts import InvalidHost, normalize_host
from webhand.origins import DEFAULT_PORTS, OriginRules

log = logging.getLogger("webhand.policy")


#: How far back a refusal of the same connection counts as the same refusal.
_SAME_REFUSAL_WINDOW = 10


class RefusalLog:
    """The requests one browser context was refused, so an action can name those it caused, even
    in a tab it opened (whose first request is refused before webhand sees the tab).

    A WebSocket is refused twice over: the page announces it with its URL, and the proxy refuses
    its tunnel, knowing only host and port. The model is told once, with the URL.
    """

    def __init__(self) -> None:
        self.entries: deque[tuple[str, str, str]] = deque(maxlen=100)  # method, url, reason
        self.count = 0

    def add(self, method: str, url: str, reason: str) -> None:
        recent = list(self.entries)[-_SAME_REFUSAL_WINDOW:]
        endpoint = _endpoint(url)
        if method == "CONNECT" and any(m == "WebSocket" and _endpoint(u) == endpoint for m, u, _ in recent):
            return  # the WebSocket this tunnel was for is already named
        if method == "WebSocket":
            for index in range(len(self.entries) - 1, max(-1, len(self.entries) - 1 - _SAME_REFUSAL_WINDOW), -1):
                if self.entries[index][0] == "CONNECT" and _endpoint(self.entries[index][1]) == endpoint:
                    self.entries[index] = (method, url, reason)  # name the tunnel's WebSocket instead
                    return
        self.entries.append((method, url, reason))
        self.count += 1

    def since(self, count: int) -> list[tuple[str, str, str]]:
        new = min(self.count - count, len(self.entries))
        return list(self.entries)[-new:] if new > 0 else []


class OriginPolicy(OriginRules):
    def __init__(self, allowed: list[str], blocked: list[str], allow_file_urls: bool) -> None:
        super().__init__(allowed, blocked, allow_file_urls)
        self._refused_redirects: OrderedDict[str, str] = OrderedDict()
        self._logs: weakref.WeakKeyDictionary[Any, RefusalLog] = weakref.WeakKeyDictionary()

    def log_for(self, context: Any, refusals: RefusalLog | None = None) -> RefusalLog:
        """The refusal log of one browser context (sessions never see each other's); ``refusals``
        adopts a log made before the context existed (the proxy's, which the context needs first)."""
        found = self._logs.get(context)
        if found is None:
            found = self._logs[context] = refusals if refusals is not None else RefusalLog()
        return found

    def refusal(self, url: str) -> str | None:
        """Why a request to ``url`` was refused: its own origin, a redirect it was refused, or
        what the policy proxy found (the address its host resolves to)."""
        return self._refused_redirects.get(url) or self.check(url)

    def refused_response(self, url: str, headers: dict[str, str]) -> str | None:
        """Why a response is the policy proxy's refusal (a 403 it made up), or None for a real one.
        The header alone proves nothing (a server can send it too): the refusal must be on record."""
        return self.refusal(url) if REFUSED_HEADER in headers else None

    def proxy_refused(self, refusals: RefusalLog) -> Callable[[str, str, str], None]:
        """What the policy proxy of one context calls on a refusal: log it, and remember why."""
        def refused(method: str, url: str, reason: str) -> None:
            refusals.add(method, url, reason)
            if "://" in url:
                self._remember(url, reason)
        return refused

    # enforcement -------------------------------------------------------------------------------
    def router(self, context: Any) -> Callable[[Route], Awaitable[None]]:
        """The context-level route of ``context``: refuse before the request is sent, and log it."""
        log = self.log_for(context)

        async def route(route: Route) -> None:
            try:
                reason = self.check(route.request.url)
                if reason:
                    log.add(route.request.method, route.request.url, reason)
                    await route.abort("blockedbyclient")
                else:
                    await route.fallback()
            except PWError:
                pass  # the page or request went away meanwhile

        return route

    async def guard_redirects(self, page: PWPage) -> None:
        """Refuse redirects to refused origins on this page (see the module docstring)."""
        try:
            session = await page.context.new_cdp_session(page)
            page_context = page.context
            session.on("Fetch.requestPaused", lambda event: asyncio.ensure_future(self._paused(session, page_context, event)))
            await session.send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Response"}]})
        except PWError as error:
            log.debug("redirect guard not installed: %s", error)

    async def _paused(self, session: Any, page_context: Any, event: dict[str, Any]) -> None:
        request_id, status = event["requestId"], event.get("responseStatusCode") or 0
        try:
            if 300 <= status < 400:
                headers = {h["name"].lower(): h["value"] for h in event.get("responseHeaders") or []}
                target = urljoin(event["request"]["url"], headers.get("location", ""))
                reason = self.check(target) if "location" in headers else None
                if reason:
                    self._remember(event["request"]["url"], f"its redirect to {target} was {reason}")
                    self._remember(target, reason)
                    self.log_for(page_context).add(event["request"]["method"], event["request"]["url"],
                                                   f"its redirect to {target} was {reason}")
                    await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
                    return
            await session.send("Fetch.continueRequest", {"requestId": request_id})
        except PWError:
            pass  # the page closed or the request was cancelled

    def _remember(self, url: str, reason: str) -> None:
        self._refused_redirects[url] = reason
        while len(self._refused_redirects) > 200:
            self._refused_redirects.popitem(last=False)


def _endpoint(url: str) -> tuple[str, int | None]:
    """Host and port of a URL or of a bare ``host:port``, normalized, to compare connections."""
    parts = urlsplit(url if "://" in url else "//" + url)
    try:
        scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
        return normalize_host(parts.hostname or ""), parts.port or DEFAULT_PORTS.get(scheme)
    except (InvalidHost, ValueError):
        return url, None
