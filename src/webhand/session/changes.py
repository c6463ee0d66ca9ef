"""What an action changed, in a few lines: URL, title, console errors, failed requests, and the
snapshot change; for browser_navigate, the page it opened.

Tabs the page opened and what it did on its own (dialogs, downloads) are reported for every tool
by ``Session.run``, so they are not repeated here.

The reply declares it, as Playwright MCP's ``response.setIncludeSnapshot()`` does: an action
handler calls ``before = await settle_changes(session, response)`` before it acts (which starts
watching what the action sets off, and declares the report on the Response), then acts. Once the
handler is done, its runner (``Tool.run``) has the report said (``Response.say_changes``): it
waits for the action's effects by events (its navigation, its requests, the DOM going quiet; each
capped, see Settings) and then says what changed. A batch calls ``settle`` between steps, and
``begin`` before the next. browser_navigate declares ``settle_load``: the page it opened, the
same wait for the page's loading and the same lines on failed requests.

Actions name themselves (``settle_changes(action="click")``): then the settling follows, in the page,
the work the action schedules (settle.WORK_HUB) and, when the page did not change, the reply says
what the wait saw ("No change seen within 1 s of the click.") rather than only comparing snapshots.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from webhand.engine.driver import Settling, FailedRequest, NavigationResult, SettleCaps, Settled, Tab
from webhand.errors import WebhandError, shorten
from webhand.page.page_tools import add_page_tools_line
from webhand.page.diff import MAX_DIFF_LINES, diff_snapshots, one_document
from webhand.page.snapshot import (Snapshot, add_snapshot, document_mark, lasting_options,
                                   left_out_notice, omitted_notice, take_snapshot)
from webhand.response import TITLE_LIMIT, URL_LIMIT, WHOLE_TITLE, WHOLE_URL, Response
from webhand.session.session import ANNOUNCED_CAP_SECONDS, Session

_MAX_CONSOLE_LINES = 5
_MAX_REQUEST_LINES = 5


@dataclass(frozen=True)
class BeforeAction:
    url: str
    # The title before the action, read while the action starts: its request goes out before the
    # action's, so it is the title from before, and nobody waits for its round trip meanwhile.
    title_read: asyncio.Future[str]
    console_seen: int
    settling: Settling | None = None
    action: str | None = None  # what the action is called in the reply ("click"), when it names itself
    # The main document's mark before the action (``document_mark``), read while it starts, when
    # a diff will be wanted: an action that brought no new document never says "a new page".
    document_read: asyncio.Future[str | None] | None = None
    downloads_seen: int = 0  # the session's downloads before the action


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


async def begin_settle(session: Session, *, typing: bool = False, action: str | None = None,
                  prepared: bool = False) -> BeforeAction:
    """What the page is before an action, and the start of the settling on what it sets off.

    ``action`` (the reply's word for it: "click") also follows the work it schedules in the page,
    from here on (sent, not awaited, see ``Settling.begin``; ``prepared``: the action starts that
    itself, as typing does)."""
    tab = await session.tab()
    title = asyncio.ensure_future(tab.title())
    title.add_done_callback(lambda read: read.cancelled() or read.exception())  # read only by the report (ActionChanges.say)
    document = None
    last = session.last_snapshot
    # Not while a dialog blocks the page (an answer being watched): the read would run only after
    # the answer, maybe in the document the answer led to.
    if session.settings.snapshot_diff == "diff" and last is not None and last.tab == tab.index \
            and not session.open_dialogs():
        document = asyncio.ensure_future(document_mark(tab))
        document.add_done_callback(lambda read: read.cancelled() or read.exception())
    settling = tab.settling(caps(session, typing=typing, effects=action is not None))
    if action is not None and not prepared:
        settling.begin()
    return BeforeAction(tab.url, title, session.console_seen, settling, action, document, len(session.downloads))


async def settle_changes(session: Session, response: Response, *, typing: bool = False, action: str | None = None,
                        prepared: bool = False, after_failure: bool = False) -> BeforeAction:
    """``begin_settle`` before an action, and declare on ``response`` that its reply ends with what the
    action changed (``ActionChanges``). ``after_failure``: said even if the handler fails."""
    before = await begin_settle(session, typing=typing, action=action, prepared=prepared)
    response.report_changes(ActionChanges(session, before, after_failure))
    return before


class ActionChanges:
    """An action's report of changes, declared on its Response (``settle_changes``): the new URL or
    title, console errors, failed requests, work still pending, and the snapshot's changes."""

    def __init__(self, session: Session, before: BeforeAction, after_failure: bool = False) -> None:
        self.session = session
        self.before = before
        self.after_failure = after_failure

    async def say(self, response: Response) -> None:
        session, before = self.session, self.before
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
                response.add(f"Console {entry.level}: {response.page_block(entry.text, 300, max_lines=4)}")
            if len(errors) > _MAX_CONSOLE_LINES:
                response.add(f"… and {len(errors) - _MAX_CONSOLE_LINES} more errors (browser_recent_console_logs).")
        expected: list[FailedRequest] = []
        if settled is not None:
            settled, expected = expected_failures(settled, tab.url)
            report_requests(settled, response, page_url=tab.url)
            if settled.pending_work:
                response.add(f"Still pending after {_seconds(settled.seconds)}: {', '.join(settled.pending_work)} "
                             "(browser_wait_for to give it longer).")
            if settled.scheduled:
                by = f" by the {before.action}" if before.action else ""
                response.add(f"Not waited for: {', '.join(settled.scheduled)} set{by} "
                             f"{'is' if len(settled.scheduled) == 1 else 'are'} still scheduled "
                             "(browser_wait_for can wait for what it does).")
        downloads = await _downloads_begun(session, before, settled)
        unchanged = None if moved else _no_change(settled, before.action, downloads)  # a new URL or title is a change
        document = await before.document_read if before.document_read is not None else None
        await report_snapshot_changes(session, response, title=title, unchanged=unchanged, document_before=document)
        report_expected(expected, response)


async def settle_load(session: Session, response: Response, *, settle_after: bool, same_document: bool = False) -> LoadChanges:
    """Declare on ``response`` that browser_navigate's reply ends with the page it opened
    (``LoadChanges``); ``settle_after``: the navigation waits for "load", and the settling on the
    page's requests starts now, so that those of its loading are known. ``same_document``: the URL
    is another fragment of the page shown (a hash route): no page loads, the app re-renders on
    its own, so the settling is an action's (the work the route change schedules, the DOM going quiet)."""
    tab = await session.tab()
    if same_document:
        settling = tab.settling(caps(session, effects=True))
        settling.begin()
    else:
        settling = tab.settling(caps(session, page_load=True)) if settle_after else None
    changes = LoadChanges(tab, settling)
    response.report_changes(changes)
    return changes


class LoadChanges:
    """browser_navigate's report: the page it opened (``opened``, what the navigation returned),
    after its loading settled: URL, HTTP status, title, failed requests."""

    after_failure = False

    def __init__(self, tab: Tab, settling: Settling | None) -> None:
        self.tab = tab  # the tab navigated
        self.settling = settling  # None: the navigation's own wait is the whole wait, and it read the title
        self.opened: NavigationResult | None = None

    async def say(self, response: Response) -> None:
        result = self.opened
        if result is None:  # the handler never got a page from the navigation: nothing to say
            return
        settled = await self.settling.settle() if self.settling is not None else None
        tab = self.tab
        url, title = (tab.url, await tab.title()) if settled is not None else (result.url, result.title)  # scripts may change them
        response.add(f"Opened {response.page(url, URL_LIMIT, WHOLE_URL)}" + (f" (HTTP {result.status})" if result.status else ""))
        if title:
            response.add(f"Title: {response.page(title, TITLE_LIMIT, WHOLE_TITLE)}")
        if result.status and result.status >= 400:
            response.add(f"The server answered {result.status}: the page is an error page.")
        if settled is not None:
            document = result.url.split("#", 1)[0]  # its own status is said above
            settled, expected = expected_failures(
                replace(settled, failed_requests=[f for f in settled.failed_requests if f.url != document]), url)
            report_requests(settled, response, page_url=url)
            report_expected(expected, response)
        await add_page_tools_line(tab, response)  # only when the page offers tools of its own (WebMCP)
        response.data(loaded(url, title, result.status))


def loaded(url: str, title: str, status: int | None) -> dict[str, Any]:
    """A navigation's structured data (PageLoaded, tools/navigation.py): the page's URL and title
    cut as in the reply (a page may make them megabytes)."""
    return {"url": shorten(url, URL_LIMIT), "title": shorten(title, TITLE_LIMIT), "status": status}


async def settle(before: BeforeAction) -> Settled | None:
    """Wait for what the action set off; may be called again after the next step of a batch."""
    return await before.settling.settle() if before.settling is not None else None


def _seconds(seconds: float) -> str:
    """Rounded down: "no change within 1 s" stays true of a wait that lasted 1.06 s."""
    return f"{math.floor(seconds * 10) / 10:.1f}".removesuffix(".0") + " s"


async def _downloads_begun(session: Session, before: BeforeAction, settled: Settled | None) -> bool | None:
    """Whether the downloads of the download links the action followed have begun (None: it followed
    none). The browser tells of such a download only once the server answered, which may be after
    the action settled: it is waited for (capped, woken by the session's news), so that the reply
    never says nothing is pending while the download is on its way. Session.run reports it."""
    if settled is None or not settled.download_links:
        return None
    return await session.until_news(lambda: len(session.downloads) - before.downloads_seen >= settled.download_links,
                                    ANNOUNCED_CAP_SECONDS)


def _no_change(settled: Settled | None, action: str | None, downloads: bool | None = None) -> str | None:
    """What to say when the page did not change, for an action that names itself: the wait either
    saw everything the action started end, or stopped at a cap with something still running.
    ``downloads``: whether the downloads of the links it followed began (``_downloads_begun``)."""
    if settled is None or action is None:
        return None
    if downloads is False:
        return (f"No change seen on the page after the {action}; it followed a download link whose download had not "
                f"begun {ANNOUNCED_CAP_SECONDS:g} s later (browser_downloads lists it once it does).")
    if settled.pending_work or settled.unfinished_requests or settled.navigation_unfinished or settled.scheduled \
            or settled.repeating:
        return f"No change seen within {_seconds(settled.seconds)} of the {action}."
    if downloads:
        return f"No change seen on the page after the {action}, which started a download."
    return f"No change seen after the {action}, and nothing it started is still pending."


def _host(url: str) -> str:
    """Host and port, without credentials a URL may carry."""
    return urlsplit(url).netloc.rsplit("@", 1)[-1]


def expected_failures(settled: Settled, page_url: str | None) -> tuple[Settled, list[FailedRequest]]:
    """Split off the failures an app makes on purpose: its own origin's subrequests the server
    answered with an HTTP error (a probe whether a name is free, "who is signed in?" answered 404).
    They are context for the reply's end (``report_expected``), not its headline."""
    host = _host(page_url) if page_url else None
    expected = [f for f in settled.failed_requests
                if host and not f.document and f.reason.startswith("HTTP ") and _host(f.url) == host]
    return replace(settled, failed_requests=[f for f in settled.failed_requests if f not in expected]), expected


def report_expected(expected: list[FailedRequest], response: Response) -> None:
    """One line after the changes: the page's own subrequests that failed, as context."""
    if not expected:
        return
    named = []
    for failed in expected[:3]:
        parts = urlsplit(failed.url)
        where = parts.path + (f"?{parts.query}" if parts.query else "")
        named.append(f"{failed.method} {response.clip(where or '/', 100)} {failed.reason.removeprefix('HTTP ')}")
    more = f", and {len(expected) - 3} more" if len(expected) > 3 else ""
    count = f"{len(expected)} request{'s' if len(expected) > 1 else ''} failed"
    response.add(f"{count}, the app may expect that: {', '.join(named)}{more}.")


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
    if settled.repeating:
        response.add(f"Still busy after {_seconds(settled.seconds)}: the page kept starting requests, the last "
                     f"{response.clip(settled.repeating, 200)} (browser_wait_for network_idle to wait longer).")
    if settled.navigation_unfinished:
        response.add("The page had not finished loading when the wait cap ran out (browser_wait_for to wait longer).")


async def report_snapshot_changes(session: Session, response: Response, *, title: str | None = None,
                                  unchanged: str | None = None, document_before: str | None = None) -> None:
    """Add what the action changed on the page, in the form ``Settings.snapshot_diff`` asks for.

    ``diff``: the changed lines, or the new page's snapshot after a navigation; nothing when the
    model has not looked at the page yet. ``full``: the whole snapshot. ``none``: nothing.
    Never fails the action: a page that cannot be read right now only costs the model a note.
    ``title``: the tab's title, when the caller has just read it. ``unchanged``: the line to give
    instead of "did not change" (what the wait for the action's effects saw, ``_no_change``).
    ``document_before``: the main document's mark before the action (``document_mark``): when the
    action kept that document and the last snapshot is of an older one (the model read this page
    only through browser_find), the reply says its changes cannot be listed, not "a new page".
    """
    form = session.settings.snapshot_diff
    last: Snapshot | None = session.last_snapshot
    if form == "none" or (form == "diff" and last is None):
        return
    tab = await session.tab()
    options = lasting_options(session.settings.snapshot_mode)  # what one browser_snapshot call asked for is not carried
    try:
        new = await take_snapshot(tab, mode=options.mode, max_refs=options.max_refs, title=title)
    except WebhandError:
        response.add("The page could not be read after the action; call browser_snapshot to see it.")
        return
    session.last_snapshot = new
    same_tab = last is not None and last.tab == tab.index
    # One document, whatever happened to its elements; a new document is a new page, whatever its URL.
    same_document = same_tab and one_document(last, new)
    if form == "diff" and same_tab and not same_document and document_before is not None \
            and await document_mark(tab) == document_before:
        # The action kept its document: the last snapshot was of a page before this one.
        response.add("Its changes are not listed: no snapshot of this page was taken before the action "
                     "(the next action's reply will list them; browser_snapshot shows the page).")
        return
    changes = None
    if form == "diff" and same_document and new.options == last.options:
        changes = diff_snapshots(last, new)
        text = changes.render() if changes.size or unchanged is None else unchanged
        response.changed_nothing = not changes.size and unchanged is not None
        # "No change" is said even when the whole page is shorter: its heading would say it changed.
        if changes.size <= MAX_DIFF_LINES and (len(text) < len(new.text) or response.changed_nothing):
            response.add(text)
            if notice := left_out_notice(new):
                response.add(notice)
            return
    if form == "full":
        heading = "Snapshot of the page now:"
    elif not same_tab:
        heading = f"Tab {tab.index} (not the one of your last snapshot); its snapshot:"
    elif same_document and new.options != last.options:
        heading = "The page now (your last view was taken another way):"
    elif changes is not None and changes.size <= MAX_DIFF_LINES:  # the whole page is shorter than its changes
        heading = "The page changed; its snapshot now:"
    elif same_document:
        heading = "The page changed a lot; its snapshot now:"
    else:
        heading = "A new page (old refs no longer work); its snapshot:"
    heading = f"{heading} ({response.page(new.url, URL_LIMIT, WHOLE_URL)})"
    response.add(heading)
    # The heading counts against the snapshot's size: the two come back together.
    add_snapshot(response, new, limit=max(session.settings.snapshot_max_chars - len(heading), 1000))
    if new.omitted:
        response.add(omitted_notice(new))
    if notice := left_out_notice(new):
        response.add(notice)
