"""Recovery: a crashed or hung page never leaves a session stuck.

- **Crashed.** A tab whose renderer crashed or was killed (the driver heard the crash, or an
  operation failed with "page crashed") can do nothing any more. The next call closes it, and
  when it was the active tab runs in a fresh one. The reply names the page that was lost and
  what went with it. The browser and its cookies are fine: only that page died.
- **Hung.** A page stuck in ``while (true) {}`` holds its renderer's main thread, so every call
  on it would wait for its whole timeout, call after call. A tool that is about to run out of
  time (or already has) therefore checks whether its page still answers a trivial request
  (``tab.liveness.ping``). A page silent for ``hang_window`` is hung: webhand ends it from the browser side
  (Chromium then ends its renderer) and says so, within the tool's own timeout plus
  ``_VERDICT_GRACE_SECONDS`` and the tenth of a second ``tab.liveness.end`` may wait. Other sessions never wait
  for it. The next call opens a fresh tab.
- **Stalled.** While a tab's navigation waits for a server that does not answer, the browser
  holds every message to the page, so every call on it would wait too. A tool that runs out of
  time that way stops the navigation (like the Stop button) and says so; the tab stays usable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from webhand.engine.driver import Context, Tab
from webhand.errors import ActionTimeout, PageCrashed, PageUnresponsive, WebhandError, shorten

#: After its timeout, a tool's verdict waits this much longer, so that a tool whose own timeout
#: ends a long script (browser_eval) reports that rather than having its page ended.
_VERDICT_GRACE_SECONDS = 0.2
_MIN_SILENCE_SECONDS = 3.0
_MAX_SILENCE_SECONDS = 10.0
LOST = ("Lost: what that page held and had not saved (typed input, its scripts' state, its sessionStorage). "
        "Kept: cookies, localStorage and the other tabs.")


class Recovering(Protocol):
    """What recovery needs of a session (session.py's ``Session``, which imports this module): its
    tabs, which one is active, and a way to have the active one replaced."""

    @property
    def context(self) -> Context: ...

    @property
    def active_tab(self) -> Tab | None: ...

    def replace_active_tab(self) -> None: ...


def hang_window(timeout: float) -> float:
    """How long a page must stay silent to count as hung: half the call's timeout, between 3 and
    10 s. At least 3 s, because a healthy renderer on a starved machine can take a second to
    answer, and ending a page by mistake loses the user's work. A page that holds its main
    thread that long just as its call runs out of time is unusable anyway."""
    return min(max(timeout / 2, _MIN_SILENCE_SECONDS), _MAX_SILENCE_SECONDS)


def _ended_by_timeout(task: asyncio.Future[None]) -> bool:
    return task.done() and not task.cancelled() and isinstance(task.exception(), ActionTimeout)


@dataclass(frozen=True)
class Verdict:
    """What watching a tool's work found: ``answering`` (nothing to do but wait for it as before),
    ``hung`` (its page did not answer) or ``stalled`` (the tab's navigation still waits for a
    server, ``url``, and the browser holds the page's messages until it answers)."""

    kind: Literal["answering", "hung", "stalled"]
    tab: Tab | None = None
    url: str = ""


ANSWERING = Verdict("answering")


async def watch(task: asyncio.Future[None], interrupt: asyncio.Future[None], current_tab: Callable[[], Tab | None],
                timeout: float, dialog_open: Callable[[], bool],
                check_place: Callable[[float], Awaitable[bool]] | None = None) -> Verdict:
    """Wait for a tool's work until it is done, interrupted by a dialog, or about to run out of time
    (then ask its page, see the module's docstring). ``answering`` does not mean the work is done.

    The page is asked (``ping``) once the work is still running ``hang_window`` before the
    timeout (at once when the timeout is shorter than that), or as soon as it failed by a
    timeout. It is hung if the ping gets no answer for ``hang_window`` seconds (plus the grace):
    the verdict comes at the timeout, or ``hang_window`` after the work failed, or, for a timeout
    shorter than ``hang_window``, after ``hang_window``.

    On a pool endpoint, the page's silence may be its browser's: ``check_place`` asks the
    browser itself at the same moment, capped within the window. A browser that does not answer
    has its endpoint drained, which resolves ``interrupt``: the call then says the endpoint
    stopped answering, and no page is blamed or ended.
    """
    loop = asyncio.get_running_loop()
    window = hang_window(timeout)
    await asyncio.wait({task, interrupt}, timeout=max(0.0, timeout - window), return_when=asyncio.FIRST_COMPLETED)
    if interrupt.done() or (task.done() and not _ended_by_timeout(task)):
        return ANSWERING
    tab = current_tab()
    if tab is None or tab.closed or tab.liveness.crashed:
        return ANSWERING
    probe = asyncio.ensure_future(tab.liveness.ping())
    place = asyncio.ensure_future(check_place(window)) if check_place is not None else None
    silent_until = loop.time() + window + _VERDICT_GRACE_SECONDS
    try:
        while (left := silent_until - loop.time()) > 0:
            waiting = {interrupt} | {f for f in (probe, task, place) if f is not None and not f.done()}
            await asyncio.wait(waiting, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            if interrupt.done() or (task.done() and not _ended_by_timeout(task)):
                return ANSWERING
            if probe.done() and probe.result() is None:
                return ANSWERING  # the page answered: the work is slow, not stuck on it
    finally:
        for asked in (probe, place):
            if asked is not None and not asked.done():
                asked.cancel()
    if interrupt.done():
        return ANSWERING  # the place was found gone as the window ended
    # A JavaScript dialog also keeps a page from answering; Session.run handles that one.
    if dialog_open() or tab.closed or tab.liveness.crashed:
        return ANSWERING
    if probe.done():
        return Verdict("stalled", tab, probe.result() or "")
    return Verdict("hung", tab)


async def stop_stalled(tab: Tab, url: str, timeout: float) -> str:
    """Stop a navigation that still waits for its server, so that the page answers again; the
    line for the reply."""
    waiting = f"Tab {tab.index} was still waiting for {shorten(url)} to answer after {timeout:g} s"
    try:
        await tab.liveness.stop_loading()
    except WebhandError as error:
        return f"{waiting}; stopping that navigation failed ({error.message}): call browser_navigate to leave it."
    return (f"{waiting}: webhand stopped that navigation (like the browser's Stop button), so the tab stays usable "
            f"at {shorten(tab.url) or 'about:blank'}.")


#: Longest the clean-up after a cancelled call may take (the next call waits for it).
CANCEL_CLEANUP_SECONDS = 5.0


async def stop_cancelled(tab: Tab | None, tool: str) -> str:
    """After a call was cancelled (the client's ``notifications/cancelled``, or its deadline): stop
    the loading it may have started in ``tab`` (a navigation still waiting for its server would
    otherwise land later, unseen), and the line for the next reply, which says where the page is."""
    said = f"Your previous call ({tool}) was cancelled before it finished"
    if tab is None or tab.closed:
        return f"{said}; it had no tab open."
    try:
        async with asyncio.timeout(CANCEL_CLEANUP_SECONDS):
            await tab.liveness.stop_loading()
    except Exception as error:  # noqa: BLE001 - a clean-up nobody awaits yet: its failure is told, never raised
        why = (error.message if isinstance(error, WebhandError) else
               f"no answer within {CANCEL_CLEANUP_SECONDS:g} s" if isinstance(error, TimeoutError) else type(error).__name__)
        return (f"{said}; stopping what it started in tab {tab.index} failed ({why}): the tab may still go on to "
                f"another page. It was at {shorten(tab.url) or 'about:blank'}; call browser_snapshot to see where it is.")
    return (f"{said}: webhand stopped what it started in tab {tab.index} (any page still loading, like the browser's "
            f"Stop button). The tab is at {shorten(tab.url) or 'about:blank'}.")


async def replace(session: Recovering, tab: Tab) -> bool:
    """End ``tab`` from the browser side. When it was the active tab, the session's next use of a
    tab opens a fresh one (opening it here would cost the time this call may no longer have).
    Returns whether it was the active tab."""
    was_active = session.active_tab is tab
    await tab.liveness.end()
    if was_active:
        session.replace_active_tab()
    return was_active


def _story(tab: Tab, url: str, what: str, then: str | None) -> str:
    """What happened to the page, and, for the active tab (``then`` says where the work goes on),
    what the model lost with it."""
    story = f"The page in tab {tab.index} ({shorten(url) or 'about:blank'}) {what}"
    if then is None:
        return f"{story}; what it held and had not saved is gone."
    return f"{story}; {then}. {LOST}"


async def replace_crashed(session: Recovering, *, active_crashed: bool = False,
                          then: str = "this call runs in a fresh tab") -> list[str]:
    """Replace every tab whose page crashed (with ``active_crashed``, count the active tab among
    them: an operation said so before the crash event came); one line per tab for the reply."""
    lines = []
    for tab in list(session.context.tabs):
        if not tab.closed and (tab.liveness.crashed or (active_crashed and tab is session.active_tab)):
            url = tab.url
            active = await replace(session, tab)
            lines.append(_story(tab, url, "crashed, so webhand closed that tab", then if active else None))
    return lines


async def crashed_during(session: Recovering, tool: str) -> PageCrashed:
    """The error for a tool whose page crashed under it, once the tab is ended."""
    lines = await replace_crashed(session, active_crashed=True, then="the next call opens a fresh tab")
    story = " ".join(lines) or "Its page crashed."
    return PageCrashed(f"{tool} could not finish. {story}", "Call browser_navigate to open the page again.")


async def end_hung(session: Recovering, tab: Tab, tool: str, timeout: float) -> PageUnresponsive:
    """End a hung page and return the error that tells the model."""
    url = tab.url
    await replace(session, tab)
    story = _story(tab, url, f"stopped responding (no answer for {hang_window(timeout):g} s: a script that never "
                             "ends?), so webhand ended it", "the next call opens a fresh tab")
    return PageUnresponsive(f"{tool} could not finish. {story}",
                            "Call browser_navigate to open a page again; avoid what made the page hang.")
