"""The one masker: everything that leaves webhand with every secret replaced by its placeholder.

A reply (``Response``), a file a tool writes from page content, a history entry
(session/recording.py), an export (``webhand export``), the daemon's status and the dashboard's
views all pass what they show through a ``Masker``. It replaces each secret value of the secrets
file, in any of its usual spellings (secret_forms.py), by ``<secret>NAME</secret>``, and each lone
UTF-16 surrogate (legal in a JavaScript string, not encodable by any transport) by U+FFFD.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Any

from webhand.security.secret_store import SecretBook, load

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class Masker:
    """Masks with the secrets of one file (none: only lone surrogates are replaced).

    The file is read at the first use and its secrets kept: a masker lives for one reply or one
    view, and the next one sees the file as it is then. A file that cannot be read raises
    ``ConfigError`` at each use, so nothing unchecked leaves (fail closed)."""

    def __init__(self, secrets_file: Path | None) -> None:
        self.secrets_file = secrets_file

    def text(self, text: str) -> str:
        return _LONE_SURROGATE.sub("\ufffd", self._book.mask(text))

    def data(self, value: Any) -> Any:
        """``value`` (a string, or dicts and lists of them, as JSON holds them) with every string
        masked, keys too; tuples become lists; other values stay as they are."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value

    def file_bytes(self, content: bytes) -> bytes:
        """Bytes of any kind (a binary response body) masked as text: Latin-1 maps bytes to
        characters one to one, so content without a secret comes back exactly as it was."""
        return self.text(content.decode("latin-1")).encode("latin-1", errors="replace")

    @cached_property
    def _book(self) -> SecretBook:
        return load(self.secrets_file)  # once per masker: it checks the file for changes
