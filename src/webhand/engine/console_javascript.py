"""The model's JavaScript, run the way a DevTools console runs it, for every driver.

REPL mode gives top-level ``await`` and lets ``const`` be declared again in a later call. It
only awaits its own wrapper, though, so a promise the expression returns comes back as a
promise: that one is awaited with ``Runtime.awaitPromise``, within the same timeout. Values
come back JSON-able (DOM nodes as a short tag, cycles and functions named). The commands go on
the tab's own CDP session, through its ``CdpChannel``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from webhand.engine.channel import CdpChannel
from webhand.engine.js import source
from webhand.errors import ActionTimeout, EvaluationFailed


class ConsoleJavaScript:
    """A Chromium tab's ``console`` component (``driver.JavaScriptConsole``), on either Chromium driver."""

    def __init__(self, channel: CdpChannel) -> None:
        self.channel = channel

    async def evaluate(self, expression: str, *, await_promise: bool, timeout: float) -> Any:
        """Run the model's JavaScript the way a DevTools console would; return a JSON-able value."""
        deadline = asyncio.get_running_loop().time() + timeout
        result = await self._runtime("Runtime.evaluate", {
            "expression": expression, "awaitPromise": await_promise, "replMode": True,
            "userGesture": True, "returnByValue": False, "timeout": int(timeout * 1000)}, deadline, timeout)
        remote = result["result"]
        awaited = await_promise and not result.get("exceptionDetails") and remote.get("subtype") == "promise"
        if awaited:
            try:
                result = await self._runtime("Runtime.awaitPromise", {
                    "promiseObjectId": remote["objectId"], "returnByValue": False}, deadline, timeout, settling=True)
            finally:
                await self._release(remote)
        details = result.get("exceptionDetails")
        if details:
            raise EvaluationFailed(thrown_message(details, rejected=awaited),
                                   "Fix the expression and call browser_eval again.")
        return await self._to_json(result["result"])

    async def _runtime(self, method: str, params: dict[str, Any], deadline: float,
                       timeout: float, *, settling: bool = False) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        try:
            return await asyncio.wait_for(self.channel.send(method, params),
                                          max(0.0, deadline - loop.time()) + (0 if settling else 1))
        except TimeoutError:
            if settling:
                raise ActionTimeout(f"The promise the JavaScript returned did not settle within {timeout:g} s.",
                                    "Make sure it resolves or rejects, or pass a larger timeout.") from None
            # Chromium's own cap (the ``timeout`` of Runtime.evaluate) did not stop it: stop it here,
            # so that the page's thread is free for the next call.
            await self._terminate()
            raise _runaway(timeout) from None
        except self.channel.errors as error:
            # Past its ``timeout``, Chromium terminates the script and answers with a bare
            # "Internal error": that is the script running too long, not the page failing.
            if not settling and loop.time() >= deadline - _CLOCK_SLACK:
                raise _runaway(timeout) from None
            raise self.channel.translate(error, "Evaluating JavaScript", timeout) from None

    async def _terminate(self) -> None:
        try:
            await asyncio.wait_for(self.channel.send("Runtime.terminateExecution", {}), 5)
        except (TimeoutError, *self.channel.errors):
            pass  # the page is gone or hung beyond reach: the liveness check deals with that

    async def _release(self, remote: dict[str, Any]) -> None:
        try:
            await self.channel.send("Runtime.releaseObject", {"objectId": remote["objectId"]})
        except self.channel.errors:
            pass  # the page navigated away: the object is gone anyway

    async def _to_json(self, remote: dict[str, Any]) -> Any:
        if "unserializableValue" in remote:
            return remote["unserializableValue"]
        if remote.get("type") == "undefined":
            return None
        if "objectId" not in remote:
            return remote.get("value")
        try:
            out = await self.channel.send("Runtime.callFunctionOn", {
                "objectId": remote["objectId"], "functionDeclaration": SERIALIZE, "returnByValue": True})
            return out["result"].get("value")
        finally:
            await self._release(remote)


# Chromium starts the script's clock a little after webhand starts its own: an answer this close
# to the deadline is the script's timeout.
_CLOCK_SLACK = 0.05


def _runaway(timeout: float) -> ActionTimeout:
    return ActionTimeout(
        f"The JavaScript did not finish within {timeout:g} s, so it was stopped (an endless loop or a long "
        "computation?). The page is usable again.",
        "Make the script finish sooner (end the loop, do less per call), or pass a larger timeout.")


def thrown_message(details: dict[str, Any], *, rejected: bool) -> str:
    """What the expression threw (or its promise was rejected with), and where in the expression.

    The position comes from the innermost stack frame in the expression itself (0-based there):
    REPL mode gives a thrown error's top-level line and column 1-based but a syntax error's
    0-based, so the top-level numbers are used only for an error without a stack.
    """
    exception = details.get("exception") or {}
    what = exception.get("description") or (
        json.dumps(exception["value"]) if "value" in exception else details.get("text", "Error"))
    frames = (details.get("stackTrace") or {}).get("callFrames") or []
    own = next((f for f in frames if not f.get("url")), None)
    if own is not None:
        where = f" (line {own['lineNumber'] + 1}, column {own['columnNumber'] + 1})"
    elif not frames and not rejected:
        where = f" (line {details.get('lineNumber', 0) + 1}, column {details.get('columnNumber', 0) + 1})"
    else:
        where = ""
    if rejected:
        return f"The promise the JavaScript returned was rejected: {what.splitlines()[0]}{where}."
    return f"The JavaScript threw: {what.splitlines()[0]}{where}."


# Makes any page value JSON-able: DOM nodes become a short tag, cycles and functions are named.
SERIALIZE = source("serialize.js")
