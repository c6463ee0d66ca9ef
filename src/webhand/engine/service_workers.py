"""browser_service_workers below the tools, the same on both Chromium drivers (raw CDP, Playwright;
Firefox over BiDi lists the page's own, engine/bidi/service_workers.py): the registrations of a
session as the browser reports them over CDP (the ServiceWorker domain of a tab's CDP session), and
the actions on one (unregister, update, skip waiting), which return once the browser reports the
change.

Each Chromium driver's tab owns a ``ServiceWorkerActions`` (its ``service_workers`` component), made with its ``CdpChannel``, how it reaches
its registry (the raw driver enables the domain the first time a tool asks, Playwright with the
tab), its console (``evaluate``) and its URL.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from webhand.engine.channel import CdpChannel
from webhand.engine.console_javascript import ConsoleJavaScript
from webhand.engine.driver import ServiceWorkerRegistration, ServiceWorkerVersion
from webhand.errors import ActionTimeout, EvaluationFailed, InvalidArgument, WebhandError

#: CDP's version status, as the issue and DevTools name it.
_STATES = {"new": "installing", "installing": "installing", "installed": "waiting", "activating": "activating",
           "activated": "active", "redundant": "redundant"}

# Resolves once the browser has checked for a new script: true when the registration exists.
_UPDATE = """async scope => {
  const registration = await navigator.serviceWorker.getRegistration(scope);
  if (!registration || registration.scope !== scope) return false;
  await registration.update();
  return true;
}"""


# The script URL of the worker controlling the page, or null.
_CONTROLLER = "(navigator.serviceWorker && navigator.serviceWorker.controller || {}).scriptURL || null"
#: How long the page is asked which worker controls it (a listing never waits on a busy page).
_ASK_PAGE = 2.0


class ServiceWorkerRegistry:
    """The registrations and versions of one browser context, kept current from a session's
    ``ServiceWorker.workerRegistrationUpdated`` and ``workerVersionUpdated`` events. Enabling the
    domain sends one of each at once, with everything there is (empty lists when there is none)."""

    def __init__(self) -> None:
        self.registrations: dict[str, tuple[str, bool]] = {}  # registration id → (scope, deleted)
        self.versions: dict[str, tuple[str, ServiceWorkerVersion]] = {}  # version id → (registration id, version)
        self.clients: dict[str, frozenset[str]] = {}  # version id → the targets (tabs) it controls
        self.heard = False  # both first events came: the lists are complete
        self._heard_registrations = False
        self._changed = asyncio.Event()

    def on_registrations(self, event: dict[str, Any]) -> None:
        for registration in event["registrations"]:
            self.registrations[registration["registrationId"]] = (registration["scopeURL"], registration["isDeleted"])
        self._heard_registrations = True
        self._changed.set()

    def on_versions(self, event: dict[str, Any]) -> None:
        for version in event["versions"]:
            self.versions[version["versionId"]] = (version["registrationId"], ServiceWorkerVersion(
                version["scriptURL"], _STATES.get(version["status"], version["status"]), version["runningStatus"]))
            self.clients[version["versionId"]] = frozenset(version.get("controlledClients") or ())
        self.heard = self._heard_registrations
        self._changed.set()

    def listing(self, target: str = "") -> list[ServiceWorkerRegistration]:
        """The live registrations, each marked when one of its workers controls ``target`` (a tab's
        CDP target id; "" marks none)."""
        found = []
        for registration_id, (scope, deleted) in self.registrations.items():
            if deleted:
                continue
            mine = [(i, v) for i, (r, v) in self.versions.items() if r == registration_id and v.state != "redundant"]
            controls = bool(target) and any(target in self.clients.get(i, ()) for i, _ in mine)
            found.append(ServiceWorkerRegistration(scope, [v for _, v in mine], controls))
        return sorted(found, key=lambda r: r.scope)

    async def until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Wait for the browser's service worker events until ``condition`` holds (capped)."""
        deadline = time.monotonic() + timeout
        while not condition():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except asyncio.TimeoutError:
                return condition()
        return True


