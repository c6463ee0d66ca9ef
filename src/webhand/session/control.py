"""Human takeover: a person takes a session from the dashboard, and the agent waits.

While a person holds control, the agent's calls on that session wait before they take the
session's lock (``agent_turn``), up to their own timeout; a call that waited says so in its
reply, and one that timed out says that a person still has control. Taking control waits for the
agent's call in flight to finish, so a person never acts in the middle of an action. Releasing
wakes the waiting calls, which then see the page as the person left it.

``browser_request_human`` holds the lock while it waits for the release (it is itself a call), so
taking control of a session that asked for help does not wait for that call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import secrets
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol

from webhand.errors import HumanInControl

if TYPE_CHECKING:
    from webhand.response import Response


class HumanControl:
    def __init__(self) -> None:
        self._holder: str | None = None  # the control token the person's dashboard page holds
        self.since = 0.0
        self.request_reason: str | None = None  # set while browser_request_human waits
        self._released = asyncio.Event()
        self._released.set()
        self._changed = asyncio.Event()  # set on every take and release, for request_help
        self.handovers = 0  # times a person took control

    @property
    def held(self) -> bool:
        return self._holder is not None

    def take(self) -> str:
        """Give control to a person; returns the token their inputs and release must carry."""
        self._holder = secrets.token_urlsafe(16)
        self.since = time.monotonic()
        self.handovers += 1
        self._released.clear()
        self._changed.set()
        return self._holder

    def holds(self, token: str) -> bool:
        return self._holder is not None and hmac.compare_digest(self._holder, token)

    def release(self, token: str) -> bool:
        if not self.holds(token):
            return False
        self._holder = None
        self._released.set()
        self._changed.set()
        return True

    def end_takeover(self) -> None:
        """Hand control back without the person's token: they said they were done elsewhere (in the
        MCP client). Their dashboard page sees the release like any other."""
        if self._holder is not None:
            self._holder = None
            self._released.set()
            self._changed.set()

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
    has control, and the lock each agent call holds."""

    control: HumanControl
    lock: asyncio.Lock


@contextlib.asynccontextmanager
async def agent_turn(session: Controlled, timeout: float, response: Response) -> AsyncIterator[None]:
    """Hold the session's lock for one agent call, once no person has control (waiting up to ``timeout``)."""
    control = session.control
    deadline = time.monotonic() + timeout
    waited_since: float | None = None
    while True:
        if control.held:
            waited_since = waited_since or time.monotonic()
            if not await control.wait_released(deadline - time.monotonic()):
                raise HumanInControl(
                    f"A person has control of this session in the dashboard (for {time.monotonic() - control.since:.0f} s) "
                    f"and did not hand it back within this call's {timeout:g} s.",
                    "Wait, then call again; the call runs once they release it.")
        await session.lock.acquire()
        if not control.held:  # a person took control while this call waited for the lock
            break
        session.lock.release()
    try:
        if waited_since is not None:
            response.add(f"A person had control of this session in the dashboard; they handed it back after "
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
