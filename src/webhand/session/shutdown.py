"""Shutting down within a cap: closing the sessions and browsers never hangs the host.

``SessionManager.shutdown_all`` closes everything in order: the boot under way, the sessions, the
warm reserve, the shared browser, the pool, the driver. Each step waits for a browser's or the
driver's answer, and a browser that stops answering (frozen, starved, stuck disposing a context)
would hang it for good: Playwright's ``BrowserContext.close()`` has no timeout of its own. So the
whole sequence runs under one cap, the default operation timeout (``timeout``: to the host,
shutting down is one operation). When it overruns, the step it was in is logged, the driver
SIGKILLs by pid the browsers it launched and its driver process, so that every call still waiting
on them fails at once, and the sequence gets ``KILL_GRACE_SECONDS`` to unwind before it is
cancelled. Whatever the driver launched and nobody closed is killed by pid at the end, every time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from webhand.engine.launch.chrome import KILL_GRACE_SECONDS
from webhand.engine.driver import Driver

log = logging.getLogger("webhand.sessions")


class Steps:
    """The steps of one shutdown: each runs on, whatever the one before it raised, and the one
    under way is named in the log line when the cap runs out."""

    def __init__(self) -> None:
        self.current = "starting"

    async def run(self, name: str, step: Awaitable[object]) -> None:
        self.current = name
        try:
            await step
        except Exception as error:  # noqa: BLE001 - the next steps must still close what they own
            log.warning("shutting down: %s failed: %s", name, error)


async def within_cap(close_everything: Callable[[Steps], Awaitable[None]], driver: Driver, cap: float) -> None:
    """Run ``close_everything`` for at most ``cap`` seconds, then kill by pid what the driver started."""
    steps = Steps()
    work = asyncio.ensure_future(close_everything(steps))
    try:
        if not (await asyncio.wait({work}, timeout=cap))[0]:
            killed = driver.kill_now()
            log.warning("shutting down: %s did not finish within %g s (timeout); killed the browsers and the "
                        "driver webhand started, by pid: %s", steps.current, cap, killed or "none left")
            if not (await asyncio.wait({work}, timeout=KILL_GRACE_SECONDS))[0]:
                log.warning("shutting down: %s still waits after the kill; given up", steps.current)
                work.cancel()
                await asyncio.wait({work}, timeout=KILL_GRACE_SECONDS)
    except asyncio.CancelledError:  # the host gave up on the shutdown itself: leave nothing running
        work.cancel()
        raise
    finally:
        left = driver.kill_now()
        if left:
            log.warning("shutting down: %d processes that no session held any more were still running; "
                        "killed by pid: %s", len(left), left)
