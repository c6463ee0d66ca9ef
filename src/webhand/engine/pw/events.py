"""What a page asks of its user: JavaScript dialogs and file choosers, held until answered.

Playwright dismisses a dialog itself only when nobody listens; webhand always listens, so a
dialog stays open until the session answers it (browser_handle_dialog). A file chooser is
intercepted the same way: the click that opens it returns, and the chooser waits for files.
"""

from __future__ import annotations

import asyncio

from playwright.async_api import Dialog as PWDialog
from playwright.async_api import Error as PWError
from playwright.async_api import FileChooser as PWFileChooser

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
