"""The debugging tools' part of the Driver on raw CDP: performance counters work; requests in full,
network emulation and mocks are not built on this driver yet, and say so with a
typed error that names the driver that has them (nothing a model sends fails untyped)."""

from __future__ import annotations

from typing import Any, NoReturn

from webhand.engine.cdp.connection import CdpConnection, guarded
from webhand.engine.driver import NetworkConditions, RequestDetail, RouteRule
from webhand.errors import WebhandError


def not_on_cdp(what: str) -> NoReturn:
    raise WebhandError(f"{what} is not available with driver = \"cdp\" yet.",
                       "Ask the user to run webhand with driver = \"playwright\" (the default) for this tool.")


class ContextDebuggingMixin:
    """Of ``CdpContext``."""

    network_conditions: NetworkConditions = NetworkConditions()
    routes: list[RouteRule]

    async def request_detail(self, request_id: int, *, timeout: float) -> RequestDetail:
        not_on_cdp("Reading a request in full")

    async def response_body(self, request_id: int, *, timeout: float) -> bytes:
        not_on_cdp("Reading a response body")

    async def set_network_conditions(self, conditions: NetworkConditions) -> None:
        not_on_cdp("Network emulation (offline, latency, throughput)")

    async def add_route(self, rule: RouteRule) -> None:
        not_on_cdp("Mocking requests (browser_route)")

    async def remove_routes(self, pattern: str | None) -> list[RouteRule]:
        return []  # none can have been added


class TabDebuggingMixin:
    """Of ``CdpTab``."""

    connection: CdpConnection
    session_id: str

    async def performance_metrics(self, *, timeout: float) -> dict[str, float]:
        async with guarded("Reading the performance counters", timeout):
            await self.connection.send.Performance.enable(session_id=self.session_id)
            reply: Any = await self.connection.send.Performance.getMetrics(session_id=self.session_id)
        return {metric["name"]: float(metric["value"]) for metric in reply["metrics"]}
