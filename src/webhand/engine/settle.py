"""Waiting for what an action set off: by events, each wait capped, never a fixed sleep.

Driver-neutral: each driver feeds a ``RequestTracker`` with its page's events (request started,
response, finished, failed, main-frame commit, load) and gives it a ``PageProbe`` to run the two
small scripts below in the main frame. The rules are the same for every driver.

A ``RequestTracker`` listens to one page for its whole life and keeps the set of requests in
flight. An action starts an ``ActionWatch`` before it acts; the tracker forwards every event to
the current watch, so the watch knows exactly which navigation and requests the action started.
``settle`` then waits, in rounds:

1. the DOM to go quiet (a MutationObserver in the page resolves after ``dom_quiet_ms`` without a
   mutation, capped; sooner when a watch started before the action saw it change nothing, see
   ``DOM_QUIET``). Those few milliseconds are also when the events of requests the action
   started reach us, so step 2 and 3 see them;
2. a navigation the action started to commit and load (capped);
3. requests the action started to finish (capped);

and repeats once more if step 2 or 3 waited on anything, since a response usually changes the
DOM and may start more requests. On a static page that is one quiet window and nothing else.

After a page load (``SettleCaps.page_load``: the driver already waited for "load") the first round
has no quiet window: step 3 waits for the loading's own requests, and the load window
(``_until_request_or_idle``) watches, until the page's next frame and idle time, for a request the
page starts as it mounts. Only when something was waited for does a quiet window follow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from webhand.engine.driver import FailedRequest, SettleCaps, Settled

if TYPE_CHECKING:
    from webhand.engine.policy import OriginPolicy, RefusalLog

_MAX_ROUNDS = 3
#: Requests that stay open by design (server-sent events): waiting for them to finish only costs the cap.
STREAMS = {"eventsource", "websocket"}

# Counts the document's mutations from the start of an action: typing runs it first, in the script
# that focuses the field (page_scripts.FILL_PREPARE), so that settling knows whether typing changed
# anything. Only the main frame's count is read: typing in a child frame waits the full window.
# With ``typing``, the typed field's own change (a framework mirroring its value into the attribute,
# the text of a contenteditable) is the action itself, not the page reacting to it, and is not
# counted. Non-enumerable: the page's own code listing window's keys does not see it.
WATCH_DOM = """(typing) => {
  const old = window.__webhandQuiet;
  try { if (old && old.observer instanceof MutationObserver) old.observer.disconnect(); } catch (_) {}
  const state = {mutations: 0, onMutation: null};
  const own = (r, typed) => typed && (r.target === typed ? r.attributeName === 'value'
    : typed.isContentEditable && r.type !== 'attributes' && typed.contains(r.target));
  state.observer = new MutationObserver(records => {
    const typed = typing ? document.activeElement : null;
    const counted = records.filter(r => !own(r, typed)).length;
    state.mutations += counted;
    if (counted && state.onMutation) state.onMutation();
  });
  state.observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  try { Object.defineProperty(window, '__webhandQuiet', {value: state, configurable: true, writable: true}); }
  catch (_) {}  // a page that took the name: settling then waits the full window
  return state;
}"""

# Resolves once the document has gone ``quiet`` ms without a DOM mutation, or after ``cap`` ms.
# With ``unchanged`` > 0 and a watch that counted no mutation since the action began, it resolves
# sooner: once both the next animation frame and a task after it have run (rAF-batched renderers
# draw then) and ``unchanged`` ms have passed (short timers, message-channel tasks, a worker's
# answer). A mutation meanwhile switches back to the full window. A tab that draws no frames
# (hidden) still ends at the ``quiet`` window.
DOM_QUIET = """([quiet, cap, unchanged]) => new Promise(resolve => {
  let state = window.__webhandQuiet, timer = 0;
  const known = !!state && state.observer instanceof MutationObserver && typeof state.mutations === 'number';
  if (!known) state = (""" + WATCH_DOM + """)(false);
  const finish = () => {
    state.observer.disconnect(); clearTimeout(timer); clearTimeout(limit);
    try { if (window.__webhandQuiet === state) delete window.__webhandQuiet; } catch (_) {}
    resolve(true);
  };
  const limit = setTimeout(finish, cap);
  state.onMutation = () => { clearTimeout(timer); timer = setTimeout(finish, quiet); };
  state.onMutation();
  if (known && unchanged > 0 && state.mutations === 0) {
    let waits = 2;
    const one = () => { if (--waits === 0 && state.mutations === 0) finish(); };
    requestAnimationFrame(() => setTimeout(one, 0));
    setTimeout(one, unchanged);
  }
})"""

LOADED = """() => document.readyState === 'complete' ||
  new Promise(resolve => window.addEventListener('load', () => resolve(true), {once: true}))"""


#: Resolves once the page has drawn its next animation frame, run the tasks that frame posted, and
#: gone idle (requestIdleCallback): a framework that mounts in a frame (or a task), and the fetches
#: its mount starts, have run by then. Waiting for the frame matters: Chromium may run idle callbacks
#: before a frame already requested. Capped on our side by the load window (a tab that draws no
#: frames ends there).
IDLE = """() => new Promise(resolve =>
  requestAnimationFrame(() => setTimeout(() => requestIdleCallback(() => resolve(true)), 0)))"""


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

    __slots__ = ("main_navigation", "method", "resource_type", "url")

    def __init__(self, url: str, method: str, resource_type: str, main_navigation: bool) -> None:
        self.url = url
        self.method = method
        self.resource_type = resource_type
        self.main_navigation = main_navigation  # a navigation of the tab's main frame


class RequestTracker:
    """One page's requests in flight, and the hand-off of its events to the current action watch."""

    def __init__(self, probe: PageProbe, policy: OriginPolicy | None, refusals: RefusalLog | None) -> None:
        self.probe = probe
        self.policy = policy
        self.refusals = refusals
        self.inflight: set[TrackedRequest] = set()
        self.documents_awaited: set[TrackedRequest] = set()  # main-frame navigations with no response yet
        self.watch: ActionWatch | None = None
        self.activity = asyncio.Event()  # set on every event; waiters re-check their condition
        self.commits = 0  # main-frame documents committed so far (a navigation's, or an error page's)
        # When a request last started or ended, or the page last fired "load" (loop time): the
        # network has been quiet since then.
        self.quiet_since = asyncio.get_running_loop().time()

    # fed by the driver ------------------------------------------------------------------------
    def request_started(self, request: TrackedRequest) -> None:
        self._busy()
        self.inflight.add(request)
        if request.main_navigation:
            self.documents_awaited.add(request)
        if self.watch:
            self.watch.started(request)
        self.activity.set()

    def response(self, request: TrackedRequest, status: int, headers: dict[str, str]) -> None:
        self.documents_awaited.discard(request)
        self.activity.set()
        if self.watch and status >= 400:
            refused = self.policy.refused_response(request.url, headers) if self.policy else None
            self.watch.failed(FailedRequest(request.method, request.url, refused or f"HTTP {status}"))

    def finished(self, request: TrackedRequest) -> None:
        self._busy()
        self.inflight.discard(request)
        self.documents_awaited.discard(request)
        if self.watch:
            self.watch.finished(request)
        self.activity.set()

    def failed(self, request: TrackedRequest, reason: str) -> None:
        self._busy()
        self.inflight.discard(request)
        self.documents_awaited.discard(request)
        if self.watch:
            self.watch.finished(request)
            refusal = self.policy.refusal(request.url) if self.policy else None
            if refusal:
                self.watch.failed(FailedRequest(request.method, request.url, refusal))
            elif "ERR_ABORTED" not in reason:  # cancelled by the page or by a navigation: not a failure
                self.watch.failed(FailedRequest(request.method, request.url, reason))
        self.activity.set()

    def main_committed(self) -> None:
        self.commits += 1
        if self.watch:
            self.watch.committed = True
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


