"""Waiting for what an action set off: by events, each wait capped, never a fixed sleep.

Driver-neutral: each driver feeds a ``RequestTracker`` with its page's events (request started,
response, finished, failed, main-frame commit, load) and gives it a ``PageProbe`` to run the two
small scripts below in the main frame. The rules are the same for every driver.

A ``RequestTracker`` listens to one page for its whole life and keeps the set of requests in
flight. An action starts a ``PageSettling`` before it acts; the tracker forwards every event to
the current settling, so the settling knows exactly which navigation and requests the action started.
``settle`` then waits, in rounds:

1. the DOM to go quiet (a MutationObserver in the page resolves after ``dom_quiet_ms`` without a
   mutation, capped; sooner when a settling started before the action saw it change nothing, see
   ``DOM_QUIET``) and the work the action scheduled in the page (short timers, animation frames,
   a WebSocket message's answer: ``WORK_HUB``, started by ``PageSettling.begin``) to have run,
   capped by ``SettleCaps.effects``. Those few milliseconds are also when the events of requests the action
   started reach us, so step 2 and 3 see them;
2. a navigation the action started to commit and load (capped);
3. requests the action started to finish (capped);

and repeats once more if step 2 or 3 waited on anything, since a response usually changes the
DOM and may start more requests. On a static page that is one quiet window and nothing else.

After a page load (``SettleCaps.page_load``: the driver already waited for "load") the first round
has no quiet window: step 3 waits for the loading's own requests, and the load window
(``_until_request_or_idle``) looks, until the page's next frame and idle time, for a request the
page starts as it mounts. Only when something was waited for does a quiet window follow.

Long because the settle rules are one algorithm (the tracker, the rounds, the caps and the page
probes they run) that every driver shares; its page scripts are in engine/js/.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from webhand.engine.driver import FailedRequest, SettleCaps, Settled
from webhand.engine.js import compose, source

if TYPE_CHECKING:
    from webhand.engine.policy import OriginPolicy, RefusalLog

_MAX_ROUNDS = 3
#: The most download-link clicks the page's count is believed for (work_hub.js keeps at most 10).
_MAX_DOWNLOAD_LINKS = 10
#: Requests that stay open by design (server-sent events): waiting for them to finish only costs the cap.
STREAMS = {"eventsource", "websocket"}

#: Timers of at most this many ms that an action schedules are waited for (capped by
#: ``SettleCaps.effects``); longer ones are a later step of the page, not this action's effect.
SHORT_MS = 500
#: A WebSocket the action sent a message on is awaited until it has been quiet this long (ms) after a
#: message: an answer may come in several (Streamlit: the run's start, then its output).
SOCKET_QUIET_MS = 150
#: How long a settling attributes new work to its action (ms): about the longest settle of a click.
TRACK_MS = 5000

# The page's own scheduling, followed from the start of an action (installed once per document by
# the first settling; see docs/settle.md). setTimeout/setInterval with a delay
# of at most ``SHORT_MS``, requestAnimationFrame and WebSocket.send, called while a settling is live
# from code the action ran (an event handler, a task it queued) or from a callback of such work, are
# the action's pending work until they run (a WebSocket: until it has been quiet ``SOCKET_QUIET_MS``
# after a message). Work chained from callbacks scheduled outside a settling (an animation loop, a poll started earlier) is not the
# action's: each callback runs with the context it was scheduled in. Animation-frame chains count a
# few frames deep only (beyond that it is an animation, not a step of work). The wrappers are
# Proxies of the originals (their name, length and prototype stay); a page that replaces them is
# wrapped again by the next settling; one that keeps a reference from before simply goes unseen.
WORK_HUB = compose("work_hub.js", SHORT_MS=str(SHORT_MS), SOCKET_QUIET_MS=str(SOCKET_QUIET_MS))


# Counts the document's mutations from the start of an action, and starts following the work the
# action schedules (``WORK_HUB``; for ``track_ms`` ms, 0: none, as on a document a navigation just
# brought). Typing runs it first, in the script that focuses the field (page_scripts.FILL_PREPARE);
# other actions run it just before they act (``PageSettling.begin``). Only the main frame's count is
# read: typing in a child frame waits the full window. With ``typing``, the typed field's own
# change (a framework mirroring its value into the attribute, the text of a contenteditable) is
# the action itself, not the page reacting to it, and is not counted. Non-enumerable: the page's
# own code listing window's keys does not see it.
WATCH_DOM = compose("watch_dom.js", WORK_HUB=WORK_HUB, TRACK_MS=str(TRACK_MS))

#: Starts an action's settling in the page (``PageSettling.begin``).
WATCH = "(trackMs) => { (" + WATCH_DOM + ")(false, trackMs); }"

# Resolves once the document has gone ``quiet`` ms without a DOM mutation and the work the action
# scheduled (``WORK_HUB``) has run, or after ``cap`` ms (``work_cap`` ms while that work is still
# pending). With ``unchanged`` > 0 and a settling that counted no mutation and holds no pending work,
# it resolves sooner: once both the next animation frame and a task after it have run
# (rAF-batched renderers draw then) and ``unchanged`` ms have passed (short timers, message-channel
# tasks, a worker's answer). A mutation meanwhile switches back to the full window. A tab that
# draws no frames (hidden) still ends at the ``quiet`` window. Answers with the work still pending
# (a few descriptions) and whether the document changed since the settling began. A page that broke
# our state in the page gets the plain ``quiet`` window.
DOM_QUIET = compose("dom_quiet.js", WATCH_DOM=WATCH_DOM)

LOADED = source("loaded.js")


#: Resolves once the page has drawn its next animation frame, run the tasks that frame posted, and
#: gone idle (requestIdleCallback): a framework that mounts in a frame (or a task), and the fetches
#: its mount starts, have run by then. Waiting for the frame matters: Chromium may run idle callbacks
#: before a frame already requested. Capped on our side by the load window (a tab that draws no
#: frames ends there).
IDLE = source("idle.js")


class DocumentReplaced(Exception):
    """The main frame's document went away while a script ran in it (a navigation)."""


