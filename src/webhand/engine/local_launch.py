"""How both drivers launch the browsers they run locally: one started ahead (``prelaunch``), one
launched before the engine existed (a stdio server's remembered launch, ``engine/launch_memo.py``),
and the launch itself, from the settings' plan (``chrome.launch_plan``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from webhand.engine.chrome import ChromeProcess, launch_plan

if TYPE_CHECKING:
    from webhand.config import Settings
    from webhand.engine.chrome import LaunchedBrowsers


class LocalLaunches:
    """Mixed into an engine that has ``settings``, ``policy`` (with ``active``), ``launched``,
    ``browser_spawned`` and ``_early_chrome``."""

    settings: Settings
    policy: Any
    launched: LaunchedBrowsers
    browser_spawned: asyncio.Event
    _early_chrome: asyncio.Future[ChromeProcess] | None

    def prelaunch(self) -> None:
        """Start the next browser now, in the background, for ``launch`` to take."""
        if self._early_chrome is None:
            self._early_chrome = asyncio.ensure_future(self._start_chrome())

    def launch_plan(self) -> dict[str, Any]:
        return launch_plan(self.settings, policy_active=self.policy.active)

    def adopt_prelaunched(self, starting: asyncio.Future[ChromeProcess]) -> None:
        self.launched.add_when_launched(starting)
        if self._early_chrome is None:
            self._early_chrome = starting
        self.browser_spawned.set()

    async def _start_chrome(self) -> ChromeProcess:
        chrome = await ChromeProcess.launch_planned(self.launch_plan(), spawned=self.browser_spawned)
        return self.launched.add(chrome)
