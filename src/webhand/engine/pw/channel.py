"""The Playwright driver's ``CdpChannel`` (``engine/channel.py``): a ``CDPSession`` of the page.

A tab opens its session lazily (``PlaywrightTab._session``, shared by everything on the tab), so
the channel asks for it on its first command and keeps it. Playwright's own session on the page
is untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.channel import EventHandler
from webhand.engine.live_view import Viewport
from webhand.engine.pw.errors import translate


class PlaywrightChannel:
    errors: tuple[type[Exception], ...] = (PWError,)

    def __init__(self, page: PWPage, session: Callable[[], Awaitable[CDPSession]] | CDPSession) -> None:
        self.page = page
        self._open: CDPSession | None = session if isinstance(session, CDPSession) else None
        self._opening = None if isinstance(session, CDPSession) else session

    async def session(self) -> CDPSession:
        if self._open is None:
            assert self._opening is not None
            self._open = await self._opening()
        return self._open

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        session = self._open or await self.session()
        return await session.send(method, params)

    def on(self, event: str, handler: EventHandler) -> Callable[[], None]:
        """Listens on an open session only (one from ``fork``, or once a command was sent)."""
        if self._open is None:
            raise RuntimeError("The channel's CDP session is not open yet: send a command (or fork) first.")
        session = self._open
        session.on(event, handler)
        return lambda: session.remove_listener(event, handler)

    def translate(self, error: Exception, doing: str, timeout: float | None) -> Exception:
        return translate(error, doing, timeout)

    async def fork(self) -> PlaywrightChannel:
        return PlaywrightChannel(self.page, await self.page.context.new_cdp_session(self.page))

    async def detach(self) -> None:
        if self._open is not None:
            await self._open.detach()


def viewport_of(page: PWPage) -> Viewport:
    """Where a thumbnail is taken: the viewport size Playwright set, known without a round trip."""
    async def viewport() -> tuple[float, float, float, float]:
        size = page.viewport_size or {"width": 1280, "height": 720}
        return 0, 0, size["width"], size["height"]
    return viewport
