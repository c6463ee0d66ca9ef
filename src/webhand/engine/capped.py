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
import contextlib
from collections.abc import Awaitable, Callable
from typing import Protocol


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


class Connection(Protocol):
    """A driver's connection to its browser as far as its drop is concerned (cdp/connection.py's
    ``CdpConnection``, bidi/connection.py's ``BidiConnection``): set closed, then calls ``on_close``."""

    closed: bool
    on_close: list[Callable[[], None]]


async def dropped_within(connection: Connection, timeout: float) -> bool:
    """Whether ``connection`` drops within ``timeout`` (already dropped: at once). What a driver's
    ``BrowserHandle.wait_disconnected`` answers (a page may report its close before the browser does)."""
    dropped = asyncio.Event()
    if connection.closed:
        return True
    connection.on_close.append(dropped.set)
    try:
        await asyncio.wait_for(dropped.wait(), timeout)
    except (TimeoutError, asyncio.TimeoutError):
        pass
    finally:
        with contextlib.suppress(ValueError):
            connection.on_close.remove(dropped.set)
    return dropped.is_set() or connection.closed
