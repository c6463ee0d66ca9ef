"""What a tab does for the debugging tools: service workers (engine/service_workers.py, shared with the
raw-CDP driver) and Chromium's performance counters.

A mixin of ``PlaywrightTab`` (tab.py); it expects ``self.page`` and ``self.devtools`` (the
tab's ``TabDevtools``, which keeps the service worker registrations current from CDP events).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from playwright.async_api import Page as PWPage

from webhand.engine.pw.errors import translated
from webhand.engine.service_workers import ServiceWorkerActions, ServiceWorkerRegistry
from webhand.errors import ActionTimeout

if TYPE_CHECKING:
    from webhand.engine.pw.devtools import TabDevtools


class TabDebugging(ServiceWorkerActions):
    page: PWPage
    devtools: "TabDevtools"

    async def _service_worker_registry(self) -> ServiceWorkerRegistry:
        await self.devtools.ready  # enabled with the tab: its registry is current
        return self.devtools.service_workers

    async def performance_metrics(self, *, timeout: float) -> dict[str, float]:
        try:
            async with translated("Reading the performance counters", timeout):
                return await asyncio.wait_for(self.devtools.metrics(), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"Reading the performance counters did not finish within {timeout:g} s.",
                                "The page may be busy: try again.") from None
