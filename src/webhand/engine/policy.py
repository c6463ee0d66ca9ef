"""Origin policy, the parts every driver shares: the refusal log, and why a request was refused.

The rules themselves are ``webhand/security/origins.py``. Each driver enforces them inside the browser
(``engine/pw/policy.py`` with Playwright's routes, ``engine/cdp/policy.py`` with ``Fetch``), and
every context with a policy also sends all its traffic through ``PolicyProxy``
(``engine/policy_proxy.py``), which holds on the channels the browser layer cannot see. Both
layers write to the context's ``RefusalLog``; ``refusal(url)`` gives the rule behind a failed
request, so replies and errors name it. A navigation's own checks (before it starts, and the
refusal behind its failure) are written once here, for every driver's tab.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from webhand.engine.policy_proxy import REFUSED_HEADER
from webhand.engine.driver import RouteRule
from webhand.errors import PolicyRefused
from webhand.security.host_names import InvalidHost, normalize_host
from webhand.security.origins import DEFAULT_PORTS, OriginRules

#: How far back a refusal of the same connection counts as the same refusal.
_SAME_REFUSAL_WINDOW = 10

POLICY_HINT = ("The origin policy of this webhand is set by its configuration (allowed_origins, blocked_origins, "
               "allow_file_urls); stay on allowed sites, or ask the user to change it.")


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

    def led_to(self, count: int) -> str | None:
        """The newest refusal logged after the ``count``-th, said as where a navigation led: what
        a navigation failed on when the refused request was not its own URL (a redirect hop)."""
        later = self.since(count)
        return f"it led to {later[-1][1]}, {later[-1][2]}" if later else None

    def since(self, count: int) -> list[tuple[str, str, str]]:
        new = min(self.count - count, len(self.entries))
        return list(self.entries)[-new:] if new > 0 else []


class OriginPolicy(OriginRules):
    def __init__(self, allowed: list[str], blocked: list[str], allow_file_urls: bool,
                 allow_internal_pages: bool = False) -> None:
        super().__init__(allowed, blocked, allow_file_urls, allow_internal_pages)
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

    def redirect_refusal(self, context: Any, method: str, url: str, status: int, headers: dict[str, str]) -> str | None:
        """Why a redirect response must be refused (its Location is a refused origin), logged in the
        context's refusal log; None for any other response."""
        if not 300 <= status < 400 or "location" not in headers:
            return None
        target = urljoin(url, headers["location"])
        reason = self.check(target)
        if reason:
            self._remember(url, f"its redirect to {target} was {reason}")
            self._remember(target, reason)
            self.log_for(context).add(method, url, f"its redirect to {target} was {reason}")
        return reason

    def _remember(self, url: str, reason: str) -> None:
        self._refused_redirects[url] = reason
        while len(self._refused_redirects) > 200:
            self._refused_redirects.popitem(last=False)


def refused_navigation(url: str, reason: str) -> PolicyRefused:
    """The error of a navigation the origin policy refused, naming why."""
    return PolicyRefused(f"Navigation to {url} was refused: {reason}.", POLICY_HINT)


def before_navigation(policy: OriginPolicy | None, url: str, refusals: RefusalLog | None) -> int:
    """Refuse ``url`` before anything loads when the policy does; else the refusal log's count as
    the navigation begins (``navigation_refusal`` looks at what was refused after it)."""
    reason = policy.check_navigation(url) if policy else None
    if reason:
        raise refused_navigation(url, reason)
    return refusals.count if refusals is not None else 0


def navigation_refusal(policy: OriginPolicy | None, url: str, error_text: str, refusals: RefusalLog | None,
                       refusals_before: int) -> PolicyRefused | None:
    """The policy refusal behind a failed navigation (its URL, or a redirect it was refused), if
    that is what it was; ``refusals_before``: what ``before_navigation`` returned."""
    if policy is None or "ERR_BLOCKED_BY_CLIENT" not in error_text:
        return None
    # or what it ran into on its way (a redirect to webhand's own endpoint)
    reason = policy.refusal(url) or (refusals.led_to(refusals_before) if refusals is not None else None)
    return refused_navigation(url, reason) if reason else None


def _endpoint(url: str) -> tuple[str, int | None]:
    """Host and port of a URL or of a bare ``host:port``, normalized, to compare connections."""
    parts = urlsplit(url if "://" in url else "//" + url)
    try:
        scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
        return normalize_host(parts.hostname or ""), parts.port or DEFAULT_PORTS.get(scheme)
    except (InvalidHost, ValueError):
        return url, None


def refused_rewrite(policy: OriginRules | None, rule: RouteRule) -> PolicyRefused | None:
    """The error for a route that would send requests to a URL the policy refuses (webhand's own
    endpoints included); None when it may, or changes no URL."""
    reason = policy.check(rule.url) if policy is not None and rule.url else None
    return PolicyRefused(f"The route cannot send requests to {rule.url}: {reason}.", POLICY_HINT) \
        if reason else None


def rewrite_refusal(policy: OriginRules | None, refusals: RefusalLog | None, method: str, url: str,
                    rewritten: str) -> str | None:
    """Why a request a route rewrote to ``rewritten`` must fail (logged for its context); None when
    it may go. Asked at the moment the request is sent on: the browser does not pause it again."""
    if policy is None or rewritten == url:
        return None
    reason = policy.check(rewritten)
    if reason and refusals is not None:
        refusals.add(method, rewritten, f"a route rewrote {url} to it; {reason}")
    return reason


@dataclass(frozen=True)
class RouteRewrite:
    """What a ``continue`` route changes in a request, in each driver's own command: None leaves
    that part as the request has it."""

    url: str | None
    method: str | None
    headers: dict[str, str] | None  # the request's headers with the route's set over them
    post_data: str | None

    def url_and_method(self) -> dict[str, str]:
        """The new URL and method as CDP's ``Fetch.continueRequest`` and BiDi's
        ``network.continueRequest`` both name them (``url``, ``method``), those that change."""
        return {name: value for name, value in (("url", self.url), ("method", self.method)) if value}


def route_rewrite(rule: RouteRule, policy: OriginRules | None, refusals: RefusalLog | None, method: str, url: str,
                  headers: dict[str, str]) -> RouteRewrite | None:
    """The changes a ``continue`` route makes to a request (``method url`` with ``headers``), or
    None when the policy refuses the URL it rewrites to (``rewrite_refusal``: logged as any other)."""
    rewritten = rule.rewritten_url(url)
    if rewrite_refusal(policy, refusals, method, url, rewritten):
        return None
    return RouteRewrite(rewritten if rewritten != url else None, rule.method,
                        rule.request_headers(headers) if rule.headers else None, rule.post_data)
