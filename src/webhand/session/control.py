"""Human takeover: a person takes a session from the dashboard, and the agent waits.

While a person holds control, the agent's calls on that session wait before they take the
session's lock (``agent_turn``), up to their own timeout; a call that waited says so in its
reply, and one that timed out says who has control, since when, and how to get it back. Taking
control waits for the agent's call in flight to finish, so a person never acts in the middle of an
action. Releasing wakes the waiting calls, which then see the page as the person left it.

Control is a lease, never a lock for good: the page that took it renews it every few seconds
(``LEASE_RENEW_SECONDS``), and it lapses ``LEASE_SECONDS`` after the last renewal, so a tab closed
without Release, a laptop gone to sleep or a dropped connection hands the session back within
seconds. Anyone holding the dashboard's token may also force a release (``force_release``).

``browser_request_human`` holds the lock while it waits for the release (it is itself a call), so
taking control of a session that asked for help does not wait for that call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import secrets
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Protocol

from webhand.errors import HumanInControl

if TYPE_CHECKING:
    from webhand.response import Response

#: How long control lasts after the holding page's last renewal; the page renews it every
#: ``LEASE_RENEW_SECONDS`` (a browser runs a background tab's timers at least once a second).
LEASE_SECONDS = 6.0
LEASE_RENEW_SECONDS = 2.0


class HumanControl:
    def __init__(self, lease_seconds: float = LEASE_SECONDS) -> None:
        self._holder: str | None = None  # the control token the person's dashboard page holds
        self.lease_seconds = lease_seconds
        self.holder_name = ""  # who holds it, for people: "a person in the dashboard (from 127.0.0.1)"
        self.since = 0.0  # monotonic, when the hold began
        self.since_wall = 0.0  # the same, as Unix time (for people)
        self.last_end = ""  # how the last hold ended: "released", "lapsed", "forced" or "ended"
        self.request_reason: str | None = None  # set while browser_request_human waits
        self._released = asyncio.Event()
        self._released.set()
        self._changed = asyncio.Event()  # set on every take and release, for request_help
        self._lapse: asyncio.TimerHandle | None = None
        self.handovers = 0  # times a person took control

    @property
    def held(self) -> bool:
        return self._holder is not None

    def take(self, holder_name: str = "a person in the dashboard") -> str:
        """Give control to a person; returns the token their inputs, renewals and release carry.
        Must run in the event loop: the lease's end is a timer on it."""
        self._holder = secrets.token_urlsafe(16)
        self.holder_name = holder_name
        self.since = time.monotonic()
        self.since_wall = time.time()
        self.handovers += 1
        self._released.clear()
        self._changed.set()
        self._schedule_lapse()
        return self._holder

    def holds(self, token: str) -> bool:
        return self._holder is not None and hmac.compare_digest(self._holder, token)

    def renew(self, token: str) -> bool:
        """The holding page is still there: the lease runs ``lease_seconds`` from now."""
        if not self.holds(token):
            return False
        self._schedule_lapse()
        return True

    def release(self, token: str) -> bool:
        if not self.holds(token):
            return False
        self._end("released")
        return True

    def force_release(self) -> bool:
        """Take control back from whoever holds it (someone with the dashboard's token asked)."""
        if self._holder is None:
            return False
        self._end("forced")
        return True

    def end_takeover(self) -> None:
        """Hand control back without the person's token: they said they were done elsewhere (in the
        MCP client). Their dashboard page sees the release like any other."""
        if self._holder is not None:
            self._end("ended")

    def _schedule_lapse(self) -> None:
        if self._lapse is not None:
            self._lapse.cancel()
        self._lapse = asyncio.get_running_loop().call_later(self.lease_seconds, self._end, "lapsed")

    def _end(self, how: str) -> None:
        if self._lapse is not None:
            self._lapse.cancel()
            self._lapse = None
        self._holder = None
        self.last_end = how
        self._released.set()
        self._changed.set()

    def describe(self) -> str | None:
        """Who holds control and since when, for a person or a model; None while nobody does."""
        if self._holder is None:
            return None
        at = time.strftime("%H:%M:%S UTC", time.gmtime(self.since_wall))
        return f"{self.holder_name} has control since {at} ({time.monotonic() - self.since:.0f} s)"

    def how_to_release(self, link: str | None = None) -> str:
        where = f"the dashboard ({link})" if link else "the dashboard"
        return (f"It ends when they click Release, {self.lease_seconds:g} s after their dashboard page closes or loses "
                f"its connection, or when anyone with the dashboard's token clicks Force release in {where}.")

    def status(self) -> dict[str, object] | None:
        """What the session lists and `webhand daemon status` show; None while nobody holds control."""
        if self._holder is None:
            return None
        return {"by": self.holder_name, "since": round(self.since_wall, 3),
                "seconds": round(time.monotonic() - self.since, 1), "lease_seconds": self.lease_seconds,
                "release": self.how_to_release()}

    def ended_how(self) -> str:
        """How the last hold ended, said as the waiting call's reply says it."""
        return {"lapsed": "their dashboard page stopped answering (closed, asleep or cut off), so control lapsed",
                "forced": "someone with the dashboard's token forced a release",
                "ended": "they answered Done in the MCP client"}.get(self.last_end, "they handed it back")

    async def request_help(self, reason: str, timeout: float) -> str:
        """Ask for a person and wait until one took control and handed it back: "returned"; else
        "untaken" (nobody came within ``timeout``) or "held" (still in a person's hands)."""
        before = self.handovers
        self.request_reason = reason
        deadline = time.monotonic() + timeout
        try:
            while not (self.handovers > before and not self.held):
                self._changed.clear()
                try:
                    await asyncio.wait_for(self._changed.wait(), max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    return "held" if self.held else "untaken"
            return "returned"
        finally:
            self.request_reason = None

    async def wait_released(self, timeout: float) -> bool:
        """True once no person holds control (at once if none does); False after ``timeout``."""
        try:
            await asyncio.wait_for(self._released.wait(), max(0.0, timeout))
            return True
        except asyncio.TimeoutError:
            return False


class Controlled(Protocol):
    """What takeover needs of a session (session.py's ``Session``, which imports this module): who
    has control, the lock each agent call holds, and its page in the dashboard (for the way back)."""

    control: HumanControl
    lock: asyncio.Lock
    dashboard_link: Callable[[], str | None]


@contextlib.asynccontextmanager
async def agent_turn(session: Controlled, timeout: float, response: Response) -> AsyncIterator[None]:
    """Hold the session's lock for one agent call, once no person has control (waiting up to ``timeout``)."""
    control = session.control
    deadline = time.monotonic() + timeout
    waited_since: float | None = None
    while True:
        if control.held:
            waited_since = waited_since or time.monotonic()
            response.waiting_for(f"a person to hand the session back (at most this call's {timeout:g} s)")
            if not await control.wait_released(deadline - time.monotonic()):
                raise HumanInControl(
                    f"A person has control of this session in the dashboard: {control.describe()}. This call "
                    f"waited its whole timeout ({timeout:g} s) for them and did not run.",
                    f"{control.how_to_release(session.dashboard_link())} Then call again.")
        await session.lock.acquire()
        if not control.held:  # a person took control while this call waited for the lock
            break
        session.lock.release()
    try:
        if waited_since is not None:
            response.add(f"A person had control of this session in the dashboard; {control.ended_how()} after "
                         f"{time.monotonic() - waited_since:.0f} s of this call's wait. The page may have changed: "
                         "call browser_snapshot before acting on old refs.")
        yield
    finally:
        session.lock.release()


async def wait_for_agent_to_finish(session: Controlled, timeout: float) -> bool:
    """After ``take``: wait until the agent's call in flight is done (not when it is the request for help)."""
    if session.control.request_reason is not None:
        return True
    try:
        async with asyncio.timeout(timeout):
            async with session.lock:
                return True
    except TimeoutError:
        return False
