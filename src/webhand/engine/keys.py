"""Keys on a US keyboard, named as ``KeyboardEvent.key`` and ``.code`` name them: what a key
types, its Windows key code, and chords like Control+A. Shared by the drivers (cdp/keyboard.py
sends them over CDP) and the coordinate tools (tools/vision.py), which press keys through
``tab.live_view.dispatch_input`` on any driver.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from webhand.errors import InvalidArgument

#: The modifier bits of CDP's ``Input.dispatchKeyEvent`` (and of ``driver.InputEvent.modifiers``).
MODIFIER_BITS = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}
#: Other names the model may give a key, and the name they stand for.
ALIASES = {"Ctrl": "Control", "Cmd": "Meta", "Command": "Meta", "Option": "Alt", "ControlOrMeta": "Control",
           "Esc": "Escape", "Return": "Enter", "Del": "Delete", "Up": "ArrowUp", "Down": "ArrowDown",
           "Left": "ArrowLeft", "Right": "ArrowRight", "Spacebar": "Space", " ": "Space"}


@dataclass(frozen=True)
class Key:
    key: str
    code: str
    key_code: int
    text: str = ""
    shift: bool = False  # typed with Shift on a US keyboard (not sent as a modifier: Playwright does not either)
    location: int = 0


def _layout() -> dict[str, Key]:
    keys: dict[str, Key] = {}
    for letter in string.ascii_lowercase:
        keys[letter] = Key(letter, f"Key{letter.upper()}", ord(letter.upper()), letter)
        keys[letter.upper()] = Key(letter.upper(), f"Key{letter.upper()}", ord(letter.upper()), letter.upper(), True)
    shifted_digits = ")!@#$%^&*("
    for digit in string.digits:
        keys[digit] = Key(digit, f"Digit{digit}", ord(digit), digit)
        keys[shifted_digits[int(digit)]] = Key(shifted_digits[int(digit)], f"Digit{digit}", ord(digit),
                                               shifted_digits[int(digit)], True)
    for plain, shifted, code, key_code in (("-", "_", "Minus", 189), ("=", "+", "Equal", 187),
                                           ("[", "{", "BracketLeft", 219), ("]", "}", "BracketRight", 221),
                                           ("\\", "|", "Backslash", 220), (";", ":", "Semicolon", 186),
                                           ("'", '"', "Quote", 222), (",", "<", "Comma", 188),
                                           (".", ">", "Period", 190), ("/", "?", "Slash", 191),
                                           ("`", "~", "Backquote", 192)):
        keys[plain] = Key(plain, code, key_code, plain)
        keys[shifted] = Key(shifted, code, key_code, shifted, True)
    named = {"Enter": ("Enter", 13, "\r"), "Tab": ("Tab", 9, ""), "Backspace": ("Backspace", 8, ""),
             "Delete": ("Delete", 46, ""), "Escape": ("Escape", 27, ""), "Space": ("Space", 32, " "),
             "ArrowLeft": ("ArrowLeft", 37, ""), "ArrowUp": ("ArrowUp", 38, ""), "ArrowRight": ("ArrowRight", 39, ""),
             "ArrowDown": ("ArrowDown", 40, ""), "Home": ("Home", 36, ""), "End": ("End", 35, ""),
             "PageUp": ("PageUp", 33, ""), "PageDown": ("PageDown", 34, ""), "Insert": ("Insert", 45, ""),
             "CapsLock": ("CapsLock", 20, ""), "ContextMenu": ("ContextMenu", 93, "")}
    for name, (code, key_code, text) in named.items():
        keys[name] = Key(" " if name == "Space" else name, code, key_code, text)
    for number in range(1, 13):
        keys[f"F{number}"] = Key(f"F{number}", f"F{number}", 111 + number)
    for name, key_code in (("Shift", 16), ("Control", 17), ("Alt", 18), ("Meta", 91)):
        keys[name] = Key(name, f"{name}Left", key_code, location=1)
    keys["\n"] = keys["\r"] = keys["Enter"]
    keys[" "] = keys["Space"]
    return keys


LAYOUT = _layout()


def parse_chord(chord: str) -> tuple[list[str], Key]:
    """'Control+Shift+A' → (['Control', 'Shift'], Key A); '+' alone and 'Control++' work too."""
    parts = chord.split("+")
    if chord.endswith("+"):  # the last key is '+' itself
        parts = [p for p in parts if p] + ["+"]
    parts = [ALIASES.get(p, p) for p in parts if p != ""] or [chord]
    *modifiers, name = parts
    key = LAYOUT.get(name)
    if key is None or any(m not in MODIFIER_BITS for m in modifiers):
        raise InvalidArgument(f"{chord!r} is not a key name.",
                              "Use names like Enter, Tab, Escape, ArrowDown, a, or chords like Control+A.")
    return modifiers, key
