"""Keys sent as ``Input.dispatchKeyEvent`` wants them (the keys themselves: engine/keys.py).

A key press is rawKeyDown (or keyDown with the text it types), then keyUp; a chord holds its
modifiers down around the key. Text with characters no key types goes in with ``Input.insertText``.
"""

from __future__ import annotations

from webhand.engine.cdp.connection import CdpConnection
from webhand.engine.keys import LAYOUT, MODIFIER_BITS, Key, parse_chord



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
