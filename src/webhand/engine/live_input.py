"""A person's input from the dashboard as the CDP command that replays it (both drivers send it)."""

from __future__ import annotations

from typing import Any

from webhand.engine.driver import InputEvent
from webhand.errors import InvalidArgument

_MOUSE_KINDS = {"mousePressed", "mouseReleased", "mouseMoved", "mouseWheel"}
_KEY_KINDS = {"keyDown", "keyUp"}


def input_command(event: InputEvent) -> tuple[str, dict[str, Any]]:
    """The CDP method and parameters that send ``event`` to the page."""
    if event.kind in _MOUSE_KINDS:
        return "Input.dispatchMouseEvent", {
            "type": event.kind, "x": event.x, "y": event.y, "button": event.button,
            "clickCount": event.click_count, "modifiers": event.modifiers,
            "deltaX": event.delta_x, "deltaY": event.delta_y}
    if event.kind in _KEY_KINDS:
        # A key that types (a letter) carries its text on keyDown; CDP then fires keypress and input.
        return "Input.dispatchKeyEvent", {
            "type": "keyDown" if event.kind == "keyDown" and event.text else
                    ("rawKeyDown" if event.kind == "keyDown" else "keyUp"),
            "key": event.key, "code": event.code, "text": event.text if event.kind == "keyDown" else "",
            "modifiers": event.modifiers, "windowsVirtualKeyCode": _virtual_key(event.key)}
    if event.kind == "text":
        return "Input.insertText", {"text": event.text}
    raise InvalidArgument(f"Unknown input event {event.kind!r}.",
                          "Send mousePressed, mouseReleased, mouseMoved, mouseWheel, keyDown, keyUp or text.")


#: Windows virtual key codes of the named keys a person presses most (Chromium needs them to act on
#: Enter, Backspace, arrows); a printable character's code is its upper-case letter or digit.
_NAMED_KEYS = {"Backspace": 8, "Tab": 9, "Enter": 13, "Shift": 16, "Control": 17, "Alt": 18, "Escape": 27,
               " ": 32, "PageUp": 33, "PageDown": 34, "End": 35, "Home": 36, "ArrowLeft": 37, "ArrowUp": 38,
               "ArrowRight": 39, "ArrowDown": 40, "Delete": 46, "Meta": 91}


def _virtual_key(key: str) -> int:
    if key in _NAMED_KEYS:
        return _NAMED_KEYS[key]
    if len(key) == 1 and key.isalnum():
        return ord(key.upper())
    return 0
