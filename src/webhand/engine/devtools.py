"""What the debugging tools read from a page over CDP, the same on every driver: Chromium's
performance counters (browser_performance). Service worker actions are ``service_workers.py``;
network emulation's parameters, ``network.py``."""

from __future__ import annotations

import asyncio

from webhand.engine.channel import CdpChannel
from webhand.errors import ActionTimeout

_DOING = "Reading the performance counters"


class PerformanceCounters:
    """A Chromium tab's ``performance`` component (``driver.Performance``).

    ``enabled``: the future of the tab's own start when that enabled the Performance domain (its
    layout and script counters add up from then: Playwright's tab does so); None sends
    ``Performance.enable`` before each read (the raw driver enables nothing ahead of need).
    """

    def __init__(self, channel: CdpChannel, *, enabled: asyncio.Future[None] | None = None) -> None:
        self.channel = channel
        self._enabled = enabled

    async def read(self, *, timeout: float) -> dict[str, float]:
        try:
            return await asyncio.wait_for(self._read(timeout), timeout)
        except TimeoutError:
            raise ActionTimeout(f"{_DOING} did not finish within {timeout:g} s.",
                                "The page may be busy: try again.") from None

    async def _read(self, timeout: float) -> dict[str, float]:
        try:
            if self._enabled is None:
                await self.channel.send("Performance.enable")
            else:
                await self._enabled
            reply = await self.channel.send("Performance.getMetrics")
        except self.channel.errors as error:
            raise self.channel.translate(error, _DOING, timeout) from None
        return {metric["name"]: float(metric["value"]) for metric in reply.get("metrics", [])}
