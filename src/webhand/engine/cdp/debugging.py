"""The debugging tools' part of a tab on raw CDP: performance counters. Requests in full,
network emulation and mocks are the context's (network_debugging.py); service workers, workers.py."""

from __future__ import annotations

from typing import Any

from webhand.engine.cdp.connection import CdpConnection, guarded


class TabDebuggingMixin:
    """Of ``CdpTab``."""

    connection: CdpConnection
    session_id: str

    async def performance_metrics(self, *, timeout: float) -> dict[str, float]:
        async with guarded("Reading the performance counters", timeout):
            await self.connection.send.Performance.enable(session_id=self.session_id)
            reply: Any = await self.connection.send.Performance.getMetrics(session_id=self.session_id)
        return {metric["name"]: float(metric["value"]) for metric in reply["metrics"]}
