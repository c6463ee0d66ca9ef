"""Input at viewport points on Firefox: the Tab's ``dispatch_input`` (a person's in the dashboard's
takeover, the vision tools' clicks, drags, wheel turns and held keys) as WebDriver BiDi actions.

CDP sends one event at a time, each carrying its modifiers. BiDi has input sources instead (a
pointer, a keyboard, a wheel) whose state lasts between ``input.performActions`` calls in a tab:
where the pointer is, which buttons and keys are held. So each event is one or two actions of its
source, and the state is never released after it (``input.releaseActions`` would let go of a
button held for a drag between two calls).

A mouse event's modifiers (Shift-click) are keys held on the keyboard source while it runs: BiDi
has no other way to set ``shiftKey`` on a mouse event, so the page also sees those keys go down
and up around it (Chromium's modifiers fire no key events). Keys a person holds (a keyDown of
Shift) are the keyboard's own and are left alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from webhand.engine.bidi import values
from webhand.engine.driver import InputEvent
from webhand.errors import InvalidArgument

#: Performs actions in the tab, without releasing them afterwards (``BidiTab.perform``).
Perform = Callable[[list[dict[str, Any]], str, float], Awaitable[None]]

_BUTTONS = {"left": 0, "middle": 1, "right": 2}
#: CDP's modifier bits (``InputEvent.modifiers``) and the keys that hold them.
_MODIFIER_KEYS = {1: values.NAMED_KEYS["Alt"], 2: values.NAMED_KEYS["Control"], 4: values.NAMED_KEYS["Meta"],
                  8: values.NAMED_KEYS["Shift"]}
_MOUSE = {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}}
_PAUSE = {"type": "pause"}


class PointInput:
    """One tab's input at viewport points, and what it holds down between events."""

    def __init__(self, perform: Perform) -> None:
        self._perform = perform
        self._keys_held: set[str] = set()  # WebDriver key values a keyDown event pressed
        self._modifiers_held: set[str] = set()  # keys held for mouse events' modifiers
        self._buttons_held: set[int] = set()

    def forget(self) -> None:
        """The tab's input state was released (another action ended with ``input.releaseActions``)."""
        self._keys_held.clear()
        self._modifiers_held.clear()
        self._buttons_held.clear()

    async def dispatch(self, event: InputEvent, timeout: float) -> None:
        if event.kind in ("mouseMoved", "mousePressed", "mouseReleased", "mouseWheel", "click"):
            await self._perform(self._mouse(event), "Sending input to the page", timeout)
        elif event.kind in ("keyDown", "keyUp"):
            value = _key(event.key)
            await self._perform([{"type": "key", "id": "keyboard", "actions": [{"type": event.kind, "value": value}]}],
                                "Sending input to the page", timeout)
            (self._keys_held.add if event.kind == "keyDown" else self._keys_held.discard)(value)
        elif event.kind == "text":
            if event.text:
                await self._perform([{"type": "key", "id": "keyboard", "actions": values.text_actions(event.text)}],
                                    "Typing", timeout)
        else:
            raise InvalidArgument(f"Unknown input event {event.kind!r}.",
                                  "Send click, mousePressed, mouseReleased, mouseMoved, mouseWheel, keyDown, keyUp or text.")

    def _mouse(self, event: InputEvent) -> list[dict[str, Any]]:
        """The event's actions: its modifiers pressed (or let go) first, then the pointer's (or the
        wheel's) action, then the modifiers let go unless a button stays held (a Shift-drag)."""
        wanted = {key for bit, key in _MODIFIER_KEYS.items() if event.modifiers & bit} - self._keys_held
        before = [{"type": "keyUp", "value": k} for k in sorted(self._modifiers_held - wanted)]
        before += [{"type": "keyDown", "value": k} for k in sorted(wanted - self._modifiers_held)]
        self._modifiers_held = wanted
        move = {"type": "pointerMove", "x": event.x, "y": event.y, "origin": "viewport"}
        button = _BUTTONS.get(event.button)
        source = dict(_MOUSE)
        if event.kind == "mouseWheel":
            source = {"type": "wheel", "id": "wheel"}
            main = [{"type": "scroll", "x": round(event.x), "y": round(event.y), "deltaX": round(event.delta_x),
                     "deltaY": round(event.delta_y), "origin": "viewport"}]
        elif event.kind == "mousePressed" and button is not None:
            main = [move, {"type": "pointerDown", "button": button}]
            self._buttons_held.add(button)
        elif event.kind == "mouseReleased" and button is not None:
            main = [move, {"type": "pointerUp", "button": button}]
            self._buttons_held.discard(button)
        elif event.kind == "click" and button is not None:
            # In one command: Firefox counts clicks (a double click's dblclick) only within one.
            main = [move] + [{"type": kind, "button": button} for _ in range(max(1, event.click_count))
                             for kind in ("pointerDown", "pointerUp")]
        else:
            main = [move]
        after: list[dict[str, Any]] = []
        if not self._buttons_held:
            after = [{"type": "keyUp", "value": k} for k in sorted(self._modifiers_held)]
            self._modifiers_held = set()
        # Sources advance together, one action each per tick: each waits (pauses) while the other acts.
        actions = [{**source, "actions": [_PAUSE] * len(before) + main + [_PAUSE] * len(after)}]
        if before or after:
            actions.insert(0, {"type": "key", "id": "keyboard", "actions": before + [_PAUSE] * len(main) + after})
        return actions


def _key(name: str) -> str:
    """A KeyboardEvent.key as WebDriver's key value: a character, or a named key's code point."""
    try:
        return values.key_value(name)
    except InvalidArgument:
        raise InvalidArgument(f"Firefox cannot be sent the key {name[:40]!r}: WebDriver names no such key.",
                              "Send a character, or a named key such as Enter, Tab, Escape or ArrowDown.") from None
