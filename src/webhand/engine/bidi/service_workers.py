"""browser_service_workers on Firefox. WebDriver BiDi has no service worker registry (nothing like
CDP's ServiceWorker domain), so what is listed is what the page agent's sandbox asks
``navigator.serviceWorker`` of the tab's page: the registrations of that page's origin (another
origin's are not seen from here, and the reply says so), each slot's worker (installing, waiting,
active) with its state, and whether the active one controls the page. Whether a worker runs is
BiDi's: a running worker has a ``service-worker`` realm, whose origin is its script URL.

update and unregister are the page's ``registration.update()`` and ``unregister()``, and return
once the page sees the change (capped). skip_waiting is refused: only the worker itself can call
``skipWaiting()``, and Firefox does not run BiDi scripts in a worker's realm.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from webhand.engine.bidi.connection import BidiConnection, guarded
from webhand.engine.driver import ServiceWorkerRegistration, ServiceWorkerVersion
from webhand.errors import ActionTimeout, InvalidArgument, NotOnFirefox

#: A worker's ``state`` as the tool names it (the slot it is in says the same: installing, waiting, active).
_STATES = {"parsed": "installing", "installing": "installing", "installed": "waiting", "activating": "activating",
           "activated": "active", "redundant": "redundant"}

# The registrations of the page's origin: scope, whether its active worker controls the page, each worker.
_LIST = """async function () {
  const container = navigator.serviceWorker;
  if (!container) return null;
  const registrations = await container.getRegistrations();
  const controller = container.controller;
  return registrations.map(r => ({
    scope: r.scope,
    controls: !!controller && !!r.active && r.active.scriptURL === controller.scriptURL
              && location.href.startsWith(r.scope),
    workers: [r.installing, r.waiting, r.active].filter(w => w).map(w => [w.scriptURL, w.state]),
  }));
}"""

# update or unregister the registration of exactly ``scope``: false when there is none.
_ACT = """async function (scope, action) {
  const registration = await navigator.serviceWorker.getRegistration(scope);
  if (!registration || registration.scope !== scope) return false;
  if (action === 'update') await registration.update(); else await registration.unregister();
  return true;
}"""

_POLL = 0.05
#: What the listing covers, as the reply says it.
REACH = "Firefox lists the registrations of this page's origin only (WebDriver BiDi has no service worker registry)."


class ServiceWorkerTab(Protocol):
    connection: BidiConnection
    context_id: str

    @property
    def url(self) -> str: ...

    async def call(self, function: str, args: list[Any], *, doing: str, timeout: float, this: Any = None,
                   sandbox: bool = True, context: str | None = None) -> Any: ...


class BidiServiceWorkers:
    """A Firefox tab's ``service_workers`` component (``driver.ServiceWorkers``): the page's own view."""

    reach: str | None = REACH

    def __init__(self, tab: ServiceWorkerTab) -> None:
        self._tab = tab

    async def registrations(self) -> list[ServiceWorkerRegistration]:
        return await registrations(self._tab)

    async def act(self, action: str, scope: str, *, timeout: float) -> None:
        await act(self._tab, action, scope, timeout=timeout)


async def _running_scripts(connection: BidiConnection, timeout: float) -> set[str]:
    async with guarded("Listing Firefox's running service workers", timeout):
        found = await connection.send("script.getRealms", {"type": "service-worker"})
    return {realm.get("origin", "") for realm in found.get("realms", [])}


async def registrations(tab: ServiceWorkerTab, *, timeout: float = 10.0) -> list[ServiceWorkerRegistration]:
    """The registrations of the tab's page's origin, as the page sees them; [] where the page has no
    ``navigator.serviceWorker`` (not a secure context, about:blank)."""
    listed = await tab.call(_LIST, [], doing="Listing the page's service workers", timeout=timeout)
    if not listed:
        return []
    running = await _running_scripts(tab.connection, timeout)
    return [ServiceWorkerRegistration(
        str(entry["scope"]),
        [ServiceWorkerVersion(str(script), _STATES.get(str(state), str(state)),
                              "running" if script in running else "stopped") for script, state in entry["workers"]],
        bool(entry["controls"])) for entry in listed]


async def act(tab: ServiceWorkerTab, action: str, scope: str, *, timeout: float) -> None:
    """Unregister or update the registration of ``scope``; returns once the page sees the change
    (capped by ``timeout``). skip_waiting is refused (see ``_skip_waiting``)."""
    if action == "skip_waiting":
        _skip_waiting(scope)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    done = await tab.call(_ACT, [scope, action], doing=f"Service worker {action} of {scope}", timeout=timeout)
    if not done:
        raise InvalidArgument(f"No service worker is registered for the scope {scope}.",
                              "Call browser_service_workers to list them.")
    if action == "update":
        return  # update() resolves once the browser has fetched the script and compared it
    while scope in {r.scope for r in await registrations(tab, timeout=max(0.5, deadline - loop.time()))}:
        if loop.time() >= deadline:
            raise ActionTimeout(f"Unregistering {scope} was not seen done within {timeout:g} s.",
                                "Call browser_service_workers to see its state.")
        await asyncio.sleep(_POLL)


def _skip_waiting(scope: str) -> None:
    """Only the waiting worker can skip its waiting (``self.skipWaiting()``: no page API does it), and
    BiDi cannot run code there: Firefox 153 lists a service worker's realm (``script.getRealms``) but
    answers ``script.evaluate`` in it with "no such frame: Realm with id … not found"."""
    raise NotOnFirefox(f"Activating the waiting worker of {scope} (skip_waiting)",
                       "Close or reload the pages the old worker controls (the waiting one then activates), "
                       "or use driver = \"cdp\".",
                       lacking="BiDi cannot run code in a service worker (script.evaluate in its realm answers "
                               "\"Realm not found\"), and only the worker can call skipWaiting()")
