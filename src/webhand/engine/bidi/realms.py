"""Which console messages on Firefox are a dedicated worker's: the workers' realms, from
``script.realmCreated`` and ``script.realmDestroyed``.

Firefox 153 reports a dedicated worker's console calls as its owner window's: ``log.entryAdded``
names the window's realm and browsing context (its log module listens per window; Firefox's bug
1742589). What tells them apart is where the call was made: the worker's realm, which Firefox does
report, carries the worker's script URL (as its ``origin``), and the message's top stack frame is
in that script. A message is the worker's when the frame's URL is the script of a dedicated worker
that the message's browsing context runs (one its importScripts loaded reads as the page's).
A shared or service worker's messages never come (no window listens for them).
"""

from __future__ import annotations

from typing import Any

class WorkerScripts:
    """The dedicated workers alive in the browser: each one's browsing context and script URL."""

    def __init__(self) -> None:
        self._windows: dict[str, str] = {}  # a window realm (not a sandbox) -> its browsing context
        self._workers: dict[str, tuple[str, str]] = {}  # a dedicated worker realm -> (its window's context, script URL)

    def created(self, params: dict[str, Any]) -> tuple[str, str] | None:
        """A ``script.realmCreated``: a new dedicated worker's (context, script URL), else None."""
        realm, kind = params.get("realm", ""), params.get("type")
        if kind == "window" and params.get("context") and not params.get("sandbox"):
            self._windows[realm] = params["context"]
        elif kind == "dedicated-worker":
            context = self._context_of(params.get("owners") or [])
            if context is not None:
                self._workers[realm] = (context, str(params.get("origin") or ""))
                return self._workers[realm]
        return None

    def destroyed(self, params: dict[str, Any]) -> None:
        realm = params.get("realm", "")
        self._windows.pop(realm, None)
        self._workers.pop(realm, None)

    def runs(self, context: str, script_url: str) -> bool:
        """Whether a dedicated worker of ``context`` runs the script at ``script_url``."""
        return (context, script_url) in self._workers.values()

    def _context_of(self, owners: list[str]) -> str | None:
        """The browsing context of the window that owns a worker; a nested worker's is its parent
        worker's (already resolved when the parent was created)."""
        owner = owners[0] if owners else ""
        if owner in self._windows:
            return self._windows[owner]
        parent = self._workers.get(owner)
        return parent[0] if parent else None
