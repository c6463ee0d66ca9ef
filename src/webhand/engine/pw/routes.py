"""The routes of browser_route: requests matching a pattern answered or blocked in the page's
place, or changed (URL, method, headers, body) and sent on.

Routed on the whole context, so that they reach every tab and worker. The origin policy's own
route (policy.py) still decides first: a mock never opens a way the policy refuses, and a
rewritten URL is checked against it before the request goes on.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import BrowserContext as PWContext
from playwright.async_api import Error as PWError
from playwright.async_api import Route

from webhand.engine.driver import RouteRule
from webhand.engine.policy import refused_rewrite, route_rewrite
from webhand.engine.pw.errors import translated
from webhand.engine.pw.policy import PlaywrightRequestPolicy


class PlaywrightRoutes:
    def __init__(self, context: PWContext, policy: PlaywrightRequestPolicy | None) -> None:
        self._context = context
        self._policy = policy
        self.rules: list[RouteRule] = []
        self._handlers: dict[str, Any] = {}  # pattern → the handler Playwright was given for it

    async def add(self, rule: RouteRule) -> None:
        refused = refused_rewrite(self._policy, rule)
        if refused:
            raise refused
        if rule.pattern in self._handlers:
            await self.remove(rule.pattern)

        async def answer(route: Route) -> None:
            try:
                if self._policy is not None and self._policy.active and self._policy.check(route.request.url):
                    await route.fallback()  # the policy's own route refuses it and logs why: a mock never opens a way
                    return
                rule.hits += 1
                if rule.action == "block":
                    await route.abort("blockedbyclient")
                elif rule.action == "continue":
                    await self._continue(route, rule)
                else:
                    await route.fulfill(status=rule.status, headers=rule.headers, body=rule.body)
            except PWError:
                pass  # the page or the request went away meanwhile

        async with translated(f"Adding the route {rule.pattern}"):
            await self._context.route(rule.pattern, answer)
        self._handlers[rule.pattern] = answer
        self.rules.append(rule)

    async def _continue(self, route: Route, rule: RouteRule) -> None:
        """Send the request on, changed. Playwright's routes are not asked again about the new URL,
        so the policy is asked here (and logs its refusal as any other)."""
        request = route.request
        refusals = self._policy.log_for(self._context) if self._policy is not None else None
        rewrite = route_rewrite(rule, self._policy, refusals, request.method, request.url,
                                await request.all_headers() if rule.headers else {})
        if rewrite is None:
            await route.abort("blockedbyclient")
            return
        await route.continue_(url=rewrite.url, method=rewrite.method, headers=rewrite.headers, post_data=rewrite.post_data)

    async def remove(self, pattern: str | None) -> list[RouteRule]:
        removed = [r for r in self.rules if pattern is None or r.pattern == pattern]
        for rule in removed:
            handler = self._handlers.pop(rule.pattern)
            async with translated(f"Removing the route {rule.pattern}"):
                await self._context.unroute(rule.pattern, handler)
            self.rules.remove(rule)
        return removed
