"""The Firefoxes the BiDi driver runs on this machine, and its cold start: one started ahead
(``prelaunch``), and the launch itself, from the settings' plan. The Firefox counterpart of
``engine/launch/local_launch.py``'s ``LocalLauncher``, with the same ``Launcher`` face."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from webhand.config import Settings
from webhand.engine.bidi.firefox import FirefoxProcess, find_firefox
from webhand.engine.bidi.policy import POLICY_PREFERENCES
from webhand.engine.launch.chrome import LaunchedBrowsers
from webhand.engine.launch.local_launch import StartedAhead, until_set


class FirefoxLauncher:
    """``policy_active`` says whether the driver's origin policy is on (its preferences join the plan)."""

    def __init__(self, settings: Settings, policy_active: Callable[[], bool]) -> None:
        self.settings = settings
        self._policy_active = policy_active
        self.launched = LaunchedBrowsers()  # what kill_now ends by pid
        self.spawned = asyncio.Event()  # set when a launch has its Firefox process
        self.ahead = StartedAhead[FirefoxProcess](self._start, _discard)

    def plan(self) -> dict[str, Any]:
        settings = self.settings
        # Firefox's remote agent navigates only to web pages (http, https, file, blob, about:blank)
        # unless started with -remote-allow-system-access: the user's opt-in to the browser's own
        # pages (about:support, about:buildconfig ...) is what starts it so.
        system_access = ["--remote-allow-system-access"] if settings.allow_internal_pages else []
        return {"browser": "firefox", "executable": find_firefox(settings.firefox_path), "headless": settings.headless,
                "width": settings.viewport.width, "height": settings.viewport.height,
                "extra_args": [*system_access, *settings.extra_args],
                "timeout": settings.launch_timeout, "preferences": POLICY_PREFERENCES if self._policy_active() else {}}

    def prelaunch(self) -> None:
        self.ahead.start()

    def adopt_prelaunched(self, starting: asyncio.Future[Any]) -> None:
        """A browser launched before the driver existed is a Chromium (launch_memo.py): not ours to use."""
        starting.cancel()

    async def until_spawned(self) -> None:
        await until_set(self.spawned, self.settings.launch_timeout)

    async def _start(self, profile_dir: str | None = None) -> FirefoxProcess:
        plan = self.plan()
        firefox = await FirefoxProcess.start(plan["executable"], headless=plan["headless"], width=plan["width"],
                                             height=plan["height"], extra_args=plan["extra_args"],
                                             timeout=plan["timeout"], spawned=self.spawned,
                                             preferences=plan["preferences"], profile_dir=profile_dir)
        self.launched.add(firefox)
        return firefox


async def _discard(early: asyncio.Future[FirefoxProcess]) -> None:
    """End a Firefox started ahead: its launch stopped if it is still starting, else the browser closed."""
    early.cancel()
    with contextlib.suppress(BaseException):
        await (await early).close()
