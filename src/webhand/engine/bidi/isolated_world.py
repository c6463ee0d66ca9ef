"""The tab's ``isolated`` component on Firefox: webhand's own scripts (axe-core) in a sandbox realm
of the main frame, a WebDriver BiDi ``sandbox`` of their own name (not the page agent's).

A sandbox sees the page's DOM through Xray wrappers: the page's own properties and its changes to
built-ins (``Array.prototype.map``) are not seen there, and the page cannot see the sandbox's
globals. The sandbox lives as long as its document, so the script is installed when its
``loaded`` check is false: once per document. Elements come back by ``sharedId`` and are passed
to the page agent's sandbox, which gives each its ref.

BiDi cannot stop a script that runs past the timeout (no ``Runtime.terminateExecution``): the
call gives up, and the script finishes in the page on its own.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from webhand.engine.bidi import values
from webhand.engine.bidi.connection import BidiConnection, guarded
from webhand.engine.driver import WorldScript
from webhand.errors import EvaluationFailed, RefNotFound, WebhandError

_REF = re.compile(r"^e\d+$")
_SNAPSHOT_AGAIN = "Call browser_snapshot and use the new refs."
_RESOLVE = "r => window.__webhand ? window.__webhand.resolve(r) : 'unknown'"
_REFS_OF = "(...elements) => elements.map((el) => (el && window.__webhand && window.__webhand.refOf ? window.__webhand.refOf(el) : null))"


class SandboxTab(Protocol):
    connection: BidiConnection
    context_id: str

    async def call(self, function: str, args: list[Any], *, doing: str, timeout: float, this: Any = None,
                   sandbox: bool = True, context: str | None = None) -> Any: ...


class BidiIsolatedScripts:
    """A Firefox tab's ``isolated`` component (``driver.IsolatedWorld``)."""

    def __init__(self, tab: SandboxTab) -> None:
        self._tab = tab

    async def run(self, script: WorldScript, function: str, arg: Any, *, ref: str | None,
                  timeout: float) -> tuple[str, list[str | None]]:
        doing = "Running webhand's script in the page's sandbox"
        target = {"context": self._tab.context_id, "sandbox": script.world}
        async with guarded(doing, timeout):
            loaded = await self._send("script.evaluate", {"expression": script.loaded, "target": target,
                                                          "awaitPromise": False, "resultOwnership": "none"})
            if not values.from_remote(loaded.get("result") or {}):
                await self._send("script.evaluate", {"expression": script.source, "target": target,
                                                     "awaitPromise": False, "resultOwnership": "none"})
            element = await self._resolve(ref, timeout) if ref is not None else None
            called = await self._send("script.callFunction", {
                "functionDeclaration": function, "target": target, "awaitPromise": True, "resultOwnership": "none",
                "arguments": [values.to_local(arg), values.to_local(element)],
                "serializationOptions": {"maxObjectDepth": 2, "maxDomDepth": 0}})
            result = values.from_remote(called.get("result") or {}) or {}
            # Each in its place (what is no element passes as null), so the refs line up with them.
            nodes = [n if isinstance(n, dict) and "sharedId" in n else None for n in result.get("elements") or []]
            refs = await self._tab.call(_REFS_OF, nodes, doing="Naming the audited elements by their refs",
                                        timeout=timeout) if any(nodes) else [None] * len(nodes)
        return str(result.get("value", "")), [r if isinstance(r, str) else None for r in refs or []]

    async def _send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = await self._tab.connection.send(method, params)
        if result.get("type") == "exception":
            details = result.get("exceptionDetails") or {}
            raise EvaluationFailed(f"webhand's script failed in the page: {str(details.get('text', 'an exception'))[:300]}",
                                   "Call browser_snapshot to see the page; it may have navigated meanwhile.")
        return result

    async def _resolve(self, ref: str, timeout: float) -> dict[str, Any]:
        if not _REF.match(ref.strip()):
            raise RefNotFound(f"'{ref}' is not a ref of the main frame.",
                              "Give a ref like e12 from browser_snapshot (elements inside frames cannot be audited).")
        try:
            node = await self._tab.call(_RESOLVE, [ref.strip()], doing=f"Finding {ref}", timeout=timeout)
        except WebhandError:
            raise RefNotFound(f"Ref {ref} is not on the current page (it navigated).", _SNAPSHOT_AGAIN) from None
        if isinstance(node, dict) and "sharedId" in node:
            return node
        if node == "removed":
            raise RefNotFound(f"Ref {ref} is stale: its element was removed or replaced since the snapshot.", _SNAPSHOT_AGAIN)
        raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated or the ref was never issued).",
                          _SNAPSHOT_AGAIN)
