"""Requests Firefox pauses before they are sent (``network.addIntercept``, phase
``beforeRequestSent``), for the origin policy's request layer (policy.py) and the routes
(browser_route): one intercept for the whole browser, and one decision per paused request.

Firefox 153 takes an intercept for given top-level browsing contexts or for all (its
``userContexts`` parameter is accepted and ignored): a tab's first request, a popup's, a frame's
and a dedicated worker's must all be paused, so the intercept is browser-wide while anything
needs it: an origin policy (every request), a route in any session (every request), or, with
neither, webhand's own endpoints on a loopback address (requests to loopback hosts only:
``origins.OWN_ENDPOINTS``, which no page may reach). Each paused request is asked about in
order: the policy first (``network.failRequest``), then the routes of the session whose tab made
it (the last one added that matches wins, as in Playwright): ``network.provideResponse`` for a
mock, ``network.failRequest`` to block, ``network.continueRequest`` with the changes of a
``continue`` route, whose new URL the policy is asked about first (Firefox does not pause the
rewritten request again). Everything else goes on untouched.

A request failed here is named as Chromium names it (net::ERR_BLOCKED_BY_CLIENT) in the
``network.fetchError`` the tabs hear (``failure_text``), so replies read the same on both browsers.
A refused document of a frame, or a popup's first, is answered instead with a page that says so
(``refusal_page``): Chromium shows its "is blocked" error page there, which the snapshot reads,
while a frame or popup whose request Firefox fails stays empty (about:blank), the refusal unsaid.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import html
import logging
from collections import OrderedDict
from collections.abc import Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webhand.engine.bidi.connection import PROTOCOL_ERRORS, BidiConnection, guarded
from webhand.engine.driver import RouteRule
from webhand.engine.net_errors import FIREFOX_CODES
from webhand.engine.policy import refused_rewrite, route_rewrite
from webhand.engine.policy_proxy import REFUSED_HEADER
from webhand.engine.url_glob import compiled
from webhand.security.origins import OWN_ENDPOINTS

log = logging.getLogger("webhand.policy")

if TYPE_CHECKING:
    from webhand.engine.bidi.policy import BidiPolicy

#: URL patterns of loopback hosts (``network.addIntercept``'s ``urlPatterns``): what could reach
#: webhand's own endpoints when nothing else is paused.
LOOPBACK_PATTERNS = [{"type": "pattern", "protocol": scheme, "hostname": host}
                     for scheme in ("http", "https") for host in ("127.0.0.1", "localhost", "[::1]")]
_FAILED_KEPT = 500
#: Firefox's error names for requests that were cancelled, not refused (a navigation away, the page's abort()).
_CANCELLED = ("NS_BINDING_ABORTED", "NS_ERROR_ABORT")


class Interception:
    """The browser's one intercept and what decides each paused request. ``routes_of`` gives the
    routes of the session whose browsing context made a request (None: no session of ours, e.g. a
    service worker's request, which routes never see, as in Playwright); ``owner_of`` the context
    whose refusal log a refusal is written to; ``shows_refusal`` whether a refused request is
    answered with a page saying so (a frame's document, a popup's first) rather than failed."""

    def __init__(self, connection: BidiConnection, policy: BidiPolicy | None,
                 owner_of: Callable[[str | None], Any],
                 shows_refusal: Callable[[dict[str, Any]], bool] = lambda params: False) -> None:
        self._connection = connection
        self._policy = policy
        self._owner_of = owner_of
        self._shows_refusal = shows_refusal
        self._intercept: str | None = None
        self._ours: set[str] = set()  # every intercept installed here: a request one paused is decided after it goes
        self._patterns: list[dict[str, str]] | None = None  # the installed intercept's (None: every URL)
        self._failed: OrderedDict[str, None] = OrderedDict()  # request ids failed here
        self._lock = asyncio.Lock()

    # which requests are paused ----------------------------------------------------------------------
    def _wanted(self, routed: bool) -> tuple[bool, list[dict[str, str]] | None]:
        """(whether to intercept, its URL patterns: None for every request)."""
        if routed or (self._policy is not None and self._policy.active):
            return True, None
        return bool(OWN_ENDPOINTS and self._policy is not None), LOOPBACK_PATTERNS

    async def update(self, routed: bool) -> None:
        """Install, change or remove the intercept for what is needed now; ``routed``: a session has routes."""
        async with self._lock:
            wanted, patterns = self._wanted(routed)
            if self._intercept is not None and (not wanted or patterns != self._patterns):
                old, self._intercept = self._intercept, None
                with contextlib.suppress(*PROTOCOL_ERRORS):
                    await self._connection.send("network.removeIntercept", {"intercept": old})
            if wanted and self._intercept is None:
                params: dict[str, Any] = {"phases": ["beforeRequestSent"]}
                if patterns is not None:
                    params["urlPatterns"] = patterns
                async with guarded("Pausing the browser's requests for the origin policy and routes", 30):
                    self._intercept = (await self._connection.send("network.addIntercept", params))["intercept"]
                self._ours.add(self._intercept)
                self._patterns = patterns

    # a paused request ---------------------------------------------------------------------------------
    def request_sent(self, params: dict[str, Any]) -> None:
        """Every ``network.beforeRequestSent``: a paused one is decided (it waits until it is)."""
        if params.get("isBlocked") and self._ours.intersection(params.get("intercepts") or []):
            asyncio.ensure_future(self._decide(params))

    async def _decide(self, params: dict[str, Any]) -> None:
        request = params["request"]
        request_id = request["request"]
        owner = self._owner_of(params.get("context"))
        try:
            if self._policy is not None and self._policy.refuses(owner, params):
                reason = self._policy.refusal(request["url"]) if self._shows_refusal(params) else None
                if reason:
                    await self._connection.send("network.provideResponse",
                                                {"request": request_id, **refusal_page(request["url"], reason)})
                else:
                    await self._fail(request_id)
                return
            rule = owner.route_for(request["url"]) if owner is not None else None
            if rule is None:
                await self._connection.send("network.continueRequest", {"request": request_id})
            elif _is_preflight(request):
                # The browser's CORS check of a routed cross-origin request: let it through, as
                # Playwright does, so that the mock (not the preflight) is what the page gets.
                await self._connection.send("network.provideResponse", {"request": request_id, **_preflight_answer(request)})
            elif rule.action == "block":
                rule.hits += 1
                await self._fail(request_id)
            elif rule.action == "continue":
                rule.hits += 1
                changed = self._rewritten(owner, request, rule)
                if changed is None:
                    await self._fail(request_id)
                else:
                    await self._connection.send("network.continueRequest", {"request": request_id, **changed})
            else:
                rule.hits += 1
                await self._connection.send("network.provideResponse", {"request": request_id, **_answer(rule)})
        except PROTOCOL_ERRORS:
            pass  # the page closed, or the request was cancelled meanwhile
        except Exception:  # a bug here must not leave the request paused, nor let it through
            log.exception("Deciding on a paused request failed; the request is failed")
            with contextlib.suppress(*PROTOCOL_ERRORS):
                await self._fail(request_id)

    async def _fail(self, request_id: str) -> None:
        self._failed[request_id] = None
        while len(self._failed) > _FAILED_KEPT:
            self._failed.popitem(last=False)
        await self._connection.send("network.failRequest", {"request": request_id})

    def _rewritten(self, owner: Any, request: dict[str, Any], rule: RouteRule) -> dict[str, Any] | None:
        """``network.continueRequest``'s changes for a ``continue`` route, or None when the policy
        refuses the URL it rewrites to (logged as any other refusal)."""
        refusals = self._policy.log_for(owner) if self._policy is not None and owner is not None else None
        original = {h["name"]: h["value"].get("value", "") for h in request.get("headers") or []}
        rewrite = route_rewrite(rule, self._policy, refusals, request["method"], request["url"], original)
        if rewrite is None:
            return None
        changed: dict[str, Any] = rewrite.url_and_method()
        if rewrite.headers is not None:
            changed["headers"] = _headers(rewrite.headers)
        if rewrite.post_data is not None:
            changed["body"] = {"type": "string", "value": rewrite.post_data}
        return changed

    def failure_text(self, params: dict[str, Any]) -> str:
        """A ``network.fetchError``'s error in Chromium's words: a request failed here is
        net::ERR_BLOCKED_BY_CLIENT, a cancelled one net::ERR_ABORTED, and Firefox's names of
        network errors become the net::ERR_* codes replies and tests know."""
        text = str(params.get("errorText") or "failed")
        request_id = (params.get("request") or {}).get("request", "")
        if request_id in self._failed:
            self._failed.pop(request_id, None)
            return "net::ERR_BLOCKED_BY_CLIENT"
        if self._policy is not None:
            self._policy.forget(request_id)
        if any(name in text for name in _CANCELLED):
            return "net::ERR_ABORTED"
        code = next((code for name, code in FIREFOX_CODES.items() if name in text), None)
        return f"net::{code}" if code else text

    def check_route(self, rule: RouteRule) -> None:
        """Refuse a route now that could never work: a malformed glob, or a rewrite to a refused URL."""
        compiled(rule.pattern)
        refused = refused_rewrite(self._policy, rule)
        if refused:
            raise refused


def as_websocket(request: dict[str, Any]) -> None:
    """Name a WebSocket's handshake as the page opened it: Firefox reports it as ``GET http://…``;
    replies, the refusal log and the network log say ``WebSocket ws://…``, as on Chromium."""
    if request.get("method") == "WebSocket" or not any(
            str(h.get("name", "")).lower() == "sec-websocket-key" for h in request.get("headers") or []):
        return
    url = str(request.get("url", ""))
    request["method"] = "WebSocket"
    request["url"] = "ws" + url[4:] if url.startswith("http") else url


def routes_match(routes: list[RouteRule], url: str) -> RouteRule | None:
    """The route that answers ``url``: the last one added that matches."""
    return next((r for r in reversed(routes) if compiled(r.pattern).match(url)), None)


def _headers(headers: dict[str, str]) -> list[dict[str, Any]]:
    return [{"name": name, "value": {"type": "string", "value": value}} for name, value in headers.items()]


def _answer(rule: RouteRule) -> dict[str, Any]:
    body = rule.body.encode()
    headers = dict(rule.headers)
    if body and "content-length" not in {name.lower() for name in headers}:  # as Playwright's fulfill adds it
        headers["content-length"] = str(len(body))
    return {"statusCode": rule.status, "reasonPhrase": _phrase(rule.status), "headers": _headers(headers),
            "body": {"type": "base64", "value": base64.b64encode(body).decode()}}


def refusal_page(url: str, reason: str) -> dict[str, Any]:
    """``network.provideResponse``'s answer for a refused document: a 403 page titled as Chromium's
    blocked page ("127.0.0.1 is blocked") that gives the refusal's reason, marked with the policy
    proxy's header so that the tab names it as a refusal (``OriginPolicy.refused_response``)."""
    host = html.escape(urlsplit(url).hostname or url)
    body = (f"<!doctype html><title>{host} is blocked</title><h1>{host} is blocked</h1>"
            f"<p>webhand did not load {html.escape(url)}: {html.escape(reason)}.</p>").encode()
    # Sandboxed with no script: the page is shown at the refused URL, but its origin is an opaque
    # one of its own, never the refused server's (its storage, its cookies).
    headers = {"content-type": "text/html; charset=utf-8", "content-length": str(len(body)), REFUSED_HEADER: "refused",
               "cache-control": "no-store", "content-security-policy": "sandbox; default-src 'none'"}
    return {"statusCode": 403, "reasonPhrase": _phrase(403), "headers": _headers(headers),
            "body": {"type": "base64", "value": base64.b64encode(body).decode()}}


def _is_preflight(request: dict[str, Any]) -> bool:
    return request.get("method") == "OPTIONS" and any(
        h["name"].lower() == "access-control-request-method" for h in request.get("headers") or [])


def _preflight_answer(request: dict[str, Any]) -> dict[str, Any]:
    asked = {h["name"].lower(): h["value"].get("value", "") for h in request.get("headers") or []}
    headers = {"Access-Control-Allow-Origin": asked.get("origin", "*"),
               "Access-Control-Allow-Methods": asked.get("access-control-request-method", "GET, POST, OPTIONS, DELETE"),
               "Access-Control-Allow-Credentials": "true"}
    if "access-control-request-headers" in asked:
        headers["Access-Control-Allow-Headers"] = asked["access-control-request-headers"]
    return {"statusCode": 204, "reasonPhrase": _phrase(204), "headers": _headers(headers),
            "body": {"type": "base64", "value": ""}}


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