class PageGone(Exception):
    """The page closed (or its browser went away) while a script ran in it."""


class LoadTimeout(Exception):
    """The main document did not fire "load" within the time given."""


class PageProbe(Protocol):
    """What the settle rules need of a page, from any driver."""

    @property
    def closed(self) -> bool: ...

    async def events_caught_up(self) -> None:
        """Return once the page events the browser sent before this call have reached the tracker
        (at once where they come in order with a script's answer, as on one CDP session)."""
        ...

    async def main_evaluate(self, script: str, arg: Any = None) -> Any:
        """Call ``script`` (a function) with ``arg`` in the main frame; ``DocumentReplaced`` if the
        document was replaced meanwhile, ``PageGone`` if the page closed. Never times out itself."""
        ...


class TrackedRequest:
    """One request as the settle rules see it (identity is the object: a redirect hop is a new one)."""

    __slots__ = ("awaited", "main_navigation", "method", "resource_type", "url")

    def __init__(self, url: str, method: str, resource_type: str, main_navigation: bool, *,
                 awaited: bool = True) -> None:
        self.url = url
        self.method = method
        self.resource_type = resource_type
        self.main_navigation = main_navigation  # a navigation of the tab's main frame
        # False for a request that belongs to no document's load (a worker's or shared worker's
        # script): the browser reports its answer to the worker, not to the page, so a wait for it
        # here would only ever end at the cap.
        self.awaited = awaited


