"""Requests paused by ``Fetch`` on raw CDP, for the origin policy and the routes (browser_route) of
one context: one ``Fetch.enable`` per session with the patterns both need, one listener that asks
the policy first, then the routes (the last one added that matches wins, as in Playwright), and
lets everything else go on.

Patterns: under a policy, every request at both stages (policy.py); with routes only, every request
before it is sent (routes are globs Fetch's own wildcards cannot say, so they are matched here);
with neither, only requests to loopback hosts while webhand listens on one (its dashboard or
MCP server, which no page may reach: ``origins.OWN_ENDPOINTS``), else ``Fetch`` is off. A routed
answer is never paused again at the response stage, and a redirect it gives is a new request,
which the policy sees: a route cannot get around the policy.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection
from webhand.engine.cdp.policy import POLICY_PATTERNS, at_request_stage
from webhand.engine.driver import RouteRule
from webhand.engine.url_glob import compiled
from webhand.security.origins import OWN_ENDPOINT_PATTERNS, OWN_ENDPOINTS

if TYPE_CHECKING:
    from webhand.engine.cdp.policy import CdpPolicy

_ROUTE_PATTERNS = [{"urlPattern": "*", "requestStage": "Request"}]


class Interception:
    def __init__(self, connection: CdpConnection, policy: CdpPolicy | None, owner: Any) -> None:
        self._connection = connection
        self._policy = policy if policy is not None and policy.active else None
        self._rules = policy  # without rules, still refuses webhand's own endpoints
        self._owner = owner  # the context, whose refusal log the policy writes to
        self.routes: list[RouteRule] = []
        self._unrouted: set[str] = set()  # service workers: routes do not see their requests (as in Playwright)

    def patterns(self, session_id: str) -> list[dict[str, str]] | None:
        if self._policy is not None:
            return POLICY_PATTERNS
        if self.routes and session_id not in self._unrouted:
            return _ROUTE_PATTERNS
        return OWN_ENDPOINT_PATTERNS if OWN_ENDPOINTS and self._rules is not None else None

    def setup(self, session_id: str, *, routed: bool = True) -> list[Awaitable[Any]]:
        """The commands that start a new session's interception (none when nothing intercepts); the
        listener is set at once (each session is set up once), so that no paused request goes unanswered."""
        if not routed:
            self._unrouted.add(session_id)
        self._connection.on("Fetch.requestPaused", session_id,
                            lambda event: asyncio.ensure_future(self._paused(session_id, event)))
        patterns = self.patterns(session_id)
        if patterns is None:
            return []
        return [self._connection.send.Fetch.enable(params={"patterns": patterns}, session_id=session_id)]  # type: ignore[typeddict-item]

    def add(self, rule: RouteRule) -> None:
        compiled(rule.pattern)  # a malformed glob is refused now, not at the first request
        self.routes = [r for r in self.routes if r.pattern != rule.pattern] + [rule]

    def route_for(self, url: str) -> RouteRule | None:
        return next((r for r in reversed(self.routes) if compiled(r.pattern).match(url)), None)

    # a paused request ----------------------------------------------------------------------------
    async def _paused(self, session_id: str, event: dict[str, Any]) -> None:
        send, params = self._connection.send.Fetch, {"requestId": event["requestId"]}
        try:
            if self._policy is not None and self._policy.refuses(self._owner, event) or self._own_endpoint(event):
                await send.failRequest(params={**params, "errorReason": "BlockedByClient"}, session_id=session_id)  # type: ignore[typeddict-item]
                return
            routed = at_request_stage(event) and session_id not in self._unrouted
            rule = self.route_for(event["request"]["url"]) if routed else None
            if rule is None:
                await send.continueRequest(params=params, session_id=session_id)  # type: ignore[typeddict-item]
            elif _is_preflight(event["request"]):
                # The browser's CORS check of a routed cross-origin request: let it through, as
                # Playwright does, so that the mock (not the preflight) is what the page gets.
                answer = _preflight_answer(event["request"])
                await send.fulfillRequest(params={**params, **answer}, session_id=session_id)  # type: ignore[typeddict-item]
            elif rule.action == "block":
                rule.hits += 1
                await send.failRequest(params={**params, "errorReason": "BlockedByClient"}, session_id=session_id)  # type: ignore[typeddict-item]
            else:
                rule.hits += 1
                await send.fulfillRequest(params={**params, **_answer(rule)}, session_id=session_id)  # type: ignore[typeddict-item]
        except PROTOCOL_ERRORS:
            pass  # the page closed or the request was cancelled meanwhile

    def _own_endpoint(self, event: dict[str, Any]) -> bool:
        """Whether the request goes to webhand's own dashboard or MCP server (no rules set: the
        policy checked nothing else); logged so that the reply names it."""
        if self._policy is not None or self._rules is None or not at_request_stage(event):
            return False
        request = event["request"]
        reason = self._rules.own_endpoint_refusal(request["url"])
        if reason:
            self._rules.log_for(self._owner).add(request["method"], request["url"], reason)
        return bool(reason)


def _answer(rule: RouteRule) -> dict[str, Any]:
    body = rule.body.encode()
    headers = dict(rule.headers)
    if body and "content-length" not in headers:  # as Playwright's fulfill adds it
        headers["content-length"] = str(len(body))
    return {"responseCode": rule.status, "responsePhrase": _phrase(rule.status),
            "responseHeaders": [{"name": name, "value": value} for name, value in headers.items()],
            "body": base64.b64encode(body).decode()}


def _is_preflight(request: dict[str, Any]) -> bool:
    return request.get("method") == "OPTIONS" and any(
        name.lower() == "access-control-request-method" for name in request.get("headers") or {})


def _preflight_answer(request: dict[str, Any]) -> dict[str, Any]:
    asked = {name.lower(): value for name, value in (request.get("headers") or {}).items()}
    headers = [{"name": "Access-Control-Allow-Origin", "value": asked.get("origin", "*")},
               {"name": "Access-Control-Allow-Methods", "value": asked.get("access-control-request-method",
                                                                          "GET, POST, OPTIONS, DELETE")},
               {"name": "Access-Control-Allow-Credentials", "value": "true"}]
    if "access-control-request-headers" in asked:
        headers.append({"name": "Access-Control-Allow-Headers", "value": asked["access-control-request-headers"]})
    return {"responseCode": 204, "responsePhrase": _phrase(204), "responseHeaders": headers, "body": ""}


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
