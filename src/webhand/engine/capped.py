"""Asking a browser that may never answer: a round trip with a cap that is kept.

``asyncio.wait_for`` cancels the work at its timeout and then waits for the work to finish
unwinding. Work whose clean-up talks to the browser again (detaching a CDP session, closing a
WebSocket politely) then waits for an answer a frozen browser never gives, and the "capped"
check takes as long as the socket takes to die. ``answers_within`` instead gives up at the
cap: the work is cancelled and left to unwind on its own, its outcome retrieved so that it
logs nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable


def abandon(work: asyncio.Future[object], *, cancel: bool = True) -> None:
    """Stop waiting for ``work`` (cancelled, unless ``cancel`` is false: it then finishes on its
    own); whatever it ends with is nobody's news."""
    if cancel:
        work.cancel()
    work.add_done_callback(lambda done: done.cancelled() or done.exception())


async def answers_within(work: Awaitable[object], timeout: float) -> bool:
    """Whether ``work`` completes without an error within ``timeout`` s. Returns at the cap
    whatever the work does then; only cancelling the caller is awaited no longer either."""
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        abandon(task)
        raise
    if not done:
        abandon(task)
        return False
    return not task.cancelled() and task.exception() is None
