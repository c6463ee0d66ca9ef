"""How both Chromium drivers launch the browsers they run locally: one started ahead (``prelaunch``),
one launched before the driver existed (a stdio server's remembered launch, ``engine/launch/launch_memo.py``),
and the launch itself, from the settings' plan (``chrome.launch_plan``).

The cold start is the launcher's job, not the driver's: the surfaces that start a browser early
(``Webhand.open_soon``, the stdio server) reach it in one hop, ``SessionManager.launcher``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from webhand.engine.launch.chrome import ChromeProcess, LaunchedBrowsers, discard_launch, launch_plan

if TYPE_CHECKING:
    from webhand.config import Settings


class Launcher(Protocol):
    """What a driver's launcher (``Driver.launcher``) does for a cold start: launch the next browser
    ahead of need, say how it launches one, adopt one launched before the driver existed, and
    tell when the process of the browser being launched exists."""

    def prelaunch(self) -> None:
        """Start a local browser process now, in the background, for the driver's next ``launch`` to
        take: it boots while the driver starts and the host imports the rest of itself."""
        ...
    def plan(self) -> dict[str, Any]:
        """How the driver's ``launch`` starts a local browser, as data (``chrome.launch_plan``)."""
        ...
    def adopt_prelaunched(self, starting: asyncio.Future[Any]) -> None:
        """Take a browser launched before the driver existed, from a plan equal to ``plan()``
        (``engine/launch/launch_memo.py``): the next ``launch`` uses it."""
        ...
    async def until_spawned(self) -> None:
        """Return once a launch has spawned its browser process (or failed to), before the browser
        boots; capped by the launch timeout."""
        ...


async def until_set(spawned: asyncio.Event, timeout: float) -> None:
    """Wait for ``spawned``, at most ``timeout`` seconds: from then on CPU-bound start-up work, such
    as an import, no longer delays the browser's own boot, which runs on another core."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(spawned.wait(), timeout)


BrowserProcess = TypeVar("BrowserProcess")


class StartedAhead(Generic[BrowserProcess]):
    """The one browser a launcher starts ahead of need, for its next launch to take (else a launch
    begun then): the cold-start part both launchers, Chromium's and Firefox's, share.

    ``start(profile_dir)`` launches a browser; ``discard`` ends one that is still starting or up."""

    def __init__(self, start: Callable[[str | None], Awaitable[BrowserProcess]],
                 discard: Callable[[asyncio.Future[BrowserProcess]], Awaitable[None]]) -> None:
        self._start = start
        self._discard = discard
        self._early: asyncio.Future[BrowserProcess] | None = None

    def start(self) -> None:
        """Start the next browser now, in the background, unless one is already on its way."""
        if self._early is None:
            self._early = asyncio.ensure_future(self._start(None))

    def keep(self, starting: asyncio.Future[BrowserProcess]) -> None:
        """Keep a browser launched elsewhere (before the driver existed) as the one started ahead."""
        if self._early is None:
            self._early = starting

    def take(self, profile_dir: str | None = None) -> asyncio.Future[BrowserProcess]:
        """The browser started ahead, or a launch begun now: the caller owns it from here. A browser
        on a kept profile (``profile_dir``) is always launched now: the one started ahead runs on a
        temporary profile and stays for the next session."""
        if profile_dir is not None:
            return asyncio.ensure_future(self._start(profile_dir))
        starting, self._early = self._early or asyncio.ensure_future(self._start(None)), None
        return starting

    async def discard(self) -> None:
        """End a browser started ahead for a session that never came."""
        early, self._early = self._early, None
        if early is not None:
            await self._discard(early)


class LocalLauncher:
    """The Chromiums a driver runs on this machine, owned by the driver (``engine.launcher``).

    ``policy_active`` says whether the engine's origin policy is on (its proxy changes the plan).
    """

    def __init__(self, settings: Settings, policy_active: Callable[[], bool]) -> None:
        self.settings = settings
        self._policy_active = policy_active
        self.launched = LaunchedBrowsers()  # what kill_now ends by pid
        self.spawned = asyncio.Event()  # set when a launch has its Chromium process
        self.ahead = StartedAhead[ChromeProcess](self._start, discard_launch)

    def prelaunch(self) -> None:
        """Start the next browser now, in the background, for ``launch`` to take."""
        self.ahead.start()

    def plan(self) -> dict[str, Any]:
        return launch_plan(self.settings, policy_active=self._policy_active())

    def adopt_prelaunched(self, starting: asyncio.Future[ChromeProcess]) -> None:
        self.launched.add_when_launched(starting)
        self.ahead.keep(starting)
        self.spawned.set()

    async def until_spawned(self) -> None:
        await until_set(self.spawned, self.settings.launch_timeout)

    async def _start(self, profile_dir: str | None = None) -> ChromeProcess:
        chrome = await ChromeProcess.launch_planned(self.plan(), spawned=self.spawned, profile_dir=profile_dir)
        return self.launched.add(chrome)
