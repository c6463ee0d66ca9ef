"""One browser session: its tabs, the active tab, the console buffer and a lock.

A session is what a conversation (or one of its named sessions) keeps between calls. Calls on
one session are serialized by ``lock``; the manager runs different sessions in parallel.

It also holds what the page asked for on its own and waits to be answered: JavaScript dialogs
(which block the page's JavaScript until answered), a file chooser, and downloads. ``run``
executes one tool so that a dialog can never hang it (see there).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from webhand.config import Settings
from webhand.engine.driver import (BrowserHandle, ConsoleEntry, Context, Dialog, Download, Element, FileChooser, MouseButton, NetworkEntry, Tab,
                                   TabEvents)
from webhand.errors import DialogPending, InvalidArgument, PageCrashed, SessionClosed
from webhand.session.history import SessionHistory
from webhand.response import URL_LIMIT, Response, page_line
from webhand.session import recovery
from webhand.session.control import HumanControl
from webhand.session.video import TabVideo
from webhand.conversation_files import ConversationFiles

log = logging.getLogger("webhand.sessions")

#: How long an action waits for a tab or a download the page announced to actually begin.
ANNOUNCED_CAP_SECONDS = 5.0
#: How long a cancelled action may take to unwind after a dialog interrupted it.
_UNWIND_CAP_SECONDS = 2.0
#: The same after its page hung and was ended: the reply is due within the tool's timeout.
_HUNG_UNWIND_CAP_SECONDS = 0.3


if TYPE_CHECKING:  # only for the annotation: page code does not belong to a session's import
    from webhand.page.coordinates import ImageMap
    from webhand.page.snapshot import Snapshot


@dataclass(frozen=True)
class SessionKey:
    conversation: str
    name: str = "default"

    def __str__(self) -> str:
        return self.name if self.name != "default" else "default session"


class Session:
    def __init__(self, key: SessionKey, settings: Settings, browser: BrowserHandle, context: Context,
                 events: TabEvents, *, owns_browser: bool, files: ConversationFiles) -> None:
        self.key = key
        self.settings = settings
        self.files = files  # the conversation's own folder: downloads go there
        self.browser = browser
        self.context = context
        self.owns_browser = owns_browser
        self.placement: object | None = None  # where a pool put it (engine/pool.py Placement)
        # On a pool: resolved when the place it runs in went away (its endpoint was drained), and
        # the question whether that place's browser still answers (within a cap; asking drains a
        # silent one). Both set by session/placing.py; a call running then stops (see ``run``).
        self.lost: asyncio.Future[object] | None = None
        self.check_place: Callable[[float], Awaitable[bool]] | None = None
        self.console: deque[ConsoleEntry] = deque(maxlen=settings.console_buffer)
        self.network: deque[NetworkEntry] = deque(maxlen=settings.console_buffer)
        self.console_seen = 0  # entries ever recorded; lets an action report what it caused
        self.lock = asyncio.Lock()
        self.first_call_done = asyncio.Event()  # the manager prepares the next warm reserve after it
        self.created = time.monotonic()
        self.last_used = self.created
        self.created_at = time.time()  # wall clock, for people (the dashboard, browser_session_list)
        self.last_used_at = self.created_at
        # Names this session in dashboard URLs: unguessable, so a link never reaches another session.
        self.public_id = secrets.token_urlsafe(12)
        # This session's page in the dashboard while one is served (the manager sets it):
        # browser_request_human's link.
        self.dashboard_link: Callable[[], str | None] = lambda: None
        self.control = HumanControl()  # a person in the dashboard may take the session (control.py)
        self.history = SessionHistory(settings.history_keep, files.history / f"{key.name}-{self.public_id}.jsonl",
                                      files.ensure)
        self.notices: list[str] = []  # told to the model in the next reply, then cleared
        #: The clean-up of a cancelled call (conversation.py), which the next call waits for: its line.
        self.after_cancel: asyncio.Task[str] | None = None
        # Things the page did on its own (dialog opened, download finished, tab opened): an
        # action's reply lists those noted since the action began (see session/changes.py).
        self.events: deque[str] = deque(maxlen=200)
        self.events_seen = 0
        self.told_tabs: set[int] = set()  # tabs a tool opened and reported itself (browser_tabs open)
        # What the model last saw of the page: an action's reply tells what changed since (page/diff.py).
        self.last_snapshot: Snapshot | None = None
        # What the model last saw of each tab as pixels (by tab index, with the tab itself, as an
        # index is reused after a tab closes): the map of its last screenshot, which the coordinate
        # actions read their points by (page/coordinates.py), and where the pointer is on it.
        self._screenshots: dict[int, tuple[Tab, ImageMap | None]] = {}
        self.pointer: dict[int, tuple[float, float]] = {}
        self.held_button: dict[int, MouseButton] = {}  # a mouse button pressed and not released (browser_mouse_button_xy)
        self.secret_tabs: set[int] = set()  # tabs a secret was typed in: their pictures mask its fields (tools/interaction.py)
        self.closed = False
        self._closing: asyncio.Future[None] | None = None
        self.on_closed: list[object] = []  # callables run after close (the manager forgets the session)
        #: Work run at the start of close, while the context still answers (saving its storage state);
        #: each is capped by the operation timeout and cannot stop the close.
        self.before_close: list[Callable[[], Awaitable[None]]] = []
        self.profile: str | None = None  # the named profile this session's browser runs on (profiles.py)
        self._active: Tab | None = context.tabs[0] if context.tabs else None
        self._replacing = False  # the active tab was ended by recovery: open a fresh one in its place
        self.dialogs: list[Dialog] = []  # open JavaScript dialogs, oldest first
        self.dialog_opened = asyncio.Event()  # set when one opens; cleared by whoever waits for the next
        self.file_chooser: FileChooser | None = None  # the last file chooser the page opened, until answered
        self.downloads: list[Download] = []
        self.video: TabVideo | None = None  # a recording of the active tab in progress (browser_recording)
        self._saving: set[asyncio.Future[None]] = set()
        self._page_news = asyncio.Event()  # a tab, a download or a dialog began: what ``_settle`` waits for
        self._told_in_progress: set[int] = set()
        self._interrupt: asyncio.Future[None] | None = None  # resolved when a dialog opens during a tool
        events.console = self._record_console
        events.request = self.network.append
        events.dialog = self._on_dialog
        events.file_chooser = self._on_file_chooser
        events.download = self._on_download
        events.tab_opened = lambda _: self._page_news.set()

    # -- state ---------------------------------------------------------------------------------
    def _record_console(self, entry: ConsoleEntry) -> None:
        self.console.append(entry)
        self.console_seen += 1

    def note(self, text: str) -> None:
        """Record something the page did, for the reply of the action that caused it."""
        self.events.append(text)
        self.events_seen += 1

    def _on_dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog)
        self.dialog_opened.set()
        self._page_news.set()
        self.note(describe_dialog(dialog))
        if self._interrupt is not None and not self._interrupt.done():
            self._interrupt.set_result(None)

    def _on_file_chooser(self, chooser: FileChooser) -> None:
        self.file_chooser = chooser
        files = "files" if chooser.multiple else "a file"
        self.note(f"A file chooser opened in tab {chooser.tab}, asking for {files}: "
                  "call browser_upload_file with the paths to choose.")

    def _on_download(self, download: Download, saving: Awaitable[None]) -> None:
        self.downloads.append(download)
        self._page_news.set()
        future = asyncio.ensure_future(saving)
        self._saving.add(future)

        def finished(done: asyncio.Future[None]) -> None:
            self._saving.discard(done)
            if download.path is None and download.error is None:  # the driver did not say why
                download.error = "it was interrupted" if done.cancelled() else str(done.exception() or "unknown error")
            if download.path is not None:
                self.note(f"Downloaded {page_line(download.name)} ({download.size:,} bytes) to {download.path}")
            else:
                self.note(f"Download of {page_line(download.name)} failed: {page_line(download.error)}. Try the action again, "
                          "or check the link with browser_snapshot.")

        future.add_done_callback(finished)

    def touch(self) -> None:
        self.last_used = time.monotonic()
        self.last_used_at = time.time()

    @property
    def status(self) -> str:
        """idle, busy (a call runs), crashed (browser or active page died) or closing."""
        if self.closed:  # closed sessions leave the manager's list once their browser is gone
            return "closing"
        tab = self._active
        if not self.browser.alive or (tab is not None and not tab.closed and tab.liveness.crashed):
            return "crashed"
        return "busy" if self.lock.locked() else "idle"

    def idle_for(self) -> float:
        return time.monotonic() - self.last_used

    @property
    def alive(self) -> bool:
        return not self.closed and self.browser.alive and not self.place_lost

    @property
    def place_lost(self) -> bool:
        """The pool endpoint this session ran on was drained (its connection may still look open)."""
        return self.lost is not None and self.lost.done()

    # -- tabs ----------------------------------------------------------------------------------
    async def tab(self) -> Tab:
        """The active tab; if the model closed it (or the page closed itself), the newest open one."""
        if self.closed:
            raise SessionClosed(f"The {self.key} is closed.", "Call the tool again to start a new one.")
        if self._active is None or self._active.closed:
            open_tabs = [t for t in self.context.tabs if not t.closed]
            if open_tabs and not self._replacing:
                self._active = open_tabs[-1]
            else:
                self._active = await self.context.new_tab()
                if self._replacing:
                    self.told_tabs.add(self._active.index)  # the recovery message said it
            self._replacing = False
        return self._active

    @property
    def active_tab(self) -> Tab | None:
        return self._active

    def activate(self, tab: Tab) -> None:
        self._active = tab
        self._replacing = False

    def replace_active_tab(self) -> None:
        """The active tab's page crashed or hung and was ended: the next use opens a fresh tab in its
        place (rather than switching to another tab the model did not choose)."""
        self._active = None
        self._replacing = True

    def saw_screenshot(self, tab: Tab, seen: ImageMap | None) -> None:
        """The model was just given a screenshot of ``tab`` (``None``: one whose pixels map to no
        page point, an element's): the coordinate actions read their points on it from now on."""
        self._screenshots[tab.index] = (tab, seen)
        self.pointer.pop(tab.index, None)  # the pointer's point was on the last picture

    def last_screenshot(self, tab: Tab) -> tuple[bool, ImageMap | None]:
        """Whether the model was given a screenshot of ``tab``, and the map of the last one."""
        seen = self._screenshots.get(tab.index)
        if seen is None or seen[0] is not tab:
            return False, None
        return True, seen[1]

    async def element(self, ref: str | None, selector: str | None, timeout: float | None = None) -> Element:
        """The element an action names: by ref (exact, never re-matched) or by CSS selector."""
        tab = await self.tab()
        timeout = timeout or self.settings.action_timeout
        if ref:
            return await tab.refs.resolve(ref, timeout=timeout)
        if selector:
            return await tab.refs.query(selector, timeout=timeout)
        raise InvalidArgument("Name the element with `ref` (from browser_snapshot) or `selector`.",
                              "Call browser_snapshot to get refs.")

    # -- running a tool ------------------------------------------------------------------------
    def open_dialogs(self) -> list[Dialog]:
        """Dialogs still waiting; those of tabs that closed since are forgotten."""
        open_tabs = {t.index for t in self.context.tabs if not t.closed}
        self.dialogs = [d for d in self.dialogs if d.tab in open_tabs]
        return self.dialogs

    async def answer_dialog(self, dialog: Dialog, accept: bool, prompt_text: str | None, timeout: float) -> None:
        """Accept or dismiss ``dialog`` (the agent's browser_handle_dialog, or a person in the dashboard)."""
        # Taken off the list first: answering may open the next dialog at once (confirm, then alert).
        self.dialogs.remove(dialog)
        try:
            if accept:
                await dialog.accept(prompt_text, timeout=timeout)
            else:
                await dialog.dismiss(timeout=timeout)
        except Exception:  # not answered: it is still open (a cancellation means the next dialog came)
            self.dialogs.insert(0, dialog)
            raise

    def refuse_if_dialog(self) -> None:
        dialogs = self.open_dialogs()
        if dialogs:
            raise DialogPending(f"A JavaScript dialog blocks the page: {describe_dialog(dialogs[0], hint=False)}.",
                                "Call browser_handle_dialog (accept true or false) first, then call this tool again.")

    async def run(self, work: Callable[[], Awaitable[None]], response: Response, *, during_dialog: bool = False,
                  timeout: float | None = None) -> None:
        """Run one tool's work; reply with what the page did meanwhile (dialogs, downloads, choosers).

        An open dialog blocks the page's JavaScript, so a tool that needs the page would wait for
        ever: tools are refused while a dialog is open (except those that answer it), and a tool
        that opens one is stopped there and replies with the dialog instead of hanging. A crashed
        or hung page is replaced by a fresh tab (recovery.py); ``timeout`` is the tool's own.
        """
        timeout = timeout or self.settings.timeout
        if self.place_lost:
            raise _place_gone()
        for line in await recovery.replace_crashed(self):  # crashed since the last call
            response.add(line)
        if not during_dialog:
            self.refuse_if_dialog()
        seen = self.events_seen
        tabs_before = {t.index for t in self.context.tabs}
        interrupt = self._interrupt = asyncio.get_running_loop().create_future()

        def place_went(_: object) -> None:  # the endpoint was drained: stop waiting for its browser
            if not interrupt.done():
                interrupt.set_result(None)

        if self.lost is not None:
            self.lost.add_done_callback(place_went)
        task = asyncio.ensure_future(work())
        verdict = recovery.ANSWERING
        try:
            verdict = await recovery.watch(task, interrupt, lambda: self._active, timeout,
                                           lambda: bool(self.open_dialogs()), self.check_place)
            if verdict.kind == "stalled" and verdict.tab is not None and not self.place_lost:
                response.add(await recovery.stop_stalled(verdict.tab, verdict.url, timeout))
            if verdict.kind != "hung":
                await asyncio.wait({task, interrupt}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the call ran out of time: stop the work, skip the report
            await _stop(task)
            raise
        finally:
            self._interrupt = None
            if self.lost is not None:
                self.lost.remove_done_callback(place_went)
        if self.place_lost:
            # Nothing more is asked of a browser that went away: the work is dropped (its requests
            # are abandoned, engine/capped.py) and the caller says which endpoint was lost.
            await _stop(task, _HUNG_UNWIND_CAP_SECONDS)
            raise _place_gone()
        try:
            if verdict.kind == "hung" and verdict.tab is not None:  # end the page first: the work then unwinds at once
                raise await recovery.end_hung(self, verdict.tab, response.tool, timeout)
            if task.done():
                try:
                    task.result()  # the tool's own error, reported after what the page did meanwhile
                except PageCrashed:
                    raise await recovery.crashed_during(self, response.tool) from None
        finally:
            # Still running: a dialog opened (the work cannot finish until it is answered) or the page
            # hung (the reply is due now). Done: its outcome is retrieved.
            await _stop(task, _HUNG_UNWIND_CAP_SECONDS if verdict.kind == "hung" else _UNWIND_CAP_SECONDS)
            for line in await recovery.replace_crashed(self, then="the next call opens a fresh tab"):
                response.add(line)  # crashed under a tool that still finished
            await self._settle()
            await self._tell_new_tabs(tabs_before, response)
            self._tell_events_since(seen, response)

    async def until_news(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Wait (capped) until ``ready()`` holds, checking again whenever a tab, a download or a
        dialog begins; whether it holds. For a caller that knows one is due: a flow's step that
        started a download when it was recorded, whose click settled before the browser told."""
        deadline = time.monotonic() + timeout
        while not ready():
            self._page_news.clear()
            if ready():  # it came between the check and the clear
                break
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._page_news.wait(), left)
        return True

    async def _settle(self) -> None:
        """Wait (capped) for the tabs and downloads the tool set off, so that its reply can report them."""
        deadline = time.monotonic() + ANNOUNCED_CAP_SECONDS
        while (self.context.expecting_tab() or self.context.expecting_download()) \
                and (left := deadline - time.monotonic()) > 0:
            self._page_news.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._page_news.wait(), left)
        if self._saving:
            await asyncio.wait(set(self._saving), timeout=self.settings.timeout)
        for download in self.downloads:
            if not download.finished and id(download) not in self._told_in_progress:
                self._told_in_progress.add(id(download))
                self.note(f"Download of {page_line(download.name)} is still in progress; browser_downloads shows it when done.")

    async def _tell_new_tabs(self, before: set[int], response: Response) -> None:
        """Tabs the page opened during the tool, once loaded (a tool that opened one itself said so).
        Past ``max_tabs`` the newest tabs the page opened are closed, and the reply says so: a page
        that opens popups in a loop must not grow the session's memory without bound."""
        await self._close_tabs_past_the_limit(response)
        for tab in [t for t in self.context.tabs if t.index not in before and not t.closed]:
            if tab.index not in self.told_tabs:
                await tab.wait_for_load(timeout=self.settings.timeout)
                response.add(f"Opened tab {tab.index}: {response.page(tab.url or 'about:blank', URL_LIMIT)} "
                             "(browser_tabs to switch to it)")

    async def _close_tabs_past_the_limit(self, response: Response) -> None:
        open_tabs = [t for t in self.context.tabs if not t.closed]
        excess = len(open_tabs) - self.settings.max_tabs
        if excess <= 0:
            return
        # The newest go (popups come last); the tab the model works in stays.
        closing = [t for t in reversed(open_tabs) if t is not self._active][:excess]
        closed: list[str] = []
        for tab in sorted(closing, key=lambda t: t.index):
            url = tab.url or "about:blank"
            with contextlib.suppress(Exception):  # a tab that closed itself meanwhile is closed all the same
                await asyncio.wait_for(tab.close(), self.settings.timeout)
            self.told_tabs.add(tab.index)
            closed.append(f"{tab.index} ({response.page(url, URL_LIMIT)})")
        response.add(f"The page opened more tabs than max_tabs ({self.settings.max_tabs}) allows; webhand closed "
                     f"the newest: tab {', '.join(closed)}. Close tabs you no longer need with browser_tabs "
                     "action=close to make room.")

    def _tell_events_since(self, seen: int, response: Response) -> None:
        new = min(self.events_seen - seen, len(self.events))
        for text in list(self.events)[-new:] if new > 0 else []:
            response.add(text)

    # -- end -----------------------------------------------------------------------------------
    async def close(self) -> None:
        """Close the session; a second call (the conversation ending while webhand shuts down)
        waits for the closing under way, so that nothing is torn down beneath it."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())
        await asyncio.shield(self._closing)

    async def _close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            if self.video is not None:
                await self._save_recording(self.video)
            for work in self.before_close:
                try:
                    await asyncio.wait_for(work(), self.settings.timeout)
                except (Exception, asyncio.TimeoutError) as error:  # noqa: BLE001 - the close goes on
                    log.warning("before closing the %s: %s", self.key, error)
            await self.context.close()
            if self.owns_browser:
                await self.browser.close()
        finally:
            for callback in self.on_closed:
                callback()  # type: ignore[operator]

    async def _save_recording(self, video: TabVideo) -> None:
        """A recording still running when the session closes (idle, the conversation's end, a
        shutdown) is saved, not dropped. Nobody is left to tell, so the log says where it went."""
        self.video = None
        try:
            seconds = await asyncio.wait_for(video.stop(), self.settings.timeout)
            if video.frames:
                path, _ = await asyncio.wait_for(video.save(seconds, self.files), self.settings.timeout)
                log.warning("the %s closed while recording tab %d: saved %.1f s of it as %s",
                            self.key, video.tab.index, seconds, path)
        except (Exception, asyncio.TimeoutError) as error:  # noqa: BLE001 - the close goes on
            log.warning("the %s closed while recording; the recording was lost: %s", self.key, error)


def describe_dialog(dialog: Dialog, *, hint: bool = True) -> str:
    """One line for the model: which dialog, in which tab, and how to answer it."""
    text = f"{dialog.kind} dialog in tab {dialog.tab}: {dialog.message[:500]!r}"
    if dialog.kind == "prompt" and dialog.default_value:
        text += f" (default answer {dialog.default_value!r})"
    if not hint:
        return text
    how = {
        "alert": "browser_handle_dialog to close it",
        "confirm": "browser_handle_dialog with accept true (OK) or false (Cancel)",
        "prompt": "browser_handle_dialog with accept true and prompt_text, or accept false to cancel",
        "beforeunload": "browser_handle_dialog with accept true to leave the page, or false to stay",
    }.get(dialog.kind, "browser_handle_dialog")
    article = "An" if dialog.kind[:1] in "aeiou" else "A"
    return f"{article} {text} opened. The page waits for it: call {how}."


def _place_gone() -> SessionClosed:
    """The error of a call whose pool endpoint was drained under it (session/placing.py's
    ``explain_closed`` names the endpoint and the reason)."""
    return SessionClosed("The browser endpoint of this session was lost while the call ran.",
                         "Call the tool again: it runs in a fresh session on an endpoint that is up.")


async def _stop(task: asyncio.Future[None], cap: float = _UNWIND_CAP_SECONDS) -> None:
    """Cancel a tool's work and let it unwind, briefly: its clean-up may touch the blocked page."""
    deadline = time.monotonic() + cap
    while not task.done() and (left := deadline - time.monotonic()) > 0:
        task.cancel()
        await asyncio.wait({task}, timeout=min(left, 0.5))  # cancel again if its clean-up hangs
    if task.done() and not task.cancelled():
        task.exception()  # retrieved, so that asyncio does not log it: the dialog is the news
    elif not task.done():  # left to finish on its own: its outcome is no news either
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
