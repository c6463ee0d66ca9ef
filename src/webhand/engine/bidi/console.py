"""Console entries on Firefox: a ``log.entryAdded`` event as a ``ConsoleEntry`` that reads as the
Chromium drivers' do.

BiDi hands each console argument over as a ``script.RemoteValue`` (its own JSON, one level deep
here); Chromium as a ``RemoteObject`` with a ``preview``. Each argument is reshaped into the
RemoteObject its Chromium counterpart would be, and the text is then written by
engine/console_events.py, the same rules as DevTools (``{a: 1, b: "x"}``, ``Array(3) [1, 2, 3]``,
``Map(1) {"k" => 2}``, format specifiers, bounded), so a log reads the same on every driver.
"""

from __future__ import annotations

import json
from typing import Any

from webhand.engine.console_events import console_text, stamp_time
from webhand.engine.driver import ConsoleEntry

#: Chromium's preview of an object stops after this many properties (an array's after 100 items).
_OBJECT_PROPERTIES = 5
_ARRAY_ITEMS = 100
_LEVELS = {"warn": "warning", "assert": "error", "trace": "debug", "dir": "log"}
_PRIMITIVES = {"string", "number", "boolean", "bigint", "undefined", "null"}
_NUMBERS = {"NaN", "-0", "Infinity", "-Infinity"}


def script_url(params: dict[str, Any]) -> str:
    """The URL of the script a ``log.entryAdded`` was made in (its top stack frame's), or ""."""
    frames = (params.get("stackTrace") or {}).get("callFrames") or []
    return str(frames[0].get("url") or "") if frames else ""


def entry(params: dict[str, Any], tab: int, source: str = "") -> ConsoleEntry:
    """One ``log.entryAdded`` event as the entry the Chromium drivers would make of it; ``source``
    where it came from ("worker", "frame", "" for the page's own)."""
    frames = (params.get("stackTrace") or {}).get("callFrames") or []
    location = f"{frames[0].get('url', '')}:{frames[0].get('lineNumber', 0) + 1}" if frames and frames[0].get("url") else ""
    if params.get("type") == "javascript":  # an uncaught error: its message, as Playwright gives a page error
        text = params.get("text") or "Error"
        first, _, rest = text.partition("\n")
        text = (first.split(": ", 1)[1] if ": " in first else first) + (("\n" + rest) if rest else "")
        return ConsoleEntry("pageerror", text, "", tab, source, stamp_time(params.get("timestamp")))
    method = params.get("method", params.get("level", "log"))
    args = params.get("args")
    text = console_text({"args": [as_remote_object(arg) for arg in args]}) if args else params.get("text") or ""
    return ConsoleEntry(_LEVELS.get(method, method), text, location, tab, source, stamp_time(params.get("timestamp")))


