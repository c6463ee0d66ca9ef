"""Serve a stdio client's first ``tools/list`` and ``tools/call`` before the MCP SDK is loaded.

A host spawns ``webhand mcp``, initializes, lists the tools and calls the first one at once. The
official SDK costs about half a second of CPU to import, more than the browser takes to boot on
the other core, so waiting for it would put its whole import on the way to the first page.
Instead, once ``initialize`` was answered early (``wire``), this server answers the two
requests a host sends first, with the same JSON the SDK would write (one rendering:
``tool_json``), while the SDK loads after the first call.

It serves only what it can answer exactly as the SDK would: a well-formed ``tools/list`` or
``tools/call``, the ``initialized`` notification (kept, for the SDK to see), and a cancellation of
one of its own calls. At the first line it does not serve, or once the SDK is loaded, it stops
reading and hands the session over: that line and everything after it go to the SDK, which owns
the session from then on. Calls it started still answer when they finish.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webhand.surfaces.mcp.tool_json import call_result, tool_entry, unknown_tool_result
from webhand.surfaces.mcp.startup.wire import StdioWire

if TYPE_CHECKING:
    from webhand.host import Conversation
    from webhand.surfaces.exposure import ExposedTool

log = logging.getLogger("webhand.mcp")


@dataclass
class Handover:
    """What the SDK must read before the client's next line, and whether stdin already ended."""

    replay: list[bytes] = field(default_factory=list)
    ended: bool = False


class EarlyServer:
    def __init__(self, wire: StdioWire, context: Conversation, exposed: Callable[[], dict[str, ExposedTool]]) -> None:
        self._wire, self._context, self._exposed = wire, context, exposed
        self._calls: dict[int | str, asyncio.Task[None]] = {}
        #: Whether a tools/call may be served here: not when the call needs what only the SDK speaks
        #: (the client's roots, asking its person, progress notifications; see server.py).
        self._plain_client = False  # known once the client's initialize was read (serve)
        #: Set when a first call was answered, or the SDK is needed now: time to load it.
        self.wants_sdk = asyncio.Event()

    async def serve(self, sdk_loaded: asyncio.Event) -> Handover:
        """Serve until a line only the SDK can answer, the SDK is loaded, or stdin ends."""
        wire = self._wire
        handover = Handover([wire.opening] if wire.opening else [])
        if wire.answered is None:  # not an initialize answered early: the SDK serves it all
            self.wants_sdk.set()
            return handover
        self._plain_client = not _needs_sdk_for_calls(wire.opening)
        loaded = asyncio.ensure_future(sdk_loaded.wait())
        try:
            while True:
                reading = asyncio.ensure_future(wire.next_line())
                await asyncio.wait((reading, loaded), return_when=asyncio.FIRST_COMPLETED)
                if not reading.done():  # the SDK is loaded: it reads from here on
                    reading.cancel()
                    return handover
                line = reading.result()
                if line is None:
                    handover.ended = True
                    return handover
                if not self._serve(line, handover):
                    handover.replay.append(line)
                    self.wants_sdk.set()
                    return handover
        finally:
            loaded.cancel()

    def _serve(self, line: bytes, handover: Handover) -> bool:
        """Serve one line, or False to leave it (and all after it) to the SDK."""
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        method, params = message.get("method"), message.get("params")
        if "id" not in message:
            if method == "notifications/initialized" and (params is None or isinstance(params, dict)):
                handover.replay.append(line)  # the SDK keeps the session's state
                return True
            return method == "notifications/cancelled" and self.cancel(params)
        request_id = message["id"]
        if isinstance(request_id, bool) or not isinstance(request_id, int | str) or request_id in self._calls:
            return False
        if method == "tools/list" and _well_formed(params, {"cursor": str}):
            entries = [tool_entry(t) for t in self._exposed().values()]
            self._start(request_id, self._answer(request_id, {"tools": entries}))
            return True
        if (method == "tools/call" and _well_formed(params, {"name": str, "arguments": dict}, required="name")
                and self._plain_client and "progressToken" not in ((params or {}).get("_meta") or {})):
            self._start(request_id, self._call(request_id, params["name"], params.get("arguments") or {}))
            return True
        return False

    def cancel(self, params: Any) -> bool:
        """Cancel one of this server's calls (``notifications/cancelled``); False when it is not one."""
        request_id = params.get("requestId") if isinstance(params, dict) else None
        call = self._calls.get(request_id) if isinstance(request_id, int | str) and not isinstance(request_id, bool) else None
        if call is None:
            return False
        call.cancel()  # the spec: a cancelled request gets no answer
        return True

    def cancels_own_call(self, line: bytes) -> bool:
        """For the SDK's input: a cancellation of a call this server still runs is served here."""
        if b"notifications/cancelled" not in line or not self._calls:
            return False
        try:
            message = json.loads(line)
        except ValueError:
            return False
        return isinstance(message, dict) and message.get("method") == "notifications/cancelled" and self.cancel(message.get("params"))

    def _start(self, request_id: int | str, answering: Any) -> None:
        task = asyncio.ensure_future(answering)
        self._calls[request_id] = task
        task.add_done_callback(lambda _task: self._calls.pop(request_id, None))

    async def _call(self, request_id: int | str, name: str, arguments: dict[str, Any]) -> None:
        from webhand.surfaces.exposure import by_name  # light, and the catalog is loaded for a call anyway

        tool = by_name(self._exposed(), name)
        try:
            result = unknown_tool_result(name, list(self._exposed())) if tool is None else \
                call_result(await tool.run(self._context, arguments))
        except Exception as error:  # a tool never raises; if one did, answer as the SDK would
            log.exception("tool %s raised", name)
            await self._wire.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": 0, "message": str(error)}})
        else:
            await self._answer(request_id, result)
        self.wants_sdk.set()  # the first page is out: the SDK's import delays nothing now

    async def _answer(self, request_id: int | str, result: dict[str, Any]) -> None:
        await self._wire.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def stop(self) -> None:
        """End the calls still under way: the client has left, nobody reads their answers."""
        calls = list(self._calls.values())
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)


def _needs_sdk_for_calls(opening: bytes | None) -> bool:
    """Whether the client's ``initialize`` declared roots or elicitation: its calls then go to the
    SDK, which asks for its roots first and can ask its person (``server.py``)."""
    try:
        capabilities = json.loads(opening or b"{}").get("params", {}).get("capabilities", {})
    except (ValueError, AttributeError):
        return True
    return not isinstance(capabilities, dict) or "roots" in capabilities or "elicitation" in capabilities


def _well_formed(params: Any, fields: dict[str, type], *, required: str | None = None) -> bool:
    """``params`` as the SDK accepts them for this method: absent or an object with the fields of
    these types (and ``_meta``); anything else is for the SDK to refuse in its own words."""
    if params is None:
        return required is None
    if not isinstance(params, dict) or (required is not None and required not in params):
        return False
    known = {**fields, "_meta": dict}
    return all(key in known and (isinstance(value, known[key]) or (value is None and key != required))
               for key, value in params.items())
