"""The page JavaScript of the engine layer, one script a file, loaded once and sent as written.

The drivers run these in the page (pointer checks, form fields, the settle watch, waits, the
model's JavaScript's result); the Python modules that name them (engine/pointer.py,
engine/page_scripts.py, engine/settle.py, engine/waits.py, engine/console_javascript.py) keep
their contract, this folder their text. One folder rather than files beside each module: engine/ then
lists Python modules only, one loader serves them all, and one package-data glob ships them.
The page agent's own scripts stay in page/ beside snapshot.py, which splices them together.

A file opens with ``//`` lines that say what it is (docs/layout.md quotes the first sentence);
:func:`source` leaves them out, so the page gets the script alone. Where a script holds another
script or a number that Python owns, the file names it by an upper-case word (``POINTER_HELPERS``,
``WATCH_DOM``, ``SHORT_MS`` ...) that :func:`compose` replaces: the value has one definition.
One-line glue that only calls such a script (``pointer.LABEL``) stays a Python string by its use.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources


@cache
def source(name: str) -> str:
    """The script in ``name`` (this folder), without its opening ``//`` lines and its last newline."""
    lines = resources.files(__name__).joinpath(name).read_text(encoding="utf-8").split("\n")
    while lines and lines[0].startswith("//"):
        lines.pop(0)
    return "\n".join(lines).removesuffix("\n")


def compose(name: str, **parts: str) -> str:
    """The script in ``name`` with each upper-case word given replaced by its text, in one pass."""
    text = source(name)
    missing = [word for word in parts if not re.search(rf"\b{word}\b", text)]
    if missing:
        raise ValueError(f"{name} names no {', '.join(missing)}")
    return re.sub(r"\b(" + "|".join(map(re.escape, parts)) + r")\b", lambda match: parts[match.group(1)], text)
