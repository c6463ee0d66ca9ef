"""The tab's ``keyboard`` (engine/driver.py's ``Keyboard``) on Firefox: keys on whatever has focus,
as one ``input.performActions`` of BiDi's keyboard source (the keys' actions: values.py).

It is given the tab's ``perform`` (``BidiTab.perform``), which also waits for the action's settle
watch to be in place and stops waiting when the keys open a dialog; it then releases the keys.
"""

from __future__ import annotations

from webhand.engine.bidi import values
from webhand.engine.bidi.point_input import Perform


class BidiKeyboard:
    def __init__(self, perform: Perform) -> None:
        self._perform = perform

    async def press(self, key: str, *, timeout: float) -> None:
        await self._perform([{"type": "key", "id": "keyboard", "actions": values.chord_actions(key)}],
                            f"Pressing {key}", timeout)

    async def type_text(self, text: str, *, timeout: float) -> None:
        await self._perform([{"type": "key", "id": "keyboard", "actions": values.text_actions(text)}], "Typing", timeout)
