"""The warm reserve: a browser context with one blank tab, prepared before any conversation asks
for it, so that a new conversation does not wait for a launch (``warm_reserve = true``).

In process isolation the reserve is a browser of its own; in context isolation, a context in the
shared browser. The session manager owns one ``WarmReserve`` and says how a context is prepared
and when a reserve is wanted (never with a pool, nor when every default session runs on a named
profile, nor while shutting down). The next reserve is prepared after the first call of the
session that took the last one, not during it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from webhand.engine.driver import BrowserHandle, Context, TabEvents
from webhand.engine.pool import Placement
from webhand.errors import WebhandError
from webhand.session import call_deadline
from webhand.session.profiles import ProfileLock
from webhand.session.session import Session


@dataclass
class Prepared:
    """A browser context with one blank tab, ready to become a session."""

    browser: BrowserHandle
    context: Context
    events: TabEvents
    owns_browser: bool
    placement: Placement | None = None  # where the pool put it
    profile: ProfileLock | None = None  # the named profile it runs on, held

    async def close(self) -> None:
        """Close what was prepared and never became a session (its browser too when it owns it)."""
        try:
            await self.context.close()
            if self.owns_browser:
                await self.browser.close()
        finally:
            if self.profile is not None:
                self.profile.release()


class WarmReserve:
    """``prepare``: a fresh context with one blank tab (the manager's, in a new browser, or in the
    shared one); ``wanted``: whether a reserve is kept now; ``timeout``: the call timeout, which caps
    the wait for a session's first call before the next reserve is prepared."""

    def __init__(self, prepare: Callable[[], Awaitable[Prepared]], wanted: Callable[[], bool], timeout: float) -> None:
        self._prepare = prepare
        self._wanted = wanted
        self._timeout = timeout
        #: The reserve being prepared, or prepared; None when there is none.
        self.task: asyncio.Task[Prepared] | None = None
        self._refills: set[asyncio.Task[None]] = set()

    def refill(self) -> None:
        """Begin preparing a reserve, when one is wanted and there is none."""
        if self._wanted() and self.task is None:
            self.task = asyncio.create_task(self._prepare(), name="webhand-warm-reserve")

    def refill_after_first_call(self, session: Session) -> None:
        """Prepare the next reserve once this session's first call is done (capped by the call
        timeout): launching it during that call would take the CPU the call needs (measured:
        a warm first navigate took 230 ms with the refill running beside it, 93 ms without)."""
        async def refill() -> None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(session.first_call_done.wait(), self._timeout)
            self.refill()

        task = asyncio.create_task(refill(), name="webhand-reserve-refill")
        self._refills.add(task)
        task.add_done_callback(self._refills.discard)

    async def ready(self) -> None:
        """Wait until the reserve is prepared (a refill waiting for a session's first call, first)."""
        if self._refills:
            await asyncio.gather(*self._refills, return_exceptions=True)
        if self.task is not None:
            with contextlib.suppress(Exception):  # a failed reserve is retried by the next session
                await asyncio.shield(self.task)

    async def take(self) -> Prepared:
        """The reserve, or a context prepared now when there is none, it failed, or its browser died."""
        reserve, self.task = self.task, None
        prepared: Prepared | None = None
        if reserve is not None:
            try:
                with call_deadline.not_counted():  # a reserve still launching: its launch, not the call's time
                    prepared = await reserve
                if not prepared.browser.alive:
                    await prepared.browser.close()
                    prepared = None
            except WebhandError:
                prepared = None  # the reserve failed to launch: try once more below, and report that
        if prepared is None:
            prepared = await self._prepare()
        return prepared

    def browser_pid(self) -> int | None:
        """The pid of the reserve's browser, once prepared (None while preparing, or without one)."""
        reserve = self.task
        if reserve is not None and reserve.done() and not reserve.cancelled() and reserve.exception() is None:
            return reserve.result().browser.pid
        return None

    def stop_refilling(self) -> None:
        """Cancel the refills waiting for a session's first call (shutdown)."""
        for refill in list(self._refills):
            refill.cancel()

    async def discard(self) -> None:
        """End the reserve, prepared or still preparing: it was never handed out."""
        reserve, self.task = self.task, None
        if reserve is None:
            return
        if not reserve.done():
            reserve.cancel()
        try:
            prepared = await reserve
        except (asyncio.CancelledError, Exception):  # noqa: BLE001 - it was never handed out
            return
        await prepared.close()
