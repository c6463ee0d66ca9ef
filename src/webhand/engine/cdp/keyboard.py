"""Keys sent as ``Input.dispatchKeyEvent`` wants them (the keys themselves: engine/keys.py).

A key press is rawKeyDown (or keyDown with the text it types), then keyUp; a chord holds its
modifiers down around the key. Text with characters no key types goes in with ``Input.insertText``.
The functions serve an element's keys too (element.py); ``CdpKeyboard`` is the tab's ``keyboard``.
"""

from __future__ import annotations

from webhand.engine.cdp.connection import CdpConnection, guarded
from webhand.engine.keys import LAYOUT, MODIFIER_BITS, Key, parse_chord
from webhand.errors import ActionTimeout



async def press(connection: CdpConnection, session_id: str, chord: str) -> None:
    modifiers, key = parse_chord(chord)
    bits = 0
    for modifier in modifiers:
        bits |= MODIFIER_BITS[modifier]
        await _send(connection, session_id, "rawKeyDown", LAYOUT[modifier], bits)
    await key_stroke(connection, session_id, key, bits)
    for modifier in reversed(modifiers):
        bits &= ~MODIFIER_BITS[modifier]
        await _send(connection, session_id, "keyUp", LAYOUT[modifier], bits)


async def key_stroke(connection: CdpConnection, session_id: str, key: Key, bits: int = 0) -> None:
    # A key with Control, Alt or Meta held types nothing (it is a shortcut).
    text = key.text if not bits & (MODIFIER_BITS["Control"] | MODIFIER_BITS["Alt"] | MODIFIER_BITS["Meta"]) else ""
    await _send(connection, session_id, "keyDown" if text else "rawKeyDown", key, bits, text)
    await _send(connection, session_id, "keyUp", key, bits)


async def type_text(connection: CdpConnection, session_id: str, text: str, delay: float = 0.0) -> None:
    """Type ``text`` key by key; a character no US key types is inserted as text."""
    import asyncio

    for index, char in enumerate(text):
        key = LAYOUT.get(char)
        if key is not None and len(char) == 1:
            await key_stroke(connection, session_id, key)
        else:
            await connection.send.Input.insertText(params={"text": char}, session_id=session_id)
        if delay and index < len(text) - 1:
            await asyncio.sleep(delay)  # the model asked for this pause between keys


async def _send(connection: CdpConnection, session_id: str, kind: str, key: Key, bits: int, text: str = "") -> None:
    params: dict[str, object] = {"type": kind, "modifiers": bits, "key": key.key, "code": key.code,
                                 "windowsVirtualKeyCode": key.key_code, "location": key.location}
    if text:
        params["text"] = params["unmodifiedText"] = text
    await connection.send.Input.dispatchKeyEvent(params=params, session_id=session_id)  # type: ignore[arg-type]


class CdpKeyboard:
    """The tab's keyboard (engine/driver.py's ``Keyboard``): keys on whatever has focus, sent on the
    page's CDP session with the functions above."""

    def __init__(self, connection: CdpConnection, session_id: str) -> None:
        self._connection = connection
        self._session_id = session_id

    async def press(self, key: str, *, timeout: float) -> None:
        parse_chord(key)  # an unknown key is refused before anything is sent
        try:
            async with guarded(f"Pressing {key}", timeout):
                await press(self._connection, self._session_id, key)
        except ActionTimeout:
            raise ActionTimeout(f"Pressing {key} did not finish within {timeout:g} s.",
                                "The page may be busy: call browser_snapshot.") from None

    async def type_text(self, text: str, *, timeout: float) -> None:
        try:
            async with guarded("Typing", timeout):
                await type_text(self._connection, self._session_id, text)
        except ActionTimeout:
            raise ActionTimeout(f"Typing did not finish within {timeout:g} s.",
                                "The page may be busy: call browser_snapshot to see what was typed.") from None