class RequestTracker:
    """One page's requests in flight, and the hand-off of its events to the current action settling."""

    def __init__(self, probe: PageProbe, policy: OriginPolicy | None, refusals: RefusalLog | None) -> None:
        self.probe = probe
        self.policy = policy
        self.refusals = refusals
        self.inflight: set[TrackedRequest] = set()
        self.documents_awaited: set[TrackedRequest] = set()  # main-frame navigations with no response yet
        self.settling: PageSettling | None = None
        self.activity = asyncio.Event()  # set on every event; waiters re-check their condition
        self.commits = 0  # main-frame documents committed so far (a navigation's, or an error page's)
        # Requests a second source said belong to no document (``belongs_to_no_document``) before
        # the driver's own event announced them: (method, URL), a few.
        self._no_document: deque[tuple[str, str]] = deque(maxlen=20)
        # When a request last started or ended, or the page last fired "load" (loop time): the
        # network has been quiet since then.
        self.quiet_since = asyncio.get_running_loop().time()

    # fed by the driver ------------------------------------------------------------------------
    def request_started(self, request: TrackedRequest) -> None:
        self._busy()
        if (request.method, request.url) in self._no_document:
            self._no_document.remove((request.method, request.url))
            request.awaited = False
        if request.awaited:  # nothing waits for the others, network idle included
            self.inflight.add(request)
        if request.main_navigation:
            self.documents_awaited.add(request)
        if self.settling:
            self.settling.started(request)
        self.activity.set()

    def belongs_to_no_document(self, method: str, url: str) -> None:
        """A request of this page (told by ``method`` and ``url``) belongs to no document's load: a
        worker's script, whose answer the browser reports to the worker. For drivers whose request
        events do not say so themselves (Playwright: its tab's CDP session tells, in either order)."""
        for request in self.inflight:
            if request.method == method and request.url == url:
                request.awaited = False
                self.inflight.discard(request)
                if self.settling:
                    self.settling.finished(request)
                self.activity.set()
                return
        self._no_document.append((method, url))

    def response(self, request: TrackedRequest, status: int, headers: dict[str, str]) -> None:
        self.documents_awaited.discard(request)
        self.activity.set()
        if self.settling and status >= 400:
            refused = self.policy.refused_response(request.url, headers) if self.policy else None
            self.settling.failed(FailedRequest(request.method, request.url, refused or f"HTTP {status}",
                                            request.resource_type == "document"))

    def finished(self, request: TrackedRequest) -> None:
        self._busy()
        self.inflight.discard(request)
        self.documents_awaited.discard(request)
        if self.settling:
            self.settling.finished(request)
        self.activity.set()

    def failed(self, request: TrackedRequest, reason: str) -> None:
        self._busy()
        self.inflight.discard(request)
        self.documents_awaited.discard(request)
        if self.settling:
            self.settling.finished(request)
            refusal = self.policy.refusal(request.url) if self.policy else None
            if refusal:
                self.settling.failed(FailedRequest(request.method, request.url, refusal, request.resource_type == "document"))
            elif "ERR_ABORTED" not in reason:  # cancelled by the page or by a navigation: not a failure
                self.settling.failed(FailedRequest(request.method, request.url, reason, request.resource_type == "document"))
        self.activity.set()

    def main_committed(self) -> None:
        self.commits += 1
        if self.settling:
            self.settling.committed = True
        self.activity.set()

    def frame_committed(self) -> None:
        self.activity.set()

    def loaded(self) -> None:
        self._busy()
        self.activity.set()

    def _busy(self) -> None:
        self.quiet_since = asyncio.get_running_loop().time()

    async def until(self, condition: Callable[[], bool], seconds: float) -> bool:
        """Wait until ``condition()`` holds, re-checking on every page event; False at the cap."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not condition():
            remaining = deadline - loop.time()
            if remaining <= 0 or self.probe.closed:
                return condition()
            self.activity.clear()
            try:
                await asyncio.wait_for(self.activity.wait(), remaining)
            except TimeoutError:
                pass
        return True


class PageSettling:
    """The ``driver.Settling`` every driver hands out (Playwright's under its own name): follows one action's effects through the
    tab's ``RequestTracker`` (named apart from the Protocol it implements)."""

    def __init__(self, tracker: RequestTracker, caps: SettleCaps) -> None:
        self.tracker = tracker
        self.caps = caps
        self.pending: set[TrackedRequest] = set()
        self.failures: list[FailedRequest] = []
        self.navigation: TrackedRequest | None = None  # a main-frame navigation not yet committed or ended
        self.committed = False
        self.refusals_seen = tracker.refusals.count if tracker.refusals else 0
        self.pending_work: list[str] = []  # what the last DOM-quiet wait left pending in the page
        self.scheduled: list[str] = []  # longer timers the action set, still to run (not waited for)
        self.latest: TrackedRequest | None = None  # the last request the action's work started
        # Links with a download attribute the action followed (dom_quiet.js counts them since the
        # last ``begin``; a batch begins again for each step, and all its steps' count).
        self.download_links = 0
        self._links_before = 0  # counted before the last ``begin``
        self._begun: asyncio.Future[None] | None = None  # the settling's start in the page (``begin``)
        tracker.settling = self  # the newest action's settling gets the events

    def begin(self) -> None:
        """Start following the work the action schedules (``WATCH``), just before it acts. Sent, not
        awaited: the action's own scripts (the element's actionability check, the field's
        preparation) and so its input go after it on the page's CDP session; an action with no script
        before its input (a key press on the page) awaits ``begun`` first, since its key can reach
        the page before the script. Typing at once needs none: the script that prepares the field
        starts it. A page that cannot run it now (navigating, blocked by a
        dialog, closed) is settled as before, without it."""
        probe = self.tracker.probe
        if probe.closed or self.caps.effects <= 0 or self._begun is not None:
            return
        self._links_before = self.download_links
        self._begun = asyncio.ensure_future(self._watch_in_page())

    async def begun(self) -> None:
        """Return once the page runs the settling ``begin`` sent (at once without one)."""
        if self._begun is not None:
            await asyncio.shield(self._begun)

    async def _watch_in_page(self) -> None:
        answer = asyncio.ensure_future(self.tracker.probe.main_evaluate(WATCH, TRACK_MS))
        try:
            async with asyncio.timeout(1.0):  # a page blocked by a dialog never answers
                await answer_or_held_navigation(answer, self.tracker)
        except TimeoutError:
            pass

    # fed by the tracker ------------------------------------------------------------------------
    def started(self, request: TrackedRequest) -> None:
        if request.resource_type in STREAMS or not request.awaited:
            return
        self.pending.add(request)
        self.latest = request
        if request.main_navigation:
            self.navigation, self.committed = request, False

    def finished(self, request: TrackedRequest) -> None:
        self.pending.discard(request)
        if request is self.navigation:
            self.navigation = None

    def failed(self, failure: FailedRequest) -> None:
        if failure not in self.failures:
            self.failures.append(failure)

    # waiting -----------------------------------------------------------------------------------
    async def settle(self) -> Settled:
        await self.begun()
        self._begun = None  # a batch's next step begins again
        caps = self.caps
        loop = asyncio.get_running_loop()
        navigation_deadline = loop.time() + caps.navigation
        requests_deadline = loop.time() + caps.requests
        effects_deadline = loop.time() + caps.effects
        started = loop.time()
        navigation_unfinished = False
        unfinished: list[str] = []
        repeating = ""
        self.pending_work, self.scheduled = [], []
        # Watching a loaded page for requests it starts on its own takes two rounds per wave
        # (one sees the requests start, the next waits for them); the deadlines bound the time.
        for round_number in range(_MAX_ROUNDS + (2 if caps.load_quiet > 0 else 0)):
            if round_number == 0 and caps.page_load:
                # The driver waited for "load": the page's loading and its own DOM work are done,
                # and its navigation with them (a later one keeps ``navigation`` set). What the
                # page does next, the load window below looks; no DOM-quiet window first.
                state = "quiet"
                if self.navigation is None:
                    self.committed = False
            else:
                # Only the first round knows what happened since before the action; later rounds
                # follow a response or a navigation, which usually changes the DOM: the full window.
                state = await self._dom_quiet(caps.dom_unchanged_ms if round_number == 0 else 0,
                                              max(0.0, effects_deadline - loop.time()))
                if state == "quiet" and not self.pending:
                    # The work the action scheduled has run; a request it started (a fetch after a
                    # timer) may still be on its way to us (Firefox announces requests late): the
                    # driver knows when it has caught up (at once on CDP), capped by the requests' deadline.
                    await self._events_caught_up(requests_deadline)
            if state == "gone":
                break
            waited = False
            if self.navigation is not None or self.committed or state == "navigated":
                waited = True
                await self.tracker.until(lambda: self.committed or self.navigation is None,
                                         max(0.0, navigation_deadline - loop.time()))
                if self.committed or state == "navigated":
                    try:
                        await document_loaded(self.tracker.probe, max(0.001, navigation_deadline - loop.time()))
                    except (LoadTimeout, PageGone):
                        navigation_unfinished = True  # the reply still says where the tab is
                self.navigation, self.committed = None, False
            if self.pending:
                waited = True
                if not await self.tracker.until(lambda: not self.pending, max(0.0, requests_deadline - loop.time())):
                    # Long polls and streams never finish: name them once and stop waiting on them.
                    unfinished += [f"{r.method} {r.url}" for r in self.pending]
                    self.pending.clear()
            if not waited and caps.load_quiet > 0:
                # Nothing pending: the page is ready once the network has been quiet for the
                # window since its last request or its "load"; a client-rendered page fetches
                # its content in that time, and then that request is waited for.
                window = min(self.tracker.quiet_since + caps.load_quiet, requests_deadline) - loop.time()
                waited = await self._until_request_or_idle(window, requests_deadline)
            if not waited:
                break
        else:
            unfinished += [f"{r.method} {r.url}" for r in self.pending]  # started in the last round, never waited on
            self.pending.clear()
            if not unfinished and self.latest is not None:
                # Every round waited on a request and the next one followed (a poll, a retry loop):
                # the page never settled, though no request was open at the very end.
                repeating = f"{self.latest.method} {self.latest.url}"
        if self.tracker.refusals is not None:  # refused anywhere in the context, e.g. in a tab it opened
            for method, url, reason in self.tracker.refusals.since(self.refusals_seen):
                self.failed(FailedRequest(method, url, reason))
            self.refusals_seen = self.tracker.refusals.count
        return Settled(list(self.failures), unfinished, navigation_unfinished, list(self.pending_work),
                       loop.time() - started, list(self.scheduled), repeating, self.download_links)

    async def _until_request_or_idle(self, window: float, requests_deadline: float) -> bool:
        """True when the page starts a request or navigates within ``window``; False once it is
        idle (``IDLE``) with none started, or at the window's end. A static page is idle after
        its next frame, so it does not pay the whole window; one that fetches as it mounts does
        so before it is idle. A window already over (a loaded machine took that long to get
        here) still asks whether requests the page started are on their way."""
        started = lambda: bool(self.pending) or self.committed  # noqa: E731
        if window > 0:
            idle = asyncio.ensure_future(self.tracker.probe.main_evaluate(IDLE))
            request_seen = asyncio.ensure_future(self.tracker.until(started, window))
            try:
                await asyncio.wait({idle, request_seen}, timeout=window, return_when=asyncio.FIRST_COMPLETED)
            finally:
                idle.cancel()
                request_seen.cancel()
            if started():
                return True
            if idle.done() and not idle.cancelled() and isinstance(idle.exception(), PageGone):
                return started()
        # A request the page started by now (idle or not) may still be on its way to us.
        await self._events_caught_up(requests_deadline)
        return started()

    async def _events_caught_up(self, requests_deadline: float) -> None:
        """Wait until the page events the browser sent so far reached the tracker (at once on CDP;
        on Firefox, until it announced the requests the page says it has in flight), capped by the
        requests' deadline."""
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(self.tracker.probe.events_caught_up(), max(0.0, requests_deadline - loop.time()))
        except (TimeoutError, PageGone, DocumentReplaced):
            pass

    async def _dom_quiet(self, unchanged_ms: int = 0, work_cap: float = 0.0) -> str:
        """'quiet' when the DOM went quiet and the work the action scheduled ran (or at the caps),
        'navigated' if the document was replaced, 'gone' if the page closed or is blocked (e.g. by
        an open alert). What work was still pending is kept in ``pending_work``."""
        probe, caps = self.tracker.probe, self.caps
        self.pending_work, self.scheduled = [], []
        if probe.closed:
            return "gone"
        if caps.dom_cap <= 0 or caps.dom_quiet_ms <= 0:
            return "quiet"
        answer = asyncio.ensure_future(probe.main_evaluate(DOM_QUIET, [caps.dom_quiet_ms, caps.dom_cap * 1000,
                                                                       unchanged_ms, work_cap * 1000]))
        try:
            async with asyncio.timeout(max(caps.dom_cap, work_cap) + 0.5):
                held = await answer_or_held_navigation(answer, self.tracker)
        except TimeoutError:
            return "gone"  # the page's JavaScript is blocked (a dialog is open): nothing more will settle
        if held is not None:
            # A main-frame navigation waits for its server: the browser holds our script until the
            # new document commits, so the DOM's answer would come only after the cap ("gone"), and
            # a click on a link to a slow page would report nothing. The navigation is what to wait for.
            return "quiet"
        error = answer.exception()
        if isinstance(error, DocumentReplaced):
            return "gone" if probe.closed else "navigated"
        if error is not None:
            if isinstance(error, PageGone):
                return "gone"
            raise error
        found = answer.result()
        if isinstance(found, dict):
            # Built by our script, but in the page's reach: only its fields are read, and the
            # words are ours (``describe_work``).
            self.pending_work = _described(found.get("pending"), found.get("more"))
            self.scheduled = _described(found.get("later"), 0)
            links = found.get("downloads")  # every round counts from the action's start
            if isinstance(links, int) and 0 < links <= _MAX_DOWNLOAD_LINKS:
                self.download_links = max(self.download_links, self._links_before + links)
        return "quiet"


#: A host as ``URL.host`` gives it (name or address, and a port): anything else is not named.
_HOST = re.compile(r"(?:[A-Za-z0-9.-]{1,100}|\[[0-9A-Fa-f:.]{2,60}\])(?::[0-9]{1,5})?")


def describe_work(item: object) -> str | None:
    """webhand's words for one piece of work the page reported (``WORK_HUB``'s token): its kind, a
    delay as a whole number, a host that is one; None for anything else. The page can reach the
    tokens, so nothing of them is quoted as text (a page that forges one can at most name a timer)."""
    if not isinstance(item, dict):
        return None
    kind, ms, host = item.get("kind"), item.get("ms"), item.get("host")
    if kind in ("timer", "interval"):
        delay = int(min(max(ms, 0), 10**9)) if isinstance(ms, int | float) and math.isfinite(ms) else 0
        return f"a {delay} ms {kind}"
    if kind == "frame":
        return "an animation frame"
    if kind == "animation":
        return "an animation"
    if kind in ("socket", "worker"):
        where = f" ({host})" if isinstance(host, str) and _HOST.fullmatch(host) else ""
        return ("an answer on a WebSocket" if kind == "socket" else "a worker's answer") + where
    return None


def _described(items: object, more: object) -> list[str]:
    """The first three pieces of work in webhand's words, and how many more there are."""
    items = items if isinstance(items, list) else []
    said = [text for text in map(describe_work, items[:3]) if text]
    left = (more if isinstance(more, int) and 0 < more < 10**6 else 0) + len(items[:3]) - len(said)
    return said + ([f"{left} more"] if left else [])


async def document_loaded(probe: PageProbe, timeout: float) -> None:
    """Wait for the main document's "load" (at once if its readyState is already "complete").

    Not a wait for the "load" event alone: a page restored from the back/forward cache never
    fires "load" again; its readyState is "complete" at once. ``LoadTimeout`` at the timeout,
    ``PageGone`` if the page closed.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (remaining := deadline - loop.time()) > 0:
        try:
            await asyncio.wait_for(probe.main_evaluate(LOADED), remaining)
            return
        except TimeoutError:
            break
        except DocumentReplaced:
            if probe.closed:
                raise PageGone() from None
            # the document was replaced while we waited: wait on the new one
    raise LoadTimeout(f"the page did not finish loading within {timeout:g} s")


async def answer_or_held_navigation(answer: "asyncio.Future[Any]", tracker: RequestTracker) -> str | None:
    """Wait for the renderer's ``answer`` to a liveness probe: None once it comes. While the main
    frame waits for a server's response, the browser holds messages to the page, so then that
    navigation's URL comes back at once instead. ``answer`` is cancelled either way."""
    answer.add_done_callback(lambda done: done.cancelled() or done.exception())  # errors are answers too
    try:
        while not answer.done():
            if tracker.documents_awaited:
                return next(iter(tracker.documents_awaited)).url
            tracker.activity.clear()
            event = asyncio.ensure_future(tracker.activity.wait())
            try:
                await asyncio.wait({answer, event}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                event.cancel()
        return None
    finally:
        answer.cancel()
