"""Break hints: characters that say where a line may break or how letters join, never text.

``<wbr>``, zero-width spaces (U+200B), zero-width non-joiners and joiners (U+200C, U+200D), word
joiners (U+2060), soft hyphens (U+00AD) and byte-order marks (U+FEFF) show nothing to a reader,
but a model that copies "/pet\u200b/findByStatus" into a URL or a search gets it wrong. The page
agent drops them from names, values and text lines (``BREAK_HINTS`` in roles.js, the same rule);
this is the rule for the text Python reads from a page (readable text, web_fetch, find queries).
A zero-width joiner between two emoji is kept: it makes them one picture.
"""

from __future__ import annotations

import re

_EMOJI = "\U0001F000-\U0001FAFF\u2600-\u27BF"
_BREAK_HINTS = re.compile(f"[\u00AD\u200B\u200C\u2060\uFEFF]|\u200D(?![{_EMOJI}])|(?<![{_EMOJI}\uFE0F])\u200D")


def without_break_hints(text: str) -> str:
    """``text`` with its break hints removed (no space in their place)."""
    return _BREAK_HINTS.sub("", text)
