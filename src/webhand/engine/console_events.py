"""Console entries from CDP's own events (``Runtime.consoleAPICalled``, ``Runtime.exceptionThrown``),
the same for every driver: the raw-CDP driver hears every page, frame and worker this way, and the
Playwright driver its shared workers (which Playwright does not report) and, to show objects as
DevTools does, its pages' messages too (paired with Playwright's by their timestamp).

An argument reads as DevTools prints it: primitives as themselves, an object or array as a short
preview from the RemoteObject's ``preview`` (which Chromium attaches to every console argument):
``{a: 1, b: "x"}``, ``Array(3) [1, 2, 3]``, ``Map(1) {"k" => 2}``. The preview is one level deep
(a nested object reads ``{…}``, a nested array ``Array(2)``), Chromium cuts it at a few
properties (``…``), and each argument is cut at ``ARG_LIMIT`` characters: page text, bounded.
Each entry carries the time the page logged it (CDP's ``timestamp``, wall-clock milliseconds).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from webhand.engine.driver import ConsoleEntry

_CONSOLE_TYPES = {"warning": "warning", "assert": "assert", "startGroup": "startGroup",
                  "startGroupCollapsed": "startGroupCollapsed", "endGroup": "endGroup"}


#: Longest rendering of one console argument.
ARG_LIMIT = 1_000


def console_api_entry(params: dict[str, Any], tab: int, source: str = "") -> ConsoleEntry:
    """A ``Runtime.consoleAPICalled`` event as a console entry."""
    kind = params.get("type", "log")
    return ConsoleEntry(_CONSOLE_TYPES.get(kind, kind), console_text(params), _where(params.get("stackTrace")), tab,
                        source, stamp_time(params.get("timestamp")))


def console_text(params: dict[str, Any]) -> str:
    """A console call's arguments as the page's DevTools console prints them, space-separated,
    with a first string's format specifiers (``%s %d %i %f %o %O %c``) filled from the others."""
    args = list(params.get("args", []))
    if args and args[0].get("type") == "string" and "%" in str(args[0].get("value", "")):
        first, rest = _formatted(str(args[0]["value"]), args[1:])
        return " ".join([first, *(_arg_text(arg) for arg in rest)])
    return " ".join(_arg_text(arg) for arg in args)


_SPECIFIER = re.compile(r"%[sdifoOc%]")


def _formatted(template: str, args: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    left = list(args)

    def fill(match: re.Match[str]) -> str:
        spec = match.group()
        if spec == "%%":
            return "%"
        if not left:
            return spec
        arg = left.pop(0)
        if spec == "%c":
            return ""  # CSS for the text after it: nothing to read
        text = _arg_text(arg)
        if spec in ("%d", "%i") and "value" in arg and isinstance(arg["value"], (int, float)):
            return str(int(arg["value"]))
        return text
    return _SPECIFIER.sub(fill, template), left


def stamp_time(stamp: Any) -> float:
    """CDP's timestamp (milliseconds since the epoch) in seconds; now when it gave none."""
    return stamp / 1000 if isinstance(stamp, (int, float)) and stamp > 0 else time.time()


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
    return ConsoleEntry("pageerror", text, "", tab, source, stamp_time(params.get("timestamp")))


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
    preview = arg.get("preview")
    if isinstance(preview, dict) and arg.get("type") == "object" and arg.get("subtype") not in _AS_DESCRIBED:
        return _cut(_preview_text(preview, arg.get("description", "")))
    return _cut(str(arg.get("description") or arg.get("className") or arg.get("type", "")))


# Objects whose description is what DevTools prints (a node's selector, an error's stack, a date).
_AS_DESCRIBED = {"node", "error", "date", "regexp", "promise", "proxy", "null"}


def _preview_text(preview: dict[str, Any], description: str) -> str:
    """An ObjectPreview as DevTools prints it: ``{a: 1}``, ``Array(2) [1, 2]``, ``Map(1) {"k" => 2}``."""
    more = ", …" if preview.get("overflow") else ""
    subtype = preview.get("subtype")
    if subtype in ("array", "typedarray"):
        items = [_property_text(p) for p in preview.get("properties", []) if str(p.get("name", "")).isdigit()]
        return f"{description or 'Array'} [{', '.join(items)}{more}]"
    if subtype in ("map", "set", "weakmap", "weakset"):
        entries = []
        for entry in preview.get("entries", []):
            value = _nested_text(entry.get("value") or {})
            key = entry.get("key")
            entries.append(f"{_nested_text(key)} => {value}" if key else value)
        return f"{description} {{{', '.join(entries)}{more}}}"
    props = [f"{_key(p.get('name', ''))}: {_property_text(p)}" for p in preview.get("properties", [])]
    label = "" if description in ("", "Object") else description + " "
    return f"{label}{{{', '.join(props)}{more}}}"


def _property_text(prop: dict[str, Any]) -> str:
    """One property of a preview (PropertyPreview: a string ``value`` and its type)."""
    kind, value = prop.get("type"), prop.get("value", "")
    if "valuePreview" in prop:
        return _nested_text(prop["valuePreview"])
    if kind == "string":
        return json.dumps(value, ensure_ascii=False)
    if kind == "object" and prop.get("subtype") not in ("array", "typedarray", "null", *_AS_DESCRIBED):
        return "{…}"
    if kind == "function":
        return "ƒ"
    return str(value)


def _nested_text(preview: dict[str, Any]) -> str:
    """A value one level down: a string quoted, an object cut to ``{…}``, an array to ``Array(n)``."""
    if preview.get("type") == "string":
        return json.dumps(preview.get("description", ""), ensure_ascii=False)
    if preview.get("type") == "object" and preview.get("subtype") not in ("array", "typedarray", "null", *_AS_DESCRIBED):
        return "{…}"
    return str(preview.get("description", ""))


def _key(name: str) -> str:
    return name if name.isidentifier() else json.dumps(name, ensure_ascii=False)


def _cut(text: str) -> str:
    return text if len(text) <= ARG_LIMIT else text[:ARG_LIMIT - 1] + "…"
