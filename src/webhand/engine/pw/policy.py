"""Origin policy: which URLs the browser may load, enforced inside the browser.

Rules come from Settings (``allowed_origins``, ``blocked_origins``, ``allow_file_urls``). A rule
is ``scheme://host[:port]``, ``host[:port]`` (any scheme) or ``*.domain`` (the domain and its
subdomains), optionally with a scheme. Two layers enforce them:

- a context-level route checks every request before it is sent: navigations, subresources,
  and the pages of new tabs;
- Playwright does not route the hops of a redirect, so each page also gets a CDP Fetch
  interception at the *response* stage that refuses a 3xx whose Location is refused.

A refused request fails with ERR_BLOCKED_BY_CLIENT; ``refusal(url)`` gives the rule that refused
it, so replies and errors can name it.
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

log = logging.getLogger("webhand.policy")

_ALWAYS = ("data", "blob", "about", "chrome-error", "devtools", "chrome-extension")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


class _Rule:
    def __init__(self, text: str) -> None:
        self.text = text.strip()
        raw = self.text.lower().rstrip("/")
        self.scheme, _, rest = raw.rpartition("://")
        host_port = rest.split("/", 1)[0]
        host, _, port = host_port.rpartition(":") if host_port.count(":") == 1 else (host_port, "", "")
        self.wildcard = host.startswith("*.")
        self.host = host[2:] if self.wildcard else host
        self.port = int(port) if port.isdigit() else (_DEFAULT_PORTS.get(self.scheme) if self.scheme else None)

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        if self.scheme and self.scheme != scheme:
            return False
        if self.port is not None and self.port != port:
            return False
        return host == self.host or (self.wildcard and host.endswith("." + self.host))


class RefusalLog:
    """The requests one browser context was refused, so an action can name those it caused, even
    in a tab it opened (whose first request is refused before webhand sees the tab)."""

    def __init__(self) -> None:
        self.entries: deque[tuple[str, str, str]] = deque(maxlen=100)  # method, url, reason
        self.count = 0

    def add(self, method: str, url: str, reason: str) -> None:
        self.entries.append((method, url, reason))
        self.count += 1

    def since(self, count: int) -> list[tuple[str, str, str]]:
        new = min(self.count - count, len(self.entries))
        return list(self.entries)[-new:] if new > 0 else []


class OriginPolicy:
    def __init__(self, allowed: list[str], blocked: list[str], allow_file_urls: bool) -> None:
        self.allowed = [_Rule(r) for r in allowed if r.strip()]
        self.blocked = [_Rule(r) for r in blocked if r.strip()]
        self.allow_file_urls = allow_file_urls
        self._refused_redirects: OrderedDict[str, str] = OrderedDict()
        self._logs: weakref.WeakKeyDictionary[Any, RefusalLog] = weakref.WeakKeyDictionary()

    def log_for(self, context: Any) -> RefusalLog:
        """The refusal log of one browser context (sessions never see each other's)."""
        log = self._logs.get(context)
        if log is None:
            log = self._logs[context] = RefusalLog()
        return log

    @property
    def active(self) -> bool:
        """Whether any origin rule is set; without one no request is intercepted (no cost)."""
        return bool(self.allowed or self.blocked)

    def check(self, url: str) -> str | None:
        """Why ``url`` may not load, naming the rule; None when it may."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme == "file":
            return None if self.allow_file_urls else "file:// URLs are refused (allow_file_urls is off)"
        if scheme in _ALWAYS or not scheme:
            return None
        host = (parts.hostname or "").lower()
        port = parts.port or _DEFAULT_PORTS.get(scheme)
        for rule in self.blocked:
            if rule.matches(scheme, host, port):
                return f"refused by the blocked_origins rule '{rule.text}'"
        if self.allowed and not any(rule.matches(scheme, host, port) for rule in self.allowed):
            return "refused because its origin is not in allowed_origins (" + ", ".join(r.text for r in self.allowed) + ")"
        return None

    def refusal(self, url: str) -> str | None:
        """Why a request to ``url`` was refused: its own origin, or a redirect it was refused."""
        return self._refused_redirects.get(url) or self.check(url)

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
