"""The tab's ``isolated`` component on both Chromium drivers: webhand's own scripts (axe-core) in
an isolated world of the main frame, written once on the tab's ``CdpChannel`` (engine/channel.py).

``Page.createIsolatedWorld`` with one world name gives the same world for the frame each time, and
a fresh context in it for each new document; the script is installed when its ``loaded`` check is
false, so once per document. The page's scripts share the DOM with that world but not its globals
or built-ins: they cannot see the library, nor replace ``Array.prototype.map`` under it.

Elements cross worlds by their backend node id: ``DOM.describeNode`` on the isolated world's object,
``DOM.resolveNode`` back in the main world, where the page agent (``window.__webhand``) gives each its ref.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from webhand.engine.channel import CdpChannel
from webhand.engine.js import source
from webhand.engine.driver import WorldScript
from webhand.errors import ActionTimeout, EvaluationFailed, RefNotFound, WebhandError

_GROUP = "webhand-isolated"
_REF = re.compile(r"^e\d+$")
_SNAPSHOT_AGAIN = "Call browser_snapshot and use the new refs."
_REFS_OF = source("refs_of.js")


class IsolatedScripts:
    """A Chromium tab's ``isolated`` component (``driver.IsolatedWorld``), on either Chromium driver."""

    def __init__(self, channel: CdpChannel) -> None:
        self.channel = channel
        #: Contexts whose script was stopped mid-call (``Runtime.terminateExecution``): its state is
        #: unknown (axe's "already running" flag stays set), so it is installed afresh.
        self._stopped: set[int] = set()
        self._context: int | None = None

    async def run(self, script: WorldScript, function: str, arg: Any, *, ref: str | None,
                  timeout: float) -> tuple[str, list[str | None]]:
        doing = "Running webhand's script in the page's isolated world"
        try:
            async with asyncio.timeout(timeout):
                return await self._run(script, function, arg, ref)
        except WebhandError:
            raise
        except TimeoutError:
            await self._terminate()
            if self._context is not None:
                self._stopped.add(self._context)
            raise ActionTimeout(f"{doing} did not finish within {timeout:g} s.",
                                "Pass a larger timeout, or a ref to run it on a part of the page.") from None
        except self.channel.errors as error:
            raise self.channel.translate(error, doing, timeout) from None
        finally:
            await self._release()

    async def _run(self, script: WorldScript, function: str, arg: Any, ref: str | None) -> tuple[str, list[str | None]]:
        send = self.channel.send
        tree = await send("Page.getFrameTree", {})
        frame_id = tree["frameTree"]["frame"]["id"]
        world = await send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": script.world,
                                                         "grantUniveralAccess": False})
        context = self._context = world["executionContextId"]
        loaded = await send("Runtime.evaluate", {"expression": script.loaded, "contextId": context, "returnByValue": True})
        if not (loaded.get("result") or {}).get("value") or context in self._stopped:
            self._stopped.discard(context)
            installed = await send("Runtime.evaluate", {"expression": script.source, "contextId": context,
                                                        "returnByValue": True, "silent": True})
            _raise_thrown(installed, "Installing webhand's script in the page")
        element: dict[str, Any] = {"value": None}
        if ref is not None:
            element = {"objectId": await self._in_world(await self._resolve(ref), context)}
        called = await send("Runtime.callFunctionOn", {
            "functionDeclaration": function, "executionContextId": context, "objectGroup": _GROUP,
            "arguments": [{"value": arg}, element], "awaitPromise": True, "returnByValue": False, "silent": True})
        _raise_thrown(called, "webhand's script")
        holder = called["result"]["objectId"]
        value = await send("Runtime.callFunctionOn", {
            "functionDeclaration": "function () { return String(this.value); }", "objectId": holder,
            "returnByValue": True, "silent": True})
        listed = await send("Runtime.callFunctionOn", {
            "functionDeclaration": "function () { return this.elements; }", "objectId": holder, "objectGroup": _GROUP,
            "returnByValue": False, "silent": True})
        return str(value["result"].get("value", "")), await self._refs(listed["result"].get("objectId"))

    async def _resolve(self, ref: str) -> str:
        """The main-world object of the main frame's element ``ref`` names."""
        if not _REF.match(ref.strip()):
            raise RefNotFound(f"'{ref}' is not a ref of the main frame.",
                              "Give a ref like e12 from browser_snapshot (elements inside frames cannot be audited).")
        found = await self.channel.send("Runtime.evaluate", {
            "expression": f"window.__webhand ? window.__webhand.resolve({json.dumps(ref.strip())}) : 'unknown'",
            "objectGroup": _GROUP, "returnByValue": False, "silent": True})
        remote = found.get("result") or {}
        if remote.get("subtype") == "node" and remote.get("objectId"):
            return str(remote["objectId"])
        if remote.get("value") == "removed":
            raise RefNotFound(f"Ref {ref} is stale: its element was removed or replaced since the snapshot.", _SNAPSHOT_AGAIN)
        raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated or the ref was never issued).",
                          _SNAPSHOT_AGAIN)

    async def _in_world(self, object_id: str, context: int | None) -> str:
        """The same DOM node as ``object_id``, as an object of ``context`` (None: the main world)."""
        node = await self.channel.send("DOM.describeNode", {"objectId": object_id})
        params: dict[str, Any] = {"backendNodeId": node["node"]["backendNodeId"], "objectGroup": _GROUP}
        if context is not None:
            params["executionContextId"] = context
        resolved = await self.channel.send("DOM.resolveNode", params)
        return str(resolved["object"]["objectId"])

    async def _refs(self, array_id: str | None) -> list[str | None]:
        if not array_id:
            return []
        props = await self.channel.send("Runtime.getProperties", {"objectId": array_id, "ownProperties": True})
        items = sorted((int(p["name"]), p["value"]["objectId"]) for p in props.get("result", [])
                       if p.get("name", "").isdigit() and (p.get("value") or {}).get("objectId"))
        if not items:
            return []
        count = max(index for index, _ in items) + 1
        main = [await self._in_world(object_id, None) for _, object_id in items]
        refs = await self.channel.send("Runtime.callFunctionOn", {
            "functionDeclaration": _REFS_OF, "objectId": main[0], "arguments": [{"objectId": o} for o in main],
            "returnByValue": True, "silent": True})
        found = (refs.get("result") or {}).get("value") or []
        out: list[str | None] = [None] * count
        for (index, _), value in zip(items, found):
            out[index] = value if isinstance(value, str) else None
        return out

    async def _terminate(self) -> None:
        try:
            await asyncio.wait_for(self.channel.send("Runtime.terminateExecution", {}), 5)
        except (TimeoutError, *self.channel.errors):
            pass  # the page is gone or hung beyond reach: the liveness check deals with that

    async def _release(self) -> None:
        try:
            await asyncio.wait_for(self.channel.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP}), 5)
        except (TimeoutError, *self.channel.errors):
            pass  # the document is gone, and its objects with it


def _raise_thrown(reply: dict[str, Any], what: str) -> None:
    details = reply.get("exceptionDetails")
    if details:
        exception = details.get("exception") or {}
        text = (exception.get("description") or details.get("text") or "an exception").splitlines()[0]
        raise EvaluationFailed(f"{what} failed in the page: {text[:300]}",
                               "Call browser_snapshot to see the page; it may have navigated meanwhile.")
