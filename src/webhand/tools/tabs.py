"""Tabs: list, open, focus and close.

Tabs keep the number they were given when they opened (0, 1, 2, ...), so a number never comes to
mean another tab. Tabs the page opens itself (target=_blank links, window.open) are tracked too;
the reply of the action that opened them says so. Closing a tab never runs its beforeunload
handler: the model asked to close it, and a "leave this page?" prompt would only be in the way.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field, field_validator

from webhand.durations import Timeout
from webhand.engine.driver import Tab
from webhand.errors import InvalidArgument, TabLimitReached, shorten
from webhand.response import TITLE_LIMIT, URL_LIMIT, WHOLE_URL, Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool
from webhand.tools.navigation import normalize_url

#: A tab's title is read from the page; a busy page must not hold up the whole list.
_TITLE_CAP_SECONDS = 2.0


class TabsArgs(PageArgs):
    action: Literal["list", "open", "focus", "close"] = Field(
        "list", description="list the tabs; open a new one; focus one (later page tools act on it); close one.")
    index: int | None = Field(None, ge=0, description="Tab number from the list, for focus and close (close defaults to the current tab).")
    url: str | None = Field(None, description="For open: the URL to load in the new tab (else it stays blank).")
    timeout: Timeout = None

    @field_validator("action", mode="before")
    @classmethod
    def _playwright_mcp_words(cls, value: Any) -> Any:
        """Playwright MCP's browser_tabs says "new" and "select" for open and focus."""
        return {"new": "open", "select": "focus"}.get(value, value) if isinstance(value, str) else value


@tool("browser_tabs", capability="tabs", destructive=True, during_dialog=True)
async def tabs(session: Session, args: TabsArgs, response: Response) -> None:
    """List, open, focus or close browser tabs. Page tools act on the focused tab."""
    if args.action == "open":
        open_tabs = [t for t in session.context.tabs if not t.closed]
        if len(open_tabs) >= session.settings.max_tabs:
            raise TabLimitReached(f"{len(open_tabs)} tabs are open in this session, the most allowed (max_tabs).",
                                  "Close one first with browser_tabs action=close index=N (browser_tabs lists them), "
                                  "then open again.")
        tab = await session.context.new_tab()
        session.activate(tab)
        session.told_tabs.add(tab.index)  # this reply names it; Session.run need not
        if args.url:
            result = await tab.navigate(normalize_url(args.url), wait_until="load",
                                        timeout=args.timeout or session.settings.timeout)
            response.add(f"Opened tab {tab.index} with {response.page(result.url, URL_LIMIT, WHOLE_URL)}" + (f" (HTTP {result.status})" if result.status else ""))
        else:
            response.add(f"Opened tab {tab.index} (blank).")
    elif args.action == "focus":
        tab = _find(session, args.index, "focus")
        session.activate(tab)
        await tab.bring_to_front()
        response.add(f"Tab {tab.index} is now the current tab.")
    elif args.action == "close":
        tab = _find(session, args.index, "close") if args.index is not None else await session.tab()
        await tab.close()
        response.add(f"Closed tab {tab.index}.")
    await _list(session, response)


def _find(session: Session, index: int | None, action: str) -> Tab:
    if index is None:
        raise InvalidArgument(f"To {action} a tab, give its `index`.", "Call browser_tabs to list the tabs and their numbers.")
    for tab in session.context.tabs:
        if tab.index == index and not tab.closed:
            return tab
    numbers = ", ".join(str(t.index) for t in session.context.tabs if not t.closed) or "none"
    raise InvalidArgument(f"There is no open tab {index} (open tabs: {numbers}).", "Call browser_tabs to list the tabs.")


async def _list(session: Session, response: Response) -> None:
    current = await session.tab()  # opens a blank tab if the last one was closed
    blocked = {d.tab: d for d in session.open_dialogs()}
    open_tabs = [t for t in session.context.tabs if not t.closed]
    lines, data = [], []
    for tab in open_tabs:
        marker = "*" if tab is current else "-"
        if tab.index in blocked:
            title = f"[{blocked[tab.index].kind} dialog open]"
        else:
            try:
                title = await asyncio.wait_for(tab.title(), _TITLE_CAP_SECONDS)
            except asyncio.TimeoutError:
                title = "[not responding]"
        lines.append(f"{marker} {tab.index}: {response.page(title or '(no title)', TITLE_LIMIT)} — "
                     f"{response.page(tab.url or 'about:blank', URL_LIMIT, WHOLE_URL)}")
        data.append({"index": tab.index, "title": shorten(title, TITLE_LIMIT), "url": shorten(tab.url, URL_LIMIT),
                     "current": tab is current})
    response.add(f"Tabs ({len(open_tabs)}, * = current):\n" + "\n".join(lines))
    response.data({"tabs": data})
