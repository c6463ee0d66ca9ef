"""Origin policy, the request layer on raw CDP: what a request paused by ``Fetch`` on any session
of a context (pages, out-of-process frames, workers) must not do.

At the request stage a request to a refused origin fails with ERR_BLOCKED_BY_CLIENT before it is
sent; at the response stage a 3xx whose Location is refused fails the same way. Everything else
goes on untouched. The pausing itself is ``routes.py``'s (``Interception``), which the routes (browser_route)
share: one ``Fetch.enable`` per session, and the policy is asked first, so a route never answers a
request the policy refuses. As with Playwright, the context's traffic also goes through its own
policy proxy (``engine/policy_proxy.py``, set as the context's ``proxyServer``), which holds on the
channels no interception sees (WebSockets, shared workers).
"""

from __future__ import annotations

from typing import Any

from webhand.engine.policy import OriginPolicy

#: Fetch.enable's patterns under a policy: every request before it is sent, and every response
#: (for the redirects).
POLICY_PATTERNS = [{"urlPattern": "*", "requestStage": "Request"}, {"urlPattern": "*", "requestStage": "Response"}]


def at_request_stage(event: dict[str, Any]) -> bool:
    """Whether a ``Fetch.requestPaused`` event is before the request was sent (else: its response came)."""
    return "responseStatusCode" not in event and "responseErrorReason" not in event


class CdpPolicy(OriginPolicy):
    def refuses(self, context: Any, event: dict[str, Any]) -> bool:
        """Whether the paused request of ``event`` must fail; the refusal is logged for ``context``."""
        if not self.active:
            return False
        request = event["request"]
        if at_request_stage(event):
            reason = self.check(request["url"])
            if reason:
                self.log_for(context).add(request["method"], request["url"], reason)
            return bool(reason)
        headers = {h["name"].lower(): h["value"] for h in event.get("responseHeaders") or []}
        return bool(self.redirect_refusal(context, request["method"], request["url"],
                                          event.get("responseStatusCode") or 0, headers))
