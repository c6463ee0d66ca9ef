"""Python values to WebDriver BiDi's ``script.LocalValue`` and back from ``script.RemoteValue``,
and key names to the WebDriver key values ``input.performActions`` takes. Both are tables of the
protocol's own definitions, not a class per type."""

from __future__ import annotations

import math
from typing import Any

from webhand.errors import InvalidArgument


def to_local(value: Any) -> dict[str, Any]:
    """A JSON-like Python value as a BiDi LocalValue (an argument of ``script.callFunction``)."""
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return {"type": "number", "value": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
        return {"type": "number", "value": value}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, (list, tuple)):
        return {"type": "array", "value": [to_local(item) for item in value]}
    if isinstance(value, dict):
        if "sharedId" in value:  # a node this driver holds: passed by reference
            return {"sharedId": value["sharedId"]}
        return {"type": "object", "value": [[str(key), to_local(item)] for key, item in value.items()]}
    raise TypeError(f"cannot pass {type(value).__name__} to the page")


_SPECIAL_NUMBERS = {"NaN": math.nan, "-0": -0.0, "Infinity": math.inf, "-Infinity": -math.inf}


def from_remote(value: dict[str, Any]) -> Any:
    """A BiDi RemoteValue as Python: primitives, lists and dicts as JSON would give them; a node
    stays the RemoteValue itself (its ``sharedId`` names it in later calls)."""
    kind = value.get("type")
    if kind in ("undefined", "null"):
        return None
    if kind == "number":
        number = value.get("value")
        return _SPECIAL_NUMBERS.get(number, number) if isinstance(number, str) else number
    if kind in ("string", "boolean"):
        return value.get("value")
    if kind == "bigint":
        return int(value.get("value", "0"))
    if kind in ("array", "set", "nodelist", "htmlcollection"):
        return [from_remote(item) for item in value.get("value") or []]
    if kind in ("object", "map"):
        out: dict[str, Any] = {}
        for key, item in value.get("value") or []:
            out[key if isinstance(key, str) else str(from_remote(key))] = from_remote(item)
        return out
    if kind == "date":
        return value.get("value")
    if kind == "node":
        return value
    return value  # functions, promises, windows …: what the protocol said


#: WebDriver's key values for named keys (the WebDriver spec's table of normalized keys).
NAMED_KEYS = {
    "Cancel": "\ue001", "Help": "\ue002", "Backspace": "\ue003", "Tab": "\ue004", "Clear": "\ue005",
    "Enter": "\ue007", "Shift": "\ue008", "Control": "\ue009", "Alt": "\ue00a", "Pause": "\ue00b",
    "Escape": "\ue00c", "Space": " ", "PageUp": "\ue00e", "PageDown": "\ue00f", "End": "\ue010", "Home": "\ue011",
    "ArrowLeft": "\ue012", "ArrowUp": "\ue013", "ArrowRight": "\ue014", "ArrowDown": "\ue015", "Insert": "\ue016",
    "Delete": "\ue017", "Meta": "\ue03d",
    **{f"F{n}": chr(0xE031 + n - 1) for n in range(1, 13)},
}
_ALIASES = {"Ctrl": "Control", "Cmd": "Meta", "Command": "Meta", "Option": "Alt", "ControlOrMeta": "Control",
            "Esc": "Escape", "Return": "Enter", "Del": "Delete", "Up": "ArrowUp", "Down": "ArrowDown",
            "Left": "ArrowLeft", "Right": "ArrowRight", "Spacebar": "Space"}


def key_value(name: str) -> str:
    """One key's WebDriver value: a named key, or a single character."""
    name = _ALIASES.get(name, name)
    if name in NAMED_KEYS:
        return NAMED_KEYS[name]
    if len(name) == 1:
        return name
    raise InvalidArgument(f"{name!r} is not a key name.",
                          "Use names like Enter, Tab, Escape, ArrowDown, a, or chords like Control+A.")


def chord_actions(chord: str) -> list[dict[str, Any]]:
    """``Control+A`` as key actions: the modifiers down, the key down and up, the modifiers up."""
    parts = ["+"] if chord == "+" else chord.split("+")
    if chord.endswith("++"):
        parts = chord[:-2].split("+") + ["+"]
    values = [key_value(part) for part in parts if part]
    downs = [{"type": "keyDown", "value": v} for v in values]
    ups = [{"type": "keyUp", "value": v} for v in reversed(values)]
    return downs + ups


def text_actions(text: str) -> list[dict[str, Any]]:
    """Each character typed as a key press."""
    actions: list[dict[str, Any]] = []
    for char in text:
        value = NAMED_KEYS["Enter"] if char == "\n" else char
        actions += [{"type": "keyDown", "value": value}, {"type": "keyUp", "value": value}]
    return actions
