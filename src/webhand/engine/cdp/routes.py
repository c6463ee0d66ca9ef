"""A context's network on raw CDP: the routes (browser_route / browser_unroute), network emulation
(browser_network_conditions), and the requests paused by ``Fetch`` for the routes and the origin
policy's request layer (policy.py).

Both emulation and routes hold for every session of the context: each page, out-of-process frame
and worker session gets them as it is set up (``session_setup``, before it runs), and the sessions
already running get them when they change. While a route is set the HTTP cache is off, as with
Playwright: an answer from the cache would never be paused, so the route would not see it.

Pausing (``Interception``): one ``Fetch.enable`` per session with the patterns both the policy and
the routes need, one listener that asks the policy first, then the routes (the last one added that
matches wins, as in Playwright), and lets everything else go on. Patterns: under a policy, every
request at both stages (policy.py); with routes only, every request before it is sent (routes are
globs Fetch's own wildcards cannot say, so they are matched here); with neither, only requests to
loopback hosts while webhand listens on one (its dashboard or MCP server, which no page may reach:
``origins.OWN_ENDPOINTS``), else ``Fetch`` is off. A routed answer is never paused again at the
response stage, and a redirect it gives is a new request, which the policy sees; a request a
``continue`` route rewrites is sent on without a second pause, so the policy is asked about its
new URL before it goes: a route cannot get around the policy.

``ContextNetwork`` is owned by ``CdpContext`` (context.py).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, guarded
from webhand.engine.cdp.policy import POLICY_PATTERNS, at_request_stage
from webhand.engine.driver import NetworkConditions, RouteRule
from webhand.engine.network import emulation_params
from webhand.engine.policy import refused_rewrite, route_rewrite
from webhand.engine.url_glob import compiled
from webhand.security.origins import OWN_ENDPOINT_PATTERNS, OWN_ENDPOINTS

if TYPE_CHECKING:
    from webhand.engine.cdp.policy import CdpPolicy

_ROUTE_PATTERNS = [{"urlPattern": "*", "requestStage": "Request"}]
#: Longest a change of emulation or routes waits for the browser's sessions to take it.
_APPLY_SECONDS = 30.0


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
        refused = refused_rewrite(self._rules, rule)
        if refused:
            raise refused
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
            elif rule.action == "continue":
                rule.hits += 1
                changed = self._rewritten(event["request"], rule)
                if changed is None:
                    await send.failRequest(params={**params, "errorReason": "BlockedByClient"}, session_id=session_id)  # type: ignore[typeddict-item]
                else:
                    await send.continueRequest(params={**params, **changed}, session_id=session_id)  # type: ignore[typeddict-item]
            else:
                rule.hits += 1
                await send.fulfillRequest(params={**params, **_answer(rule)}, session_id=session_id)  # type: ignore[typeddict-item]
        except PROTOCOL_ERRORS:
            pass  # the page closed or the request was cancelled meanwhile

    def _rewritten(self, request: dict[str, Any], rule: RouteRule) -> dict[str, Any] | None:
        """``Fetch.continueRequest``'s changes for a ``continue`` route, or None when the policy
        refuses the URL it rewrites to (Fetch does not pause the rewritten request again, so the
        policy is asked here; its refusal is logged as any other)."""
        refusals = self._rules.log_for(self._owner) if self._rules is not None else None
        rewrite = route_rewrite(rule, self._rules, refusals, request["method"], request["url"],
                                request.get("headers") or {})
        if rewrite is None:
            return None
        changed: dict[str, Any] = rewrite.url_and_method()
        if rewrite.headers is not None:
            changed["headers"] = [{"name": name, "value": value} for name, value in rewrite.headers.items()]
        if rewrite.post_data is not None:
            changed["postData"] = base64.b64encode(rewrite.post_data.encode()).decode()
        return changed

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


class ContextNetwork:
    """What a context does to the network of each of its sessions. ``owner`` is the context (the
    policy logs its refusals for it); ``page_sessions`` lists the sessions of its open tabs (pages,
    out-of-process frames, dedicated workers); the service and shared workers' are kept here."""

    def __init__(self, connection: CdpConnection, policy: CdpPolicy | None, owner: object,
                 page_sessions: Callable[[], list[str]]) -> None:
        self.connection = connection
        self.conditions = NetworkConditions()
        self.interception = Interception(connection, policy, owner)
        self._page_sessions = page_sessions
        self._workers: set[str] = set()  # worker sessions: pages and frames are the tabs' own

    @property
    def routes(self) -> list[RouteRule]:
        return self.interception.routes

    def session_setup(self, session_id: str, *, worker: bool = False, routed: bool = True) -> list[Awaitable[Any]]:
        """Commands that give a session being set up (paused) the context's interception and network
        emulation; sent in order with the session's others, before it is let run. A worker's emulation
        may fail (not every worker has every domain): that never stops it from running. ``routed``
        False (a service worker): the routes do not see its requests, as with Playwright."""
        others: list[Awaitable[Any]] = []
        if self.conditions != NetworkConditions():
            others.append(self.connection.send.Network.emulateNetworkConditions(
                params=emulation_params(self.conditions), session_id=session_id))  # type: ignore[arg-type]
        if self.routes and not worker:
            others.append(self.connection.send.Network.setCacheDisabled(params={"cacheDisabled": True},
                                                                        session_id=session_id))
        if worker:
            self._workers.add(session_id)
            others = [_may_fail(command) for command in [*self._worker_network(session_id, bool(others)), *others]]
        # Interception first, and never optional: a worker whose Fetch fails is not let run.
        return self.interception.setup(session_id, routed=routed) + others

    def _worker_network(self, session_id: str, needed: bool) -> list[Awaitable[Any]]:
        """A worker's emulation holds only once its Network domain is on; no body is kept for it
        (nothing reads a worker's bodies). Off until then: its events are not needed."""
        if not needed or session_id not in self._workers:
            return []
        return [self.connection.send.Network.enable(params={"maxTotalBufferSize": 0, "maxResourceBufferSize": 0,
                                                            "maxPostDataSize": 0}, session_id=session_id)]

    def _sessions(self, *, tabs_only: bool = False) -> list[str]:
        # A tab's sessions include its dedicated workers' (workers.py); the context's own workers are here.
        pages = self._page_sessions()
        return pages if tabs_only else list(dict.fromkeys(pages + sorted(self._workers)))

    async def _each_session(self, doing: str, command: Any, *, tabs_only: bool = False) -> None:
        """``command(session_id)`` on every session of the context; a session gone meanwhile is skipped
        (and a worker's forgotten)."""
        async def one(session: str) -> None:
            if not await _sent(command(session)):
                self._workers.discard(session)

        async with guarded(doing, _APPLY_SECONDS):
            await asyncio.gather(*(one(session) for session in self._sessions(tabs_only=tabs_only)))

    # network emulation -------------------------------------------------------------------------
    async def set_conditions(self, conditions: NetworkConditions) -> None:
        self.conditions = conditions  # first: a session set up meanwhile takes it from here
        params = emulation_params(conditions)

        async def emulate(session: str) -> None:
            for command in self._worker_network(session, True):
                await command
            await self.connection.send.Network.emulateNetworkConditions(params=params, session_id=session)  # type: ignore[arg-type]

        await self._each_session("Changing the network conditions", emulate)

    # mocks -------------------------------------------------------------------------------------
    async def add_route(self, rule: RouteRule) -> None:
        first = not self.routes
        self.interception.add(rule)
        if first:
            await self._routes_changed(f"Adding the route {rule.pattern}")

    async def remove_routes(self, pattern: str | None) -> list[RouteRule]:
        removed = [r for r in self.routes if pattern is None or r.pattern == pattern]
        self.interception.routes = [r for r in self.routes if r not in removed]
        if removed and not self.routes:
            await self._routes_changed("Removing the routes")
        return removed

    async def _routes_changed(self, doing: str) -> None:
        """The first route came or the last went: the sessions' interception and HTTP cache follow."""
        send, patterns = self.connection.send, self.interception.patterns
        await self._each_session(doing, lambda session: send.Network.setCacheDisabled(
            params={"cacheDisabled": bool(self.routes)}, session_id=session), tabs_only=True)
        await self._each_session(doing, lambda session: send.Fetch.disable(session_id=session)
                                 if patterns(session) is None
                                 else send.Fetch.enable(params={"patterns": patterns(session)}, session_id=session))  # type: ignore[typeddict-item]


async def _sent(command: Awaitable[Any]) -> bool:
    """Whether the browser took ``command``; False when its session is gone."""
    try:
        await command
        return True
    except PROTOCOL_ERRORS:
        return False


async def _may_fail(command: Awaitable[Any]) -> None:
    await _sent(command)
