"""Break hints: characters that say where a line may break or how letters join, never text.

``<wbr>``, zero-width spaces (U+200B), zero-width non-joiners and joiners (U+200C, U+200D), word
joiners (U+2060), soft hyphens (U+00AD) and byte-order marks (U+FEFF) show nothing to a reader,
but a model that copies "/pet\u200b/findByStatus" into a URL or a search gets it wrong. They are
dropped from what a model reads: here for the text Python reads from a page (readable text,
web_fetch, find queries), and in the page through ``JS_BREAK_HINTS``, the same rule written for
JavaScript (the page agent's names, values and text lines; text a wait looks for). A zero-width
joiner between two emoji is kept: it makes them one picture.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_HINTS = "\u00ad\u200b\u200c\u2060\ufeff"
_JOINER = 0x200D
_EMOJI = ((0x1F000, 0x1FAFF), (0x2600, 0x27BF))  # pictographs and dingbats a joiner can join
_VARIATION = 0xFE0F  # "as an emoji", between a pictograph and the joiner (❤️‍🔥)


def _pattern(char: Callable[[int], str]) -> str:
    """The rule, with each code point written by ``char`` (Python's or JavaScript's way)."""
    emoji = "".join(f"{char(low)}-{char(high)}" for low, high in _EMOJI)
    hints = "".join(char(ord(c)) for c in _HINTS)
    joiner = char(_JOINER)
    return f"[{hints}]|{joiner}(?![{emoji}])|(?<![{emoji}{char(_VARIATION)}]){joiner}"


_BREAK_HINTS = re.compile(_pattern(chr))
#: The same rule as a JavaScript regular expression literal (global, Unicode).
JS_BREAK_HINTS = "/" + _pattern(lambda code: f"\\u{{{code:X}}}") + "/gu"
#: Any character the rule may drop: a quick test first, as most text has none (the rule's
#: look-behind costs a third more on every text a snapshot reads).
JS_ANY_BREAK_HINT = "/[" + "".join(f"\\u{{{ord(c):X}}}" for c in _HINTS + chr(_JOINER)) + "]/u"


def without_break_hints(text: str) -> str:
    """``text`` with its break hints removed (no space in their place)."""
    return _BREAK_HINTS.sub("", text)