class ActionWatch:
    def __init__(self, tracker: RequestTracker, caps: SettleCaps) -> None:
        self.tracker = tracker
        self.caps = caps
        self.pending: set[TrackedRequest] = set()
        self.failures: list[FailedRequest] = []
        self.navigation: TrackedRequest | None = None  # a main-frame navigation not yet committed or ended
        self.committed = False
        self.refusals_seen = tracker.refusals.count if tracker.refusals else 0
        tracker.watch = self  # the newest action's watch gets the events

    # fed by the tracker ------------------------------------------------------------------------
    def started(self, request: TrackedRequest) -> None:
        if request.resource_type in STREAMS:
            return
        self.pending.add(request)
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
        caps = self.caps
        loop = asyncio.get_running_loop()
        navigation_deadline = loop.time() + caps.navigation
        requests_deadline = loop.time() + caps.requests
        navigation_unfinished = False
        unfinished: list[str] = []
        # Watching a loaded page for requests it starts on its own takes two rounds per wave
        # (one sees the requests start, the next waits for them); the deadlines bound the time.
        for round_number in range(_MAX_ROUNDS + (2 if caps.load_quiet > 0 else 0)):
            if round_number == 0 and caps.page_load:
                # The driver waited for "load": the page's loading and its own DOM work are done,
                # and its navigation with them (a later one keeps ``navigation`` set). What the
                # page does next, the load window below watches; no DOM-quiet window first.
                state = "quiet"
                if self.navigation is None:
                    self.committed = False
            else:
                # Only the first round knows what happened since before the action; later rounds
                # follow a response or a navigation, which usually changes the DOM: the full window.
                state = await self._dom_quiet(caps.dom_unchanged_ms if round_number == 0 else 0)
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
                    unfinished += [r.url for r in self.pending]
                    self.pending.clear()
            if not waited and caps.load_quiet > 0:
                # Nothing pending: the page is ready once the network has been quiet for the
                # window since its last request or its "load"; a client-rendered page fetches
                # its content in that time, and then that request is waited for.
                window = min(self.tracker.quiet_since + caps.load_quiet, requests_deadline) - loop.time()
                waited = window > 0 and await self._until_request_or_idle(window)
            if not waited:
                break
        else:
            unfinished += [r.url for r in self.pending]  # started in the last round, never waited on
            self.pending.clear()
        if self.tracker.refusals is not None:  # refused anywhere in the context, e.g. in a tab it opened
            for method, url, reason in self.tracker.refusals.since(self.refusals_seen):
                self.failed(FailedRequest(method, url, reason))
            self.refusals_seen = self.tracker.refusals.count
        return Settled(list(self.failures), unfinished, navigation_unfinished)

    async def _until_request_or_idle(self, window: float) -> bool:
        """True when the page starts a request or navigates within ``window``; False once it is
        idle (``IDLE``) with none started, or at the window's end. A static page is idle after
        its next frame, so it does not pay the whole window; one that fetches as it mounts does
        so before it is idle."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + window
        started = lambda: bool(self.pending) or self.committed  # noqa: E731
        idle = asyncio.ensure_future(self.tracker.probe.main_evaluate(IDLE))
        watch = asyncio.ensure_future(self.tracker.until(started, window))
        try:
            await asyncio.wait({idle, watch}, timeout=window, return_when=asyncio.FIRST_COMPLETED)
        finally:
            idle.cancel()
            watch.cancel()
        if started():
            return True
        if idle.done() and not idle.cancelled() and idle.exception() is None:
            # A request the page started before it went idle may still be on its way to us.
            try:
                await asyncio.wait_for(self.tracker.probe.events_caught_up(), max(0.0, deadline - loop.time()))
            except (TimeoutError, PageGone):
                pass
        return started()

    async def _dom_quiet(self, unchanged_ms: int = 0) -> str:
        """'quiet' when the DOM went quiet (or hit its cap), 'navigated' if the document was replaced,
        'gone' if the page closed or is blocked (e.g. by an open alert)."""
        probe, caps = self.tracker.probe, self.caps
        if probe.closed:
            return "gone"
        if caps.dom_cap <= 0 or caps.dom_quiet_ms <= 0:
            return "quiet"
        answer = asyncio.ensure_future(probe.main_evaluate(DOM_QUIET, [caps.dom_quiet_ms, caps.dom_cap * 1000,
                                                                       unchanged_ms]))
        try:
            async with asyncio.timeout(caps.dom_cap + 0.5):
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
        return "quiet"


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
