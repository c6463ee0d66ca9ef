"""Origin policy, the request layer: what Playwright can route, refused inside the browser.

The rules (``webhand/security/origins.py``) are enforced at two layers. This one sees requests with their
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

from webhand.engine.policy import OriginPolicy
from webhand.engine.policy import RefusalLog
from webhand.security.origins import OWN_ENDPOINT_PATTERNS, OWN_ENDPOINTS

__all__ = ["PlaywrightRequestPolicy", "RefusalLog"]

log = logging.getLogger("webhand.policy")


class PlaywrightRequestPolicy(OriginPolicy):
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

    async def guard(self, page: PWPage) -> None:
        """This page's own CDP ``Fetch`` guard. Under rules: refuse redirects to refused origins
        (see the module docstring). Without rules, while webhand listens on a loopback address:
        refuse this page's requests to it (``origins.OWN_ENDPOINTS``), pausing loopback requests
        only; a context route would do it too, but would turn the HTTP cache off for every request."""
        if self.active:
            patterns = [{"urlPattern": "*", "requestStage": "Response"}]
        elif OWN_ENDPOINTS:
            patterns = OWN_ENDPOINT_PATTERNS
        else:
            return
        try:
            session = await page.context.new_cdp_session(page)
            page_context = page.context
            session.on("Fetch.requestPaused", lambda event: asyncio.ensure_future(self._paused(session, page_context, event)))
            await session.send("Fetch.enable", {"patterns": patterns})
        except PWError as error:
            log.debug("policy guard not installed: %s", error)

    async def _paused(self, session: Any, page_context: Any, event: dict[str, Any]) -> None:
        request_id, status = event["requestId"], event.get("responseStatusCode") or 0
        method, url = event["request"]["method"], event["request"]["url"]
        try:
            if "responseStatusCode" in event or "responseErrorReason" in event:
                headers = {h["name"].lower(): h["value"] for h in event.get("responseHeaders") or []}
                refused = self.redirect_refusal(page_context, method, url, status, headers)
            else:
                refused = self.own_endpoint_refusal(url)
                if refused:
                    self.log_for(page_context).add(method, url, refused)
            if refused:
                await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
                return
            await session.send("Fetch.continueRequest", {"requestId": request_id})
        except PWError:
            pass  # the page closed or the request was cancelled
