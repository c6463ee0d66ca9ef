"""What an action changed, in a few lines: URL, title, console errors, failed requests, and the
snapshot change.

Tabs the page opened and what it did on its own (dialogs, downloads) are reported for every tool
by ``Session.run``, so they are not repeated here.

An action handler takes ``before = await observe(session)`` first (which also starts watching
what the action sets off), acts, then calls ``await report(session, before, response)``: that
waits for the action's effects by events (its navigation, its requests, the DOM going quiet;
each capped, see Settings) and then says what changed. A batch calls ``settle`` between steps,
and ``begin`` before the next.

Actions name themselves (``observe(action="click")``): then the watch follows, in the page, the
work the action schedules (settle.WORK_HUB) and, when the page did not change, the reply says
what the wait saw ("No change seen within 1 s of the click.") rather than only comparing snapshots.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

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
    action: str | None = None  # what the action is called in the reply ("click"), when it names itself


def caps(session: Session, *, page_load: bool = False, typing: bool = False, effects: bool = False) -> SettleCaps:
    """The settle caps; ``page_load`` adds the quiet window a freshly loaded page is watched for;
    ``typing`` lets the wait end early when typing changed nothing but the field (the field's
    preparation counts the page's mutations, see ``settle.WATCH_DOM``); ``effects`` follows the
    work the action schedules in the page (``effects_settle_cap``). Only typing takes the short
    path: a click or key that submits a form may start its navigation after that path's end."""
    settings = session.settings
    return SettleCaps(settings.navigation_settle_cap, settings.request_settle_cap,
                      settings.dom_quiet_ms, settings.dom_quiet_cap,
                      settings.load_quiet_ms / 1000 if page_load else 0.0,
                      settings.dom_unchanged_ms if typing else 0, page_load,
                      settings.effects_settle_cap if effects else 0.0)


async def observe(session: Session, *, typing: bool = False, action: str | None = None,
                  prepared: bool = False) -> Observation:
    """What the page is before an action, and the start of the watch on what it sets off.

    ``action`` (the reply's word for it: "click") also follows the work it schedules in the page,
    from here on (sent, not awaited, see ``ActionWatch.begin``; ``prepared``: the action starts that
    itself, as typing does)."""
    tab = await session.tab()
    title = asyncio.ensure_future(tab.title())
    title.add_done_callback(lambda read: read.cancelled() or read.exception())  # read only by report
    watch = tab.watch(caps(session, typing=typing, effects=action is not None))
    if action is not None and not prepared:
        watch.begin()
    return Observation(tab.url, title, session.console_seen, watch, action)


async def settle(before: Observation) -> Settled | None:
    """Wait for what the action set off; may be called again after the next step of a batch."""
    return await before.watch.settle() if before.watch is not None else None


async def report(session: Session, before: Observation, response: Response) -> None:
    settled = await settle(before)
    tab = await session.tab()
    moved = tab.url != before.url
    if moved:
        response.add(f"Navigated to {response.page(tab.url, URL_LIMIT, WHOLE_URL)}")
        title = await tab.title()
        if title:
            response.add(f"Title: {response.page(title, TITLE_LIMIT, WHOLE_TITLE)}")
    else:
        title = await tab.title()
        if title != await before.title_read:
            moved = True
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
        report_requests(settled, response, page_url=tab.url)
        if settled.pending_work:
            response.add(f"Still pending after {_seconds(settled.seconds)}: {', '.join(settled.pending_work)} "
                         "(browser_wait_for to give it longer).")
    unchanged = None if moved else _no_change(settled, before.action)  # a new URL or title is a change
    await report_snapshot_changes(session, response, title=title, unchanged=unchanged)


def _seconds(seconds: float) -> str:
    """Rounded down: "no change within 1 s" stays true of a wait that lasted 1.06 s."""
    return f"{math.floor(seconds * 10) / 10:.1f}".removesuffix(".0") + " s"


def _no_change(settled: Settled | None, action: str | None) -> str | None:
    """What to say when the page did not change, for an action that names itself: the wait either
    saw everything the action started end, or stopped at a cap with something still running."""
    if settled is None or action is None:
        return None
    if settled.pending_work or settled.unfinished_requests or settled.navigation_unfinished:
        return f"No change seen within {_seconds(settled.seconds)} of the {action}."
    return f"No change seen after the {action}, and nothing it started is still pending."


def _host(url: str) -> str:
    """Host and port, without credentials a URL may carry."""
    return urlsplit(url).netloc.rsplit("@", 1)[-1]


def report_requests(settled: Settled, response: Response, *, page_url: str | None = None) -> None:
    """Failed requests and those still loading at the cap, in a few lines. Failures of requests to
    other hosts than the page's (an avatar service, an update check) are one line together."""
    own, elsewhere = [], []
    host = _host(page_url) if page_url else None
    for failed in settled.failed_requests:
        other = host is not None and _host(failed.url) not in ("", host)
        (elsewhere if other and not failed.reason.startswith("refused") else own).append(failed)
    if len(elsewhere) < 2:
        own, elsewhere = settled.failed_requests, []
    for failed in own[:_MAX_REQUEST_LINES]:
        response.add(f"Request failed: {failed.method} {response.clip(failed.url, 200)} — {failed.reason}")
    if len(own) > _MAX_REQUEST_LINES:
        response.add(f"… and {len(own) - _MAX_REQUEST_LINES} more failed requests.")
    if elsewhere:
        hosts = Counter(_host(failed.url) for failed in elsewhere)
        named = []
        for name, count in hosts.most_common(3):
            reason = Counter(f.reason for f in elsewhere if _host(f.url) == name).most_common(1)[0][0]
            named.append(f"{response.clip(name, 80)} ({count}, {response.clip(reason, 80)})")
        more = f" and {len(hosts) - 3} more hosts" if len(hosts) > 3 else ""
        response.add(f"{len(elsewhere)} requests to other hosts failed: {', '.join(named)}{more}.")
    if settled.unfinished_requests:
        response.add(f"Still loading after {len(settled.unfinished_requests)} request(s) hit the wait cap: "
                     f"{response.clip(settled.unfinished_requests[0], 200)} "
                     "(browser_wait_for network_idle to wait longer).")
    if settled.navigation_unfinished:
        response.add("The page had not finished loading when the wait cap ran out (browser_wait_for to wait longer).")
