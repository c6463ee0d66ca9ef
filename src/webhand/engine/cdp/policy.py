"""Origin policy, the request layer on raw CDP: ``Fetch.enable`` with patterns on every session
of a context (pages, out-of-process frames, workers).

At the request stage a request to a refused origin fails with ERR_BLOCKED_BY_CLIENT before it is
sent; at the response stage a 3xx whose Location is refused fails the same way. Everything else
goes on untouched. As with Playwright, the context's traffic also goes through its own policy
proxy (``engine/policy_proxy.py``, set as the context's ``proxyServer``), which holds on the
channels no interception sees (WebSockets, shared workers).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from webhand.engine.cdp.connection import PROTOCOL_ERRORS
from webhand.engine.policy import OriginPolicy

if TYPE_CHECKING:
    from webhand.engine.cdp.context import CdpContext


class CdpPolicy(OriginPolicy):
    async def enforce(self, context: CdpContext, session_id: str) -> None:
        connection = context.connection
        connection.on("Fetch.requestPaused", session_id,
                      lambda event: asyncio.ensure_future(self._paused(context, session_id, event)))
        await connection.send.Fetch.enable(params={"patterns": [{"urlPattern": "*", "requestStage": "Request"},
                                                                {"urlPattern": "*", "requestStage": "Response"}]},
                                           session_id=session_id)

    async def _paused(self, context: CdpContext, session_id: str, event: dict[str, Any]) -> None:
        send, request_id = context.connection.send, event["requestId"]
        request = event["request"]
        try:
            if "responseStatusCode" not in event and "responseErrorReason" not in event:  # the request stage
                reason = self.check(request["url"])
                if reason:
                    self.log_for(context).add(request["method"], request["url"], reason)
                    await send.Fetch.failRequest(params={"requestId": request_id, "errorReason": "BlockedByClient"},
                                                 session_id=session_id)
                    return
            else:
                headers = {h["name"].lower(): h["value"] for h in event.get("responseHeaders") or []}
                if self.redirect_refusal(context, request["method"], request["url"], event.get("responseStatusCode") or 0, headers):
                    await send.Fetch.failRequest(params={"requestId": request_id, "errorReason": "BlockedByClient"},
                                                 session_id=session_id)
                    return
            await send.Fetch.continueRequest(params={"requestId": request_id}, session_id=session_id)
        except PROTOCOL_ERRORS:
            pass  # the page closed or the request was cancelled
