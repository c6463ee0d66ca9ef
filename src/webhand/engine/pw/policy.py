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
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage
from playwright.async_api import Route

from webhand.engine.policy import OriginPolicy as _SharedOriginPolicy
from webhand.engine.policy import RefusalLog

__all__ = ["OriginPolicy", "RefusalLog"]

log = logging.getLogger("webhand.policy")


class OriginPolicy(_SharedOriginPolicy):
    """The shared policy (``engine/policy.py``) with Playwright's enforcement in the browser."""

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
            headers = {h["name"].lower(): h["value"] for h in event.get("responseHeaders") or []}
            if self.redirect_refusal(page_context, event["request"]["method"], event["request"]["url"], status, headers):
                await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
                return
            await session.send("Fetch.continueRequest", {"requestId": request_id})
        except PWError:
            pass  # the page closed or the request was cancelled
