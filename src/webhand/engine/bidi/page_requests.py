"""Whether the tab has heard of every request the page has in flight, on Firefox.

Firefox reports a request (``network.beforeRequestSent``) from its parent process, once the
request reaches ``http-on-before-connect``: after its proxy and classifier steps, a few ms to a few
hundred under load after the page called ``fetch``. The answer to a script that ran after that
call takes the direct way and comes first. So "the page went idle and no request was announced"
does not mean the page started none (CDP sends both in order on one session; BiDi has no command
that waits for the network events, see docs/design.md "Waiting for effects").

The page says it instead: a preload script (``script.addPreloadScript``, in the page's own realm,
before the page's scripts) counts the page's ``fetch`` and ``XMLHttpRequest`` requests to http(s)
in flight, the way a framework loads its content. ``announced`` reads that count and waits, by the
tab's events and capped, until the tab knows at least as many such requests in flight.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from webhand.engine.bidi.connection import BidiConnection, guarded
from webhand.engine.settle import DocumentReplaced, PageGone, RequestTracker
from webhand.errors import WebhandError

#: The resource types (as ``network.resource_type`` names them) of the requests the page counts.
COUNTED = ("fetch", "xhr")
#: How long to wait for Firefox to announce a request the page says it has in flight (s): well over
#: the few hundred ms a loaded machine takes; a request that never gets announced (one a service
#: worker answers) costs this at most.
ANNOUNCE_CAP = 2.0

# Counts the page's fetch() and XMLHttpRequest requests to http(s) in flight, in a non-enumerable
# window.__webhandRequests ({pending}). Proxies of the originals (their name, length and prototype
# stay), built before any page script runs; what they call back through (Promise's then,
# addEventListener) is taken then too, so a page that replaces those later does not stop the
# count. A page that changes the count only makes the wait below end sooner or at its cap.
COUNT_REQUESTS = """() => {
  const state = {pending: 0};
  try { Object.defineProperty(window, '__webhandRequests', {value: state, configurable: true}); } catch (_) { return; }
  const then = Promise.prototype.then, listen = EventTarget.prototype.addEventListener, base = location.href;
  const Url = URL, Req = window.Request;
  const web = url => { try { return /^https?:$/.test(new Url(String(url), base).protocol); } catch (_) { return false; } };
  const done = () => { state.pending = Math.max(0, state.pending - 1); };
  const wrap = (owner, name, apply) => {
    const original = owner && owner[name];
    if (typeof original !== 'function') return;
    try { owner[name] = new Proxy(original, {apply}); } catch (_) {}
  };
  wrap(window, 'fetch', (target, self, args) => {
    const answer = Reflect.apply(target, self, args);
    let url = '';
    try { url = Req && args[0] instanceof Req ? args[0].url : String(args[0]); } catch (_) {}
    if (web(url)) { state.pending++; Reflect.apply(then, answer, [done, done]); }
    return answer;
  });
  const xhr = window.XMLHttpRequest && window.XMLHttpRequest.prototype, opened = new WeakMap();
  wrap(xhr, 'open', (target, self, args) => {
    opened.set(self, web(args[1]));
    return Reflect.apply(target, self, args);
  });
  wrap(xhr, 'send', (target, self, args) => {
    if (opened.get(self)) {
      opened.delete(self);
      state.pending++;
      Reflect.apply(listen, self, ['loadend', done, {once: true}]);
    }
    return Reflect.apply(target, self, args);
  });
}"""

#: How many of the page's counted requests are in flight (0 where the count is missing or broken).
IN_FLIGHT = """() => { const s = window.__webhandRequests, n = s && s.pending;
  return typeof n === 'number' && n > 0 ? Math.min(n, 1000) : 0; }"""


class CountingTab(Protocol):
    tracker: RequestTracker

    async def main_evaluate(self, script: str, arg: Any = None) -> Any: ...


async def install(connection: BidiConnection, user_context: str) -> str:
    """Count the page's requests in every document a session's user context loads from now on (a
    Firefox webhand connects to keeps its own tabs as they were); the preload script's id."""
    async with guarded("Installing the page's request count", 30):
        answer = await connection.send("script.addPreloadScript", {"functionDeclaration": COUNT_REQUESTS,
                                                                   "userContexts": [user_context]})
    return str(answer.get("script", ""))


def known_in_flight(tracker: RequestTracker) -> int:
    return sum(1 for request in tracker.inflight if request.resource_type in COUNTED)


async def announced(tab: CountingTab, cap: float = ANNOUNCE_CAP) -> None:
    """Return once the tab knows of as many fetch/XHR requests in flight as the page says it has,
    or at the cap. A page gone or navigating away returns at once (nothing to wait for there)."""
    try:
        pending = int(await asyncio.wait_for(tab.main_evaluate(IN_FLIGHT), cap) or 0)
    except (TimeoutError, DocumentReplaced, PageGone, WebhandError):
        return
    if pending > 0:
        await tab.tracker.until(lambda: known_in_flight(tab.tracker) >= pending, cap)