class ServiceWorkerActions:
    """A tab's ``service_workers`` component (``driver.ServiceWorkers``) on Chromium."""

    reach: str | None = None  # the browser's registry (ServiceWorker domain): all of them

    def __init__(self, channel: CdpChannel, registry: Callable[[], Awaitable[ServiceWorkerRegistry]],
                 console: ConsoleJavaScript, url: Callable[[], str]) -> None:
        self.channel = channel
        self._registry = registry  # the tab's registry, once it is current
        self._console = console
        self._url = url
        self._target_id = ""

    async def registrations(self) -> list[ServiceWorkerRegistration]:
        registry = await self._registry()
        listing = registry.listing(await self._target())
        if listing and not any(r.controls_page for r in listing):
            listing = await self._by_the_pages_controller(listing)
        return listing

    async def _target(self) -> str:
        """The tab's CDP target id: what a worker version's ``controlledClients`` name."""
        if not self._target_id:
            try:
                info = await asyncio.wait_for(self.channel.send("Target.getTargetInfo", {}), 5)
                self._target_id = str(info["targetInfo"]["targetId"])
            except (asyncio.TimeoutError, KeyError, *self.channel.errors):
                return ""  # unknown: the page's own view is asked instead
        return self._target_id

    async def _by_the_pages_controller(self, listing: list[ServiceWorkerRegistration]) -> list[ServiceWorkerRegistration]:
        """Mark the registration controlling the page by the page's own ``navigator.serviceWorker.controller``.

        Chromium updates a version's ``controlledClients`` when a worker claims a page or a page
        closes, not when a navigation starts out controlled; the page knows. Only a registration
        the browser lists can be marked, and only the one whose scope holds the page's URL (the
        longest, as the browser picks) and whose active script is the controller's: a page's
        script cannot point the mark elsewhere."""
        try:
            script = await self._console.evaluate(_CONTROLLER, await_promise=False, timeout=_ASK_PAGE)
        except WebhandError:
            return listing  # a busy or closing page: mark none rather than guess
        url = self._url()
        scopes = [r.scope for r in listing if url.startswith(r.scope)]
        if not isinstance(script, str) or not scopes:
            return listing
        scope = max(scopes, key=len)
        return [replace(r, controls_page=True) if r.scope == scope
                and any(v.state == "active" and v.script_url == script for v in r.versions) else r for r in listing]

    async def act(self, action: str, scope: str, *, timeout: float) -> None:
        registry = await self._registry()
        if not any(r.scope == scope for r in registry.listing()):
            raise InvalidArgument(f"No service worker is registered for the scope {scope}.",
                                  "Call browser_service_workers without an action to list the scopes.")
        if action == "update":
            if not await self._update_from_page(scope, timeout):
                await self._send_or_raise("ServiceWorker.updateRegistration", scope, "Updating", timeout)
            return
        if action == "unregister":
            await self._send_or_raise("ServiceWorker.unregister", scope, "Unregistering", timeout)
        else:
            await self._send_or_raise("ServiceWorker.skipWaiting", scope, "Activating the waiting", timeout)

        def done() -> bool:
            registration = next((r for r in registry.listing() if r.scope == scope), None)
            if action == "unregister":
                return registration is None
            return registration is None or not any(v.state in ("waiting", "activating") for v in registration.versions)

        if not await registry.until(done, timeout):
            raise ActionTimeout(f"The browser did not report the service worker of {scope} as changed within "
                                f"{timeout:g} s.", "Call browser_service_workers to see its state now.")

    async def _send_or_raise(self, method: str, scope: str, what: str, timeout: float) -> None:
        try:
            await asyncio.wait_for(self.channel.send(method, {"scopeURL": scope}), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"{what} service worker of {scope} did not finish within {timeout:g} s.",
                                "Call browser_service_workers to see its state now.") from None
        except self.channel.errors as error:
            raise self.channel.translate(error, f"{what} service worker of {scope}", timeout) from None

    async def _update_from_page(self, scope: str, timeout: float) -> bool:
        """Ask the page's own ``registration.update()`` when the page is in the scope's origin: it
        answers once the browser checked the script. False when it cannot (then CDP's
        ``updateRegistration`` is asked, which answers at once)."""
        if scope.split("/", 3)[:3] != self._url().split("/", 3)[:3]:
            return False
        try:
            return bool(await self._console.evaluate(f"({_UPDATE})({json.dumps(scope)})",
                                                     await_promise=True, timeout=timeout))
        except ActionTimeout:
            raise ActionTimeout(f"The update check of {scope} did not finish within {timeout:g} s.",
                                "Call browser_service_workers to see its state now.") from None
        except EvaluationFailed as error:
            reason = error.message.split(": ", 1)[-1]  # what was thrown, without "The JavaScript threw"
            raise InvalidArgument(f"The update of {scope} failed: {reason}",
                                  "Check that the service worker script still loads.") from None