def as_remote_object(value: dict[str, Any]) -> dict[str, Any]:
    """A BiDi RemoteValue as the CDP RemoteObject (with its preview) console_events reads."""
    kind = value.get("type", "undefined")
    if kind in ("undefined",):
        return {"type": "undefined"}
    if kind == "null":
        return {"type": "object", "subtype": "null", "value": None}
    if kind == "number" and value.get("value") in _NUMBERS:
        return {"type": "number", "unserializableValue": value["value"]}
    if kind == "bigint":
        return {"type": "bigint", "unserializableValue": f"{value.get('value', '0')}n"}
    if kind in _PRIMITIVES:
        return {"type": kind, "value": value.get("value")}
    description = _description(value)
    if kind == "array" or kind in ("map", "set"):
        items = value.get("value")
        subtype = "array" if kind == "array" else kind
        preview: dict[str, Any] = {"type": "object", "subtype": subtype, "description": description,
                                   "overflow": False, "properties": [], "entries": []}
        if items is not None and kind == "array":
            preview["properties"] = [_property(str(i), item) for i, item in enumerate(items[:_ARRAY_ITEMS])]
            preview["overflow"] = len(items) > _ARRAY_ITEMS
        elif items is not None and kind == "map":
            preview["entries"] = [{"key": _nested(k if isinstance(k, dict) else {"type": "string", "value": k}),
                                   "value": _nested(v)} for k, v in items[:_OBJECT_PROPERTIES]]
            preview["overflow"] = len(items) > _OBJECT_PROPERTIES
        elif items is not None:
            preview["entries"] = [{"value": _nested(item)} for item in items[:_OBJECT_PROPERTIES]]
            preview["overflow"] = len(items) > _OBJECT_PROPERTIES
        return {"type": "object", "subtype": subtype, "description": description, "preview": preview}
    if kind == "object":
        pairs = value.get("value")
        preview = {"type": "object", "description": "Object", "overflow": False, "properties": []}
        if pairs is not None:
            preview["properties"] = [_property(k if isinstance(k, str) else str(k.get("value", "")), v)
                                     for k, v in pairs[:_OBJECT_PROPERTIES]]
            preview["overflow"] = len(pairs) > _OBJECT_PROPERTIES
        return {"type": "object", "description": "Object", "preview": preview}
    subtype = {"node": "node", "error": "error", "date": "date", "regexp": "regexp", "promise": "promise",
               "proxy": "proxy"}.get(kind)
    return {"type": "function" if kind == "function" else "object", "subtype": subtype, "description": description}


def _description(value: dict[str, Any]) -> str:
    """What DevTools names a value by: ``Array(2)``, ``Map(1)``, a date's ISO time, a regexp …"""
    kind, inner = value.get("type"), value.get("value")
    if kind in ("array", "set", "map"):
        name = {"array": "Array", "set": "Set", "map": "Map"}[kind]
        return f"{name}({len(inner)})" if isinstance(inner, list) else name
    if kind == "date":
        return str(inner or "Date")
    if kind == "regexp" and isinstance(inner, dict):
        return f"/{inner.get('pattern', '')}/{inner.get('flags', '')}"
    if kind == "node" and isinstance(inner, dict):
        return str(inner.get("localName") or inner.get("nodeName", "node")).lower()
    if kind == "function":
        return "ƒ"
    return {"error": "Error", "window": "Window", "promise": "Promise", "proxy": "Proxy"}.get(str(kind), "Object")


def _property(name: str, value: dict[str, Any]) -> dict[str, Any]:
    """One property of a preview (CDP's PropertyPreview: a string ``value`` and its type)."""
    kind = value.get("type", "undefined")
    if kind in ("string", "boolean"):
        inner = value.get("value")
        return {"name": name, "type": kind, "value": inner if kind == "string" else json.dumps(inner)}
    if kind in ("number", "bigint"):
        return {"name": name, "type": kind, "value": str(value.get("value")) + ("n" if kind == "bigint" else "")}
    if kind in ("undefined", "null"):
        return {"name": name, "type": "undefined" if kind == "undefined" else "object",
                "subtype": "null" if kind == "null" else None, "value": kind}
    if kind == "function":
        return {"name": name, "type": "function", "value": ""}
    subtype = {"array": "array", "node": "node", "error": "error", "date": "date", "regexp": "regexp",
               "map": "map", "set": "set"}.get(kind)
    return {"name": name, "type": "object", "subtype": subtype, "value": _description(value)}


def _nested(value: dict[str, Any]) -> dict[str, Any]:
    """A map's key or value one level down, as CDP's nested ObjectPreview (type and description)."""
    kind = value.get("type", "undefined")
    if kind == "string":
        return {"type": "string", "description": value.get("value", "")}
    if kind in _PRIMITIVES:
        inner = value.get("value")
        text = kind if inner is None else (json.dumps(inner) if isinstance(inner, bool) else str(inner))
        return {"type": kind, "description": text}
    prop = _property("", value)
    return {"type": prop["type"], "subtype": prop.get("subtype"), "description": prop["value"]}
