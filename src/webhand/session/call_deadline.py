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
import weakref
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

#: The running call's deadline, with the task that runs the call: a task the call starts (a warm
#: reserve's refill) inherits the context, but its launch is not the call's and stops no clock.
_CURRENT: ContextVar[tuple[asyncio.Task[Any] | None, asyncio.Timeout] | None] = ContextVar("webhand_call_deadline",
                                                                                          default=None)


#: Tasks that do the work of the call that started them, which awaits them (a session's creation
#: runs in a task of its own, which racing calls share): their launches stop that call's clock too.
_DOING_THE_CALLS_WORK: "weakref.WeakSet[asyncio.Task[Any]]" = weakref.WeakSet()


def does_the_calls_work(task: asyncio.Task[Any]) -> None:
    """``task``, just started by the running call, does that call's work: a launch in it is not counted."""
    _DOING_THE_CALLS_WORK.add(task)


@contextlib.contextmanager
def counting(deadline: asyncio.Timeout) -> Iterator[None]:
    """Run the block as a call whose deadline is ``deadline`` (asyncio.timeout's)."""
    token = _CURRENT.set((asyncio.current_task(), deadline))
    try:
        yield
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def not_counted() -> Iterator[None]:
    """The running call's clock stops for the block (a browser launch, capped by its own timeout)
    and goes on after it with the time that was left."""
    current = _CURRENT.get()
    task = asyncio.current_task()
    if current is None or (current[0] is not task and task not in _DOING_THE_CALLS_WORK):
        yield
        return
    deadline = current[1]
    when = deadline.when()
    if when is None or deadline.expired():
        yield
        return
    loop = asyncio.get_running_loop()
    left = when - loop.time()
    try:
        deadline.reschedule(None)
    except RuntimeError:  # the call's timeout block has ended: nothing to stop
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(RuntimeError):  # the call's timeout block has already ended
            deadline.reschedule(loop.time() + max(0.0, left))
