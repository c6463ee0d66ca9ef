"""What a tab does for the debugging tools: service workers and Chromium's performance counters.

A mixin of ``PlaywrightTab`` (tab.py); it expects ``self.page`` and ``self.devtools`` (the
tab's ``TabDevtools``, which keeps the service worker registrations current from CDP events).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.driver import ServiceWorkerRegistration
from webhand.engine.pw.errors import translated
from webhand.errors import ActionTimeout, InvalidArgument

if TYPE_CHECKING:
    from webhand.engine.pw.devtools import TabDevtools

# Resolves once the browser has checked for a new script: true when the registration exists.
_UPDATE = """async scope => {
  const registration = await navigator.serviceWorker.getRegistration(scope);
  if (!registration || registration.scope !== scope) return false;
  await registration.update();
  return true;
}"""


class TabDebugging:
    page: PWPage
    devtools: "TabDevtools"

    async def service_workers(self) -> list[ServiceWorkerRegistration]:
        await self.devtools.ready
        return self.devtools.service_workers()

    async def service_worker_action(self, action: str, scope: str, *, timeout: float) -> None:
        await self.devtools.ready
        if not any(r.scope == scope for r in self.devtools.service_workers()):
            raise InvalidArgument(f"No service worker is registered for the scope {scope}.",
                                  "Call browser_service_workers without an action to list the scopes.")
        session = await self._session()  # type: ignore[attr-defined]
        what = {"unregister": "Unregistering", "update": "Updating", "skip_waiting": "Activating the waiting"}[action]
        async with translated(f"{what} service worker of {scope}", timeout):
            if action == "update":
                await self._update(scope, timeout)
                return
            method = "ServiceWorker.unregister" if action == "unregister" else "ServiceWorker.skipWaiting"
            await session.send(method, {"scopeURL": scope})

        def done() -> bool:
            registration = next((r for r in self.devtools.service_workers() if r.scope == scope), None)
            if action == "unregister":
                return registration is None
            return registration is None or not any(v.state in ("waiting", "activating") for v in registration.versions)

        if not await self.devtools.until(done, timeout):
            raise ActionTimeout(f"The browser did not report the service worker of {scope} as changed within "
                                f"{timeout:g} s.", "Call browser_service_workers to see its state now.")

    async def _update(self, scope: str, timeout: float) -> None:
        """Ask the page's own ``registration.update()`` when the page is in the scope's origin: it
        answers once the browser checked the script. Else ask CDP, which answers at once."""
        origin = self.page.url.split("/", 3)[:3]
        if scope.split("/", 3)[:3] == origin:
            try:
                if await asyncio.wait_for(self.page.evaluate(_UPDATE, scope), timeout):
                    return
            except asyncio.TimeoutError:
                raise ActionTimeout(f"The update check of {scope} did not finish within {timeout:g} s.",
                                    "Call browser_service_workers to see its state now.") from None
            except PWError as error:
                raise InvalidArgument(f"The update of {scope} failed: {str(error).splitlines()[0]}",
                                      "Check that the service worker script still loads.") from None
        session = await self._session()  # type: ignore[attr-defined]
        await session.send("ServiceWorker.updateRegistration", {"scopeURL": scope})

    async def performance_metrics(self, *, timeout: float) -> dict[str, float]:
        try:
            async with translated("Reading the performance counters", timeout):
                return await asyncio.wait_for(self.devtools.metrics(), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"Reading the performance counters did not finish within {timeout:g} s.",
                                "The page may be busy: try again.") from None
