"""The tabs a person shared from the Chrome they run, as one session's context (the extension bridge,
relay.py). A ``CdpContext`` whose tabs are the person's: it never opens, closes or resizes one;
closing the session lets go of them (the debugger detaches) and leaves them as they were. Cookies
are read and written through a shared tab's own session, since the browser-wide Storage domain is
out of chrome.debugger's reach."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

from webhand.engine.cdp.connection import CdpConnection, guarded
from webhand.engine.cdp.context import CdpContext
from webhand.engine.cdp.relay import SHARED_TABS_CONTEXT, RelayClient, refused
from webhand.engine.cdp.tab import CdpTab
from webhand.engine.driver import Cookie, TabEvents
from webhand.errors import BrowserLaunchFailed

NOT_SHARED_HINT = ("In Chrome, click the webhand button in the toolbar of the tab to share and choose Share this tab, "
                   "then call the tool again.")


class SharedTabsContext(CdpContext):
    def __init__(self, connection: CdpConnection, client: RelayClient, events: TabEvents) -> None:
        # width 0: the person's tabs keep their own window size (no viewport emulation).
        super().__init__(connection, SHARED_TABS_CONTEXT, events, width=0, height=0, downloads_dir=None, policy=None,
                         proxy=None, owns_context=False)
        self.client = client

    async def share_in(self, timeout: float) -> None:
        """Take the shared tabs as this context's tabs (the debugger attaches to each)."""
        loop = asyncio.get_running_loop()
        waiting = []
        for target in await self.client.announce(timeout):
            if target not in self._by_target:
                waiting.append(self._waiting.setdefault(target, loop.create_future()))
        if waiting:
            await asyncio.wait(waiting, timeout=timeout)
        if not self.tabs:
            raise BrowserLaunchFailed("No tab of your Chrome is shared with webhand (the extension is connected).",
                                      NOT_SHARED_HINT)

    async def new_tab(self) -> CdpTab:
        if self.client.lost and not any(not tab.closed for tab in self.tabs):
            # What a session asks for when its tab is gone: say why it went, not that tabs cannot open.
            raise BrowserLaunchFailed(f"No tab of your Chrome is shared with webhand any more: {self.client.lost}.",
                                      NOT_SHARED_HINT)
        raise refused("Opening a new tab")

    async def close(self) -> None:
        """Let go of the tabs: they stay open, where they are, and the debugger detaches."""
        if self.closed:
            return
        self.closed = True
        for tab in list(self.tabs):
            tab.detached()
        self.tabs.clear()
        try:
            await asyncio.wait_for(self.client.release(), 5)
        except (TimeoutError, ConnectionError):
            pass
        shutil.rmtree(self._staging, ignore_errors=True)

    def _session(self) -> str:
        live = [tab for tab in self.tabs if not tab.closed]
        if not live:
            raise BrowserLaunchFailed("No tab of your Chrome is shared with webhand any more.", NOT_SHARED_HINT)
        return live[0].session_id

    async def cookies(self) -> list[Cookie]:
        async with guarded("Reading cookies", 30):
            raw = (await self.connection.send.Network.getAllCookies(session_id=self._session()))["cookies"]
        return [Cookie(c["name"], c["value"], c["domain"], c["path"], -1 if c.get("session") else c["expires"],
                       c["httpOnly"], c["secure"], c.get("sameSite", "Lax")) for c in raw]  # type: ignore[arg-type]

    async def _set_cookies(self, cookies: list[dict[str, Any]]) -> None:
        if cookies:
            await self.connection.send.Network.setCookies(params={"cookies": cookies},  # type: ignore[typeddict-item]
                                                          session_id=self._session())

    async def delete_cookies(self, *, name: str | None = None, domain: str | None = None,
                             path: str | None = None) -> None:
        async with guarded("Deleting cookies", 30):
            for cookie in await self.cookies():
                if (name is None or cookie.name == name) and (domain is None or cookie.domain == domain) \
                        and (path is None or cookie.path == path):
                    await self.connection.send.Network.deleteCookies(
                        params={"name": cookie.name, "domain": cookie.domain, "path": cookie.path},
                        session_id=self._session())

    async def set_storage_state(self, state: dict[str, Any], *, timeout: float) -> None:
        raise refused("Replacing the whole storage state of your own browser")
