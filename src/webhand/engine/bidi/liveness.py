"""Whether a Firefox tab's page crashed: its content process died (a crash, or the OOM killer's SIGKILL).

WebDriver BiDi has no crash event (Chromium's CDP has ``Inspector.targetCrashed``), and the tab's
browsing context lives on. Firefox's frontend shows its crash page in the tab instead, which BiDi
reports as a navigation of the main frame: ``browsingContext.navigationCommitted`` to
``about:tabcrashed?e=tabcrashed&u=<the lost page's URL>``. That page lives in the parent process,
so every script command on the tab then fails with "unsupported operation: ... not supported for
parent process browsing contexts".

The crash page comes a few tenths of a second after the process died. Meanwhile the page's realm
is destroyed with no navigation started (every navigation, a history one too, starts with
``browsingContext.navigationStarted`` first), and Firefox shows a blank document for a moment,
which would answer a command (a snapshot of about:blank). So a document that went away that way
makes the next command wait for what comes of it (the crash page, the tab closed, a navigation),
capped; and a command that failed on the crash page before its event came waits for the event.

``Liveness`` is owned by ``BidiTab`` (tab.py): the tab's ``crashed`` is read here, and a command
that failed on the crash is told as what it is (``PageCrashed``: the session replaces the tab,
session/recovery.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from webhand.engine.driver import JavaScriptConsole
from webhand.errors import PageCrashed, WebhandError

#: Firefox's crash page, which replaces a page whose content process died.
CRASH_PAGE = "about:tabcrashed"
#: What Firefox answers a script command sent to a tab that shows a parent-process page (the crash page).
_PARENT_PROCESS = "not supported for parent process browsing contexts"
#: How long a command waits for the crash page once the page's document went away without a
#: navigation, or once it failed on the crash page (measured: 0.1 to 0.3 s after the process died).
_CRASH_EVENT_CAP_SECONDS = 2.0


class Tracker(Protocol):
    activity: Any

    async def until(self, condition: Callable[[], bool], seconds: float) -> bool: ...


class LivenessTab(Protocol):
    """What the hang test, stopping and ending need of the tab (tab.py's ``BidiTab``)."""

    console: JavaScriptConsole

    async def call(self, function: str, args: list[Any], *, doing: str, timeout: float) -> Any: ...

    async def close(self) -> None: ...


class Liveness:
    """A Firefox tab's ``liveness`` component (``driver.Liveness``)."""

    def __init__(self, tab: LivenessTab, tracker: Tracker, navigations_started: Callable[[], int],
                 closed: Callable[[], bool]) -> None:
        self._tab = tab
        self.crashed = False
        self._tracker = tracker
        self._navigations_started = navigations_started
        self._closed = closed
        self._page_realm: tuple[str, int] | None = None  # the main frame document's realm, and the navigations started then
        self._document_lost = False  # that realm went away with no navigation: the process died, or the tab closes

    def shows(self, url: str) -> bool:
        """The main frame reported ``url`` (an event of its navigation): True when it is the crash
        page, or the page crashed before (the tab's page is gone, whatever comes next)."""
        if url.startswith(CRASH_PAGE):
            self.crashed = True
        elif url:
            self._document_lost = False
        return self.crashed

    def realm_created(self, params: dict[str, Any]) -> None:
        """A realm of the main frame was created (``script.realmCreated``)."""
        if params.get("type") == "window" and not params.get("sandbox"):
            self._page_realm = (params.get("realm", ""), self._navigations_started())

    def realm_destroyed(self, realm: str) -> None:
        """A realm went away (``script.realmDestroyed``, which names no browsing context)."""
        if self._page_realm is not None and self._page_realm[0] == realm:
            self._document_lost = self._page_realm[1] == self._navigations_started()
            self._page_realm = None
            self._tracker.activity.set()

    async def before_command(self) -> None:
        """Wait (capped) for what comes of a document that went away without a navigation."""
        if self._document_lost and not self.crashed:
            await self._tracker.until(lambda: self.crashed or self._closed() or not self._document_lost,
                                      _CRASH_EVENT_CAP_SECONDS)
            self._document_lost = False  # whatever came (or nothing): one wait per lost document

    async def explain(self, error: WebhandError, doing: str) -> WebhandError:
        """``error`` as the crash it is, when the tab's page crashed under the command; else ``error``."""
        if not self.crashed and _PARENT_PROCESS in str(error):
            await self._tracker.until(lambda: self.crashed, _CRASH_EVENT_CAP_SECONDS)
        if self.crashed:
            return PageCrashed(f"{doing} failed: the page crashed.", "Call the tool again: it runs in a fresh tab.")
        return error

    # asked by webhand --------------------------------------------------------------------------
    async def ping(self) -> str | None:
        await self._tab.call("() => true", [], doing="Pinging the page", timeout=3600)
        return None

    async def stop_loading(self) -> None:
        await self._tab.console.evaluate("window.stop()", await_promise=False, timeout=10)

    async def end(self) -> None:
        await self._tab.close()
