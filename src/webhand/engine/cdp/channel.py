"""The raw-CDP driver's ``CdpChannel`` (``engine/channel.py``): the browser connection plus one
flattened session id. Commands go straight to the client's ``send_raw`` (no typed proxy), so the
shared components cost no more than the driver's own calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webhand.engine.cdp.connection import PROTOCOL_ERRORS, CdpConnection, translate
from webhand.engine.channel import EventHandler


class CdpSessionChannel:
    errors: tuple[type[Exception], ...] = PROTOCOL_ERRORS

    def __init__(self, connection: CdpConnection, session_id: str, target_id: str) -> None:
        self.connection = connection
        self.session_id = session_id
        self.target_id = target_id  # the page: what ``fork`` attaches to

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.connection.client.send_raw(method, params, session_id=self.session_id)

    def on(self, event: str, handler: EventHandler) -> Callable[[], None]:
        return self.connection.on(event, self.session_id, handler)

    def translate(self, error: Exception, doing: str, timeout: float | None) -> Exception:
        return translate(error, doing, timeout)

    async def fork(self) -> CdpSessionChannel:
        attached = await self.connection.send.Target.attachToTarget(params={"targetId": self.target_id, "flatten": True})
        return CdpSessionChannel(self.connection, attached["sessionId"], self.target_id)

    async def detach(self) -> None:
        """Detach on the browser's own session; this session's listeners go in any case."""
        try:
            await self.connection.send.Target.detachFromTarget(params={"sessionId": self.session_id})
        finally:
            self.connection.forget_session(self.session_id)
