"""A Firefox tab's ``performance`` component (``driver.Performance``): there are no counters."""

from __future__ import annotations

from webhand.errors import NotOnFirefox


class NoPerformanceCounters:
    async def read(self, *, timeout: float) -> dict[str, float]:
        raise NotOnFirefox("Chromium's performance counters (browser_performance)",
                           'Use driver = "cdp" (WEBHAND_DRIVER=cdp) for them.',
                           lacking="WebDriver BiDi has no counters command (nothing like CDP's Performance.getMetrics), "
                                   "and Firefox's page APIs report no layout shifts (CLS), long tasks or JS heap size")
