"""A JavaScript dialog on a Firefox tab (the Driver's ``Dialog``): a user prompt Firefox reported
(``browsingContext.userPromptOpened``), answered with ``browsingContext.handleUserPrompt``."""

from __future__ import annotations

from typing import Any, Protocol

from webhand.engine import settle
from webhand.engine.bidi.connection import BidiConnection, guarded


class DialogTab(Protocol):
    """What a dialog needs of its tab (tab.py's ``BidiTab``)."""

    connection: BidiConnection
    context_id: str
    index: int
    tracker: settle.RequestTracker


class BidiDialog:
    """A user prompt Firefox reported (``browsingContext.userPromptOpened``)."""

    def __init__(self, tab: DialogTab, params: dict[str, Any]) -> None:
        self._tab = tab
        self.kind = params.get("type", "alert")
        self.message = params.get("message", "")
        self.default_value = params.get("defaultValue", "") or ""
        self.tab = tab.index

    async def accept(self, prompt_text: str | None, *, timeout: float) -> None:
        params: dict[str, Any] = {"context": self._tab.context_id, "accept": True}
        if prompt_text is not None and self.kind == "prompt":
            params["userText"] = prompt_text
        commits = self._tab.tracker.commits
        async with guarded("Accepting the dialog", timeout):
            await self._tab.connection.send("browsingContext.handleUserPrompt", params)
        if self.kind == "beforeunload":
            # Firefox answers before the page it lets go is replaced: the reply is about where the tab
            # went, so the new document's commit is waited for (capped).
            await self._tab.tracker.until(lambda: self._tab.tracker.commits > commits, timeout)

    async def dismiss(self, *, timeout: float) -> None:
        async with guarded("Dismissing the dialog", timeout):
            await self._tab.connection.send("browsingContext.handleUserPrompt",
                                            {"context": self._tab.context_id, "accept": False})
