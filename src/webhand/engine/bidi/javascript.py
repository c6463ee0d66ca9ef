"""The model's JavaScript (browser_eval) on Firefox, run as a console would run it, over BiDi.

BiDi has no REPL mode: the expression is evaluated as a script (``script.evaluate``), and one
that uses ``await`` at its top level (a SyntaxError as a script) is evaluated again inside an
async function, as an expression if it is one, else as statements. A promise it returns is
awaited within the same timeout (``script.callFunction`` with ``awaitPromise``); the value comes
back JSON-able through the drivers' shared ``SERIALIZE``. Errors read as the CDP driver's
(console_javascript.thrown_message): what was thrown or rejected, and where in the expression.

BiDi cannot stop a script that never ends (Chromium's ``Runtime.terminateExecution`` has no
counterpart, and a reload does not interrupt it): the page stops answering, and the session's
recovery (session/recovery.py) ends the tab and says so.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

from webhand.engine.bidi import values
from webhand.engine.bidi.connection import PROTOCOL_ERRORS, BidiConnection, translate
from webhand.engine.console_javascript import SERIALIZE, thrown_message
from webhand.errors import ActionTimeout, EvaluationFailed

_TO_JSON = "function () { return JSON.stringify((" + SERIALIZE + ").call(this)); }"


class EvaluatingTab(Protocol):
    connection: BidiConnection
    context_id: str


class BidiConsole:
    """A Firefox tab's ``console`` component (``driver.JavaScriptConsole``)."""

    def __init__(self, tab: EvaluatingTab) -> None:
        self._tab = tab

    async def evaluate(self, expression: str, *, await_promise: bool, timeout: float) -> Any:
        return await evaluate(self._tab, expression, await_promise=await_promise, timeout=timeout)


async def evaluate(tab: EvaluatingTab, expression: str, *, await_promise: bool, timeout: float) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    script = expression
    for attempt in (expression, f"(async () => ({expression}\n))()", f"(async () => {{{expression}\n}})()"):
        script = attempt
        result = await _send(tab, "script.evaluate", {"expression": attempt, "awaitPromise": False}, deadline, timeout)
        details = result.get("exceptionDetails") or {}
        if result.get("type") != "exception" or not _top_level_await(details, expression):
            break
    wrapped = script is not expression
    awaited = False
    if result.get("type") != "exception" and await_promise and (result.get("result") or {}).get("type") == "promise":
        awaited, promise = True, result["result"]
        try:
            result = await _send(tab, "script.callFunction", {"functionDeclaration": "function () { return this; }",
                                                              "this": {"handle": promise["handle"]},
                                                              "awaitPromise": True}, deadline, timeout, settling=True)
        finally:
            await _release(tab, promise)
    if result.get("type") == "exception":
        details = result.get("exceptionDetails") or {}
        what = (details.get("text") or "Error").splitlines()[0]
        if wrapped:  # what the statements threw; the async wrapper's positions are not the expression's
            message = f"The JavaScript threw: {what}."
        else:
            message = thrown_message({"exception": {"description": what}, "lineNumber": details.get("lineNumber", 0),
                                      "columnNumber": details.get("columnNumber", 0)}, rejected=awaited)
        raise EvaluationFailed(message, "Fix the expression and call browser_eval again.")
    remote = result.get("result") or {}
    if "handle" not in remote:
        return _primitive(remote)
    try:
        out = await _send(tab, "script.callFunction", {"functionDeclaration": _TO_JSON, "this": {"handle": remote["handle"]},
                                                       "awaitPromise": False}, deadline, timeout)
    finally:
        await _release(tab, remote)
    text = values.from_remote(out.get("result") or {})
    return json.loads(text) if isinstance(text, str) else None


def _top_level_await(details: dict[str, Any], expression: str) -> bool:
    return "await" in expression and "SyntaxError" in (details.get("text") or "")


def _primitive(remote: dict[str, Any]) -> Any:
    value = values.from_remote(remote)
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(remote.get("value"))
    return value


async def _send(tab: EvaluatingTab, method: str, params: dict[str, Any], deadline: float, timeout: float, *,
                settling: bool = False) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    params = {**params, "target": {"context": tab.context_id}, "resultOwnership": "root", "userActivation": True,
              "serializationOptions": {"maxObjectDepth": 0, "maxDomDepth": 0}}
    try:
        return await asyncio.wait_for(tab.connection.send(method, params), max(0.0, deadline - loop.time()))
    except TimeoutError:
        if settling:
            raise ActionTimeout(f"The promise the JavaScript returned did not settle within {timeout:g} s.",
                                "Make sure it resolves or rejects, or pass a larger timeout.") from None
        raise ActionTimeout(
            f"The JavaScript did not finish within {timeout:g} s (an endless loop or a long computation?).",
            "Make the script finish sooner (end the loop, do less per call), or pass a larger timeout.") from None
    except PROTOCOL_ERRORS as error:
        raise translate(error, "Evaluating JavaScript", timeout) from None


async def _release(tab: EvaluatingTab, remote: dict[str, Any]) -> None:
    if "handle" not in remote:
        return
    try:
        await asyncio.wait_for(tab.connection.send("script.disown", {"handles": [remote["handle"]],
                                                                      "target": {"context": tab.context_id}}), 5)
    except (TimeoutError, *PROTOCOL_ERRORS):
        pass  # the page navigated away: the object is gone anyway
