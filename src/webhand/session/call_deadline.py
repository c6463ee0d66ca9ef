"""A tool call's deadline, which starting a browser does not spend.

A call's timeout is for what it asks (a navigation, a click). When the call must first start its
session's browser (the first call of a session, or the one after the browser exited), the launch
has a cap of its own, ``launch_timeout``; counting it in the call's timeout too would fail a call
on a slow launch with "the page may be hung", blaming the page. A Firefox cold start takes 10-30 s
on a loaded machine (docs/design.md, "The Firefox driver"), Chromium's 1-2 s.

The host (host.py) runs each call under ``counting(deadline)``; the session manager wraps each
launch in ``not_counted()``, which stops the running call's clock for as long as the launch takes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_CURRENT: ContextVar[asyncio.Timeout | None] = ContextVar("webhand_call_deadline", default=None)


@contextlib.contextmanager
def counting(deadline: asyncio.Timeout) -> Iterator[None]:
    """Run the block as a call whose deadline is ``deadline`` (asyncio.timeout's)."""
    token = _CURRENT.set(deadline)
    try:
        yield
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def not_counted() -> Iterator[None]:
    """The running call's clock stops for the block (a browser launch, capped by its own timeout)
    and goes on after it with the time that was left."""
    deadline = _CURRENT.get()
    when = deadline.when() if deadline is not None else None
    if deadline is None or when is None or deadline.expired():
        yield
        return
    loop = asyncio.get_running_loop()
    left = when - loop.time()
    deadline.reschedule(None)
    try:
        yield
    finally:
        if not deadline.expired():
            deadline.reschedule(loop.time() + max(0.0, left))
