"""What an action changed, in a few lines: URL, title, new tabs, console errors.

An action handler takes ``before = await observe(session)`` first, acts, then calls
``await report(session, before, response)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from webhand.page.diff import report_snapshot_changes
from webhand.response import Response
from webhand.session.session import Session

_MAX_CONSOLE_LINES = 5


@dataclass(frozen=True)
class Observation:
    url: str
    title: str
    tab_ids: frozenset[int]
    console_seen: int
    events_seen: int


async def observe(session: Session) -> Observation:
    tab = await session.tab()
    tabs = frozenset(t.index for t in session.context.tabs if not t.closed)
    return Observation(tab.url, await tab.title(), tabs, session.console_seen, session.events_seen)


async def report(session: Session, before: Observation, response: Response) -> None:
    tab = await session.tab()
    await tab.wait_for_load(timeout=session.settings.timeout)
    if tab.url != before.url:
        response.add(f"Navigated to {tab.url}")
        title = await tab.title()
        if title:
            response.add(f"Title: {title}")
    else:
        title = await tab.title()
        if title != before.title:
            response.add(f"Title changed to: {title}")
    for new in [t for t in session.context.tabs if not t.closed and t.index not in before.tab_ids]:
        response.add(f"Opened tab {new.index}: {new.url or 'about:blank'} (browser_tabs to switch to it)")
    new_events = session.events_seen - before.events_seen
    if new_events > 0:
        for text in list(session.events)[-min(new_events, len(session.events)):]:
            response.add(text)
    new_entries = session.console_seen - before.console_seen
    if new_entries > 0:
        entries = list(session.console)[-min(new_entries, len(session.console)):]
        errors = [e for e in entries if e.level in ("error", "pageerror")]
        for entry in errors[:_MAX_CONSOLE_LINES]:
            response.add(f"Console {entry.level}: {entry.text[:300]}")
        if len(errors) > _MAX_CONSOLE_LINES:
            response.add(f"… and {len(errors) - _MAX_CONSOLE_LINES} more errors (browser_recent_console_logs).")
    await report_snapshot_changes(session, response)
