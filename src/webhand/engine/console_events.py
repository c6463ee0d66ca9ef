"""Console entries from CDP's own events (``Runtime.consoleAPICalled``, ``Runtime.exceptionThrown``),
the same for every driver: the raw-CDP driver hears every page, frame and worker this way, and the
Playwright driver its shared workers (which Playwright does not report)."""

from __future__ import annotations

import json
from typing import Any

from webhand.engine.driver import ConsoleEntry

_CONSOLE_TYPES = {"warning": "warning", "assert": "assert", "startGroup": "startGroup",
                  "startGroupCollapsed": "startGroupCollapsed", "endGroup": "endGroup"}


def console_api_entry(params: dict[str, Any], tab: int, source: str = "") -> ConsoleEntry:
    """A ``Runtime.consoleAPICalled`` event as a console entry."""
    text = " ".join(_arg_text(arg) for arg in params.get("args", []))
    kind = params.get("type", "log")
    return ConsoleEntry(_CONSOLE_TYPES.get(kind, kind), text, _where(params.get("stackTrace")), tab, source)


def exception_entry(params: dict[str, Any], tab: int, source: str = "") -> ConsoleEntry:
    """A ``Runtime.exceptionThrown`` event as a page error entry."""
    details = params.get("exceptionDetails") or {}
    exception = details.get("exception") or {}
    text = exception.get("description") or (json.dumps(exception["value"]) if "value" in exception else "") \
        or details.get("text", "Error")
    if exception.get("className") and exception.get("description"):
        # Playwright's page error is the message alone when the error is an Error ("Error: boom" → "boom").
        first, _, rest = text.partition("\n")
        text = first.split(": ", 1)[1] if ": " in first else first
        text += ("\n" + rest) if rest else ""
    return ConsoleEntry("pageerror", text, "", tab, source)


def _where(stack: dict[str, Any] | None) -> str:
    frames = (stack or {}).get("callFrames") or []
    return f"{frames[0]['url']}:{frames[0]['lineNumber'] + 1}" if frames and frames[0].get("url") else ""


def _arg_text(arg: dict[str, Any]) -> str:
    """One console argument as text, as the page's own console shows a primitive."""
    if "value" in arg:
        value = arg["value"]
        if isinstance(value, bool):
            return "true" if value else "false"
        if value is None:
            return "null"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return value if isinstance(value, str) else json.dumps(value)
    if "unserializableValue" in arg:
        return str(arg["unserializableValue"])
    if arg.get("type") == "undefined":
        return "undefined"
    return str(arg.get("description") or arg.get("className") or arg.get("type", ""))
