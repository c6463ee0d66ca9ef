"""The driver seam: one CDP session of a page, as the code written once for both Chromium drivers sees it.

Much of what a tab does is the same CDP work whatever drives the browser: the live view
(``live_view.py``), the model's JavaScript run like a DevTools console (``console_javascript.py``),
the service worker actions (``service_workers.py``), the performance counters (``devtools.py``).
That code is written once against ``CdpChannel``; each driver hands its tabs a channel of its own:

- raw CDP (``engine/cdp/channel.py``): the browser connection plus the page's flattened session id;
- Playwright (``engine/pw/channel.py``): the tab's ``CDPSession``.

A channel sends a command, listens to an event, and turns what its driver raises into a webhand
error: nothing else, so that a new way of reaching Chromium (a browser extension's bridge) plugs
in by writing one small class. A driver whose browser speaks no CDP at all (WebDriver BiDi)
implements these components of a tab (``driver.LiveView``, ``driver.JavaScriptConsole``, ...)
itself (engine/bidi/).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol

from webhand.errors import WebhandError

#: A handler of one CDP event: called with the event's parameters.
EventHandler = Callable[[dict[str, Any]], None]


class CdpChannel(Protocol):
    """One CDP session attached to a page."""

    #: What ``send`` raises when the browser refuses a command or the page (or its session) went
    #: away: the driver library's own exceptions, which ``translate`` turns into webhand errors.
    errors: tuple[type[Exception], ...]

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one command (``"Page.captureScreenshot"``) on this session; returns its result.
        Uncapped: the caller caps it (``guarded`` or ``asyncio.wait_for``)."""
        ...

    def on(self, event: str, handler: EventHandler) -> Callable[[], None]:
        """Call ``handler(params)`` for each ``event`` of this session; returns what stops it."""
        ...

    def translate(self, error: Exception, doing: str, timeout: float | None) -> Exception:
        """The webhand error for ``error`` (one of ``errors``, or a ``TimeoutError``) raised while
        ``doing`` ("Taking a thumbnail")."""
        ...

    async def fork(self) -> CdpChannel:
        """A second session on the same page, whose events and answers never queue behind this
        one's commands (the live view's screencast). End it with ``detach``."""
        ...

    async def detach(self) -> None:
        """End this session (one from ``fork``); raises as ``send`` does."""
        ...


@asynccontextmanager
async def guarded(channel: CdpChannel, doing: str, timeout: float | None = None) -> AsyncIterator[None]:
    """Run commands on ``channel`` within ``timeout`` (None: uncapped); a timeout or a driver error
    leaves as the webhand error ``channel.translate`` gives."""
    try:
        if timeout is None:
            yield
        else:
            async with asyncio.timeout(timeout):
                yield
    except WebhandError:
        raise
    except TimeoutError as error:
        raise channel.translate(error, doing, timeout) from None
    except channel.errors as error:
        raise channel.translate(error, doing, timeout) from None
