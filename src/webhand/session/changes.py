"""What an action changed, in a few lines: URL, title, console errors, failed requests, and the
snapshot change.

Tabs the page opened and what it did on its own (dialogs, downloads) are reported for every tool
by ``Session.run``, so they are not repeated here.

An action handler takes ``before = await observe(session)`` first (which also starts watching
what the action sets off), acts, then calls ``await report(session, before, response)``: that
waits for the action's effects by events (its navigation, its requests, the DOM going quiet;
each capped, see Settings) and then says what changed. A batch calls ``settle`` between steps.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from webhand.engine.driver import ActionWatch, SettleCaps, Settled
from webhand.page.diff import report_snapshot_changes
from webhand.response import TITLE_LIMIT, URL_LIMIT, WHOLE_TITLE, WHOLE_URL, Response
from webhand.session.session import Session

_MAX_CONSOLE_LINES = 5
_MAX_REQUEST_LINES = 5


@dataclass(frozen=True)
class Observation:
    url: str
    # The title before the action, read while the action starts: its request goes out before the
    # action's, so it is the title from before, and nobody waits for its round trip meanwhile.
    title_read: asyncio.Future[str]
    console_seen: int
    watch: ActionWatch | None = None


def caps(session: Session, *, page_load: bool = False, typing: bool = False) -> SettleCaps:
    """The settle caps; ``page_load`` adds the quiet window a freshly loaded page is watched for;
    ``typing`` lets the wait end early when typing changed nothing but the field (the field's
    preparation counts the page's mutations, see ``settle.WATCH_DOM``)."""
    settings = session.settings
    return SettleCaps(settings.navigation_settle_cap, settings.request_settle_cap,
                      settings.dom_quiet_ms, settings.dom_quiet_cap,
                      settings.load_quiet_ms / 1000 if page_load else 0.0,
                      settings.dom_unchanged_ms if typing else 0, page_load)


async def observe(session: Session, *, typing: bool = False) -> Observation:
    """What the page is before an action, and the start of the watch on what it sets off."""
    tab = await session.tab()
    title = asyncio.ensure_future(tab.title())
    title.add_done_callback(lambda read: read.cancelled() or read.exception())  # read only by report
    return Observation(tab.url, title, session.console_seen, tab.watch(caps(session, typing=typing)))


async def settle(before: Observation) -> Settled | None:
    """Wait for what the action set off; may be called again after the next step of a batch."""
    return await before.watch.settle() if before.watch is not None else None


async def report(session: Session, before: Observation, response: Response) -> None:
    settled = await settle(before)
    tab = await session.tab()
    if tab.url != before.url:
        response.add(f"Navigated to {response.page(tab.url, URL_LIMIT, WHOLE_URL)}")
        title = await tab.title()
        if title:
            response.add(f"Title: {response.page(title, TITLE_LIMIT, WHOLE_TITLE)}")
    else:
        title = await tab.title()
        if title != await before.title_read:
            response.add(f"Title changed to: {response.page(title, TITLE_LIMIT, WHOLE_TITLE)}")
    new_entries = session.console_seen - before.console_seen
    if new_entries > 0:
        entries = list(session.console)[-min(new_entries, len(session.console)):]
        errors = [e for e in entries if e.level in ("error", "pageerror")]
        for entry in errors[:_MAX_CONSOLE_LINES]:
            response.add(f"Console {entry.level}: {response.clip(entry.text, 300)}")
        if len(errors) > _MAX_CONSOLE_LINES:
            response.add(f"… and {len(errors) - _MAX_CONSOLE_LINES} more errors (browser_recent_console_logs).")
    if settled is not None:
        report_requests(settled, response)
    await report_snapshot_changes(session, response, title=title)


def report_requests(settled: Settled, response: Response) -> None:
    """Failed requests and those still loading at the cap, in a few lines."""
    for failed in settled.failed_requests[:_MAX_REQUEST_LINES]:
        response.add(f"Request failed: {failed.method} {response.clip(failed.url, 200)} — {failed.reason}")
    if len(settled.failed_requests) > _MAX_REQUEST_LINES:
        response.add(f"… and {len(settled.failed_requests) - _MAX_REQUEST_LINES} more failed requests.")
    if settled.unfinished_requests:
        response.add(f"Still loading after {len(settled.unfinished_requests)} request(s) hit the wait cap: "
                     f"{response.clip(settled.unfinished_requests[0], 200)} "
                     "(browser_wait_for network_idle to wait longer).")
    if settled.navigation_unfinished:
        response.add("The page had not finished loading when the wait cap ran out (browser_wait_for to wait longer).")
