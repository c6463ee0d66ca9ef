"""What a page says: its uncaught errors, the console of its context, and what it asks of its
user (JavaScript dialogs and file choosers, held until answered).

Playwright dismisses a dialog itself only when nobody listens; webhand always listens, so a
dialog stays open until the session answers it (browser_handle_dialog). A file chooser is
intercepted the same way: the click that opens it returns, and the chooser waits for files.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from playwright.async_api import BrowserContext as PWContext
from playwright.async_api import Dialog as PWDialog
from playwright.async_api import Error as PWError
from playwright.async_api import FileChooser as PWFileChooser
from playwright.async_api import Page as PWPage

from webhand.engine.console_events import stamp_time
from webhand.engine.driver import ConsoleEntry, TabEvents
from webhand.engine.pw.errors import translate, translated


class PlaywrightDialog:
    def __init__(self, dialog: PWDialog, tab: int) -> None:
        self.dialog = dialog
        self.kind = dialog.type
        self.message = dialog.message
        self.default_value = dialog.default_value
        self.tab = tab

    async def accept(self, prompt_text: str | None, *, timeout: float) -> None:
        page = self.dialog.page
        if self.kind == "beforeunload" and page is not None and not page.is_closed():
            # Leaving was allowed: return once the navigation that asked has committed, so the
            # reply can say where the tab went (capped: a page may also just stay).
            try:
                async with page.expect_event("framenavigated", lambda f: f.parent_frame is None, timeout=timeout * 1000):
                    await self._answer(self.dialog.accept(), timeout)
            except PWError:
                pass
            return
        await self._answer(self.dialog.accept(prompt_text) if prompt_text is not None else self.dialog.accept(), timeout)

    async def dismiss(self, *, timeout: float) -> None:
        await self._answer(self.dialog.dismiss(), timeout)

    async def _answer(self, answer: object, timeout: float) -> None:
        try:
            await asyncio.wait_for(answer, timeout)  # type: ignore[arg-type]
        except asyncio.TimeoutError:
            raise translate(TimeoutError("timeout"), f"Answering the {self.kind} dialog", timeout) from None
        except PWError as error:
            if "no dialog is showing" in str(error).lower() or "closed" in str(error).lower():
                return  # the page went away, or the dialog closed itself: nothing is left to answer
            raise translate(error, f"Answering the {self.kind} dialog", timeout) from None


class PlaywrightFileChooser:
    def __init__(self, chooser: PWFileChooser, tab: int) -> None:
        self.chooser = chooser
        self.tab = tab
        self.multiple = chooser.is_multiple()

    async def set_files(self, paths: list[str], *, timeout: float) -> None:
        async with translated("Choosing the files", timeout):
            await self.chooser.set_files(paths, timeout=timeout * 1000)


class PlaywrightPageEvents:
    """What one page says, handed to the session: its uncaught errors, its dialogs and its file
    choosers. (Its console messages are heard on the context: ``ContextConsole``.)"""

    def __init__(self, page: PWPage, events: TabEvents, tab: int) -> None:
        self._events = events
        self._tab = tab
        page.on("pageerror", self._on_page_error)
        page.on("dialog", self._on_dialog)
        page.on("filechooser", self._on_file_chooser)  # listening makes Playwright intercept choosers

    def _on_page_error(self, error: Any) -> None:
        if self._events.console:
            self._events.console(ConsoleEntry("pageerror", str(error), "", self._tab))

    def _on_dialog(self, dialog: Any) -> None:
        if self._events.dialog:
            self._events.dialog(PlaywrightDialog(dialog, self._tab))
        else:  # nobody to ask: behave like a headless browser and dismiss, so the page never hangs
            asyncio.ensure_future(PlaywrightDialog(dialog, self._tab).dismiss(timeout=5))

    def _on_file_chooser(self, chooser: Any) -> None:
        if self._events.file_chooser:
            self._events.file_chooser(PlaywrightFileChooser(chooser, self._tab))


class ConsoleTagger(Protocol):
    def tag_console(self, entry: ConsoleEntry, timestamp: float) -> None:
        """Say whether ``entry`` came from an iframe, once the tab's CDP session tells (cdp_session.py)."""


class ConsoleTab(Protocol):
    """What the context's console needs of a tab."""

    @property
    def page(self) -> PWPage: ...
    @property
    def index(self) -> int: ...
    @property
    def cdp_session(self) -> ConsoleTagger: ...


class ContextConsole:
    """The console messages of a context's pages and workers. Heard on the context rather than per
    page: the context knows a service worker's message (no page) and a dedicated worker's (a page
    and a worker) from the page's own."""

    def __init__(self, context: PWContext, events: TabEvents, tabs: Sequence[ConsoleTab]) -> None:
        self._events = events
        self._tabs = tabs  # the context's own list, kept current by the context
        context.on("console", self._on_console)

    def _on_console(self, message: Any) -> None:
        if not self._events.console:
            return
        location = message.location or {}
        where = f"{location.get('url', '')}:{location.get('lineNumber', 0) + 1}" if location.get("url") else ""
        tab = next((t for t in self._tabs if message.page is not None and t.page is message.page), None)
        source = ("worker" if message.page is not None else "sw") if message.worker is not None else ""
        entry = ConsoleEntry(message.type, message.text, where, tab.index if tab else -1, source,
                             stamp_time(message.timestamp))
        if tab is not None and not source:
            tab.cdp_session.tag_console(entry, message.timestamp)  # an iframe's? CDP tells (cdp_session.py)
        self._events.console(entry)
