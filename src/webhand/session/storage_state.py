"""Storage-state files (Playwright's format: cookies, and each origin's localStorage): read with a
bounded size, nesting and count and checked against a schema, written atomically and owner-only.
browser_storage_state uses them, and so does the ``storage_state`` setting, which loads one into
every new session and, with ``save_storage_state``, writes it back when the session closes.

A storage-state file may come from anywhere (a page can offer one as a download), so reading it
is hostile input: every failure is a ``FileNotReadable`` naming the file and the field, never a
crash, and a file within the limits loads in a few seconds on every driver (150,000 cookies kept
a Chromium busy for half a minute).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from webhand.conversation_files import require_file
from webhand.errors import FileNotReadable, FileNotWritable

#: The largest storage-state file read (a big one holds a few MB of localStorage).
MAX_STORAGE_STATE_BYTES = 16 * 1024 * 1024
#: The most cookies, origins and localStorage items per origin loaded (a browser keeps about 180
#: cookies a site; a person's whole browser rarely holds 3,000).
MAX_COOKIES = 3000
MAX_ORIGINS = 1000
MAX_ITEMS_PER_ORIGIN = 10_000
#: The deepest nesting of lists and objects read: a storage state nests 5 deep; Python's JSON
#: parser recurses once a level and fails (RecursionError) near 1,000.
MAX_NESTING = 16
TOOL_HINT = "Give a file written by browser_storage_state action=save."


class _Strict(BaseModel):
    # Strict: "yes" is no boolean and "soon" no number; unknown keys (Playwright's newer ones) are left out.
    model_config = ConfigDict(strict=True, extra="ignore", allow_inf_nan=False)


class StoredCookie(_Strict):
    name: str
    value: str
    domain: str = Field(min_length=1)
    path: str = "/"
    expires: float = -1
    httpOnly: bool = False
    secure: bool = False
    sameSite: Literal["Strict", "Lax", "None"] = "Lax"


class StoredItem(_Strict):
    name: str
    value: str


class StoredOrigin(_Strict):
    origin: str
    localStorage: list[StoredItem] = Field(default_factory=list)

    @field_validator("origin")
    @classmethod
    def _http_origin(cls, value: str) -> str:
        # It is opened in a background tab to write its localStorage: never a file: or chrome: page.
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
                or parts.query or parts.fragment or parts.username is not None:
            raise ValueError("not an origin")
        return f"{parts.scheme}://{parts.netloc}"


class StorageState(_Strict):
    cookies: list[StoredCookie] = Field(default_factory=list)
    origins: list[StoredOrigin] = Field(default_factory=list)


#: What each field must be, as the error says it.
_WANTED = {"expires": "a number (Unix seconds, -1 for a session cookie)", "httpOnly": "true or false",
           "secure": "true or false", "sameSite": '"Strict", "Lax" or "None"',
           "origin": "an http(s) origin like https://example.com", "cookies": "a list", "origins": "a list",
           "localStorage": "a list", "domain": "a non-empty string"}
_JSON_TYPES = {str: "a string", bool: "true or false", int: "a number", float: "a number", type(None): "null",
               dict: "an object", list: "a list"}


def read_storage_state(path: Path, hint: str = TOOL_HINT) -> dict[str, Any]:
    """A storage-state file's content (every field present, typed), checked as above;
    ``FileNotReadable`` saying what is wrong with it (missing, too large, not JSON, too deep, too
    many entries, a field missing or of the wrong type) and then ``hint``. Takes up to a second
    for a large file: run it in a thread."""
    require_file(path, hint)
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_STORAGE_STATE_BYTES + 1)
    except OSError as error:
        raise FileNotReadable(f"Cannot read {path}: {error.strerror or error}.", hint) from None
    if len(raw) > MAX_STORAGE_STATE_BYTES:
        raise FileNotReadable(f"{path} is larger than {MAX_STORAGE_STATE_BYTES // (1024 * 1024)} MB, the most a "
                              "storage state may be.", hint)
    if _nested_deeper_than(raw, MAX_NESTING):
        raise FileNotReadable(f"{path} is not a storage state: its lists and objects nest deeper than "
                              f"{MAX_NESTING} levels (a storage state nests 5), or its brackets do not match.", hint)
    try:
        data = json.loads(raw)
    except ValueError as error:  # UnicodeDecodeError and a number of 4,300 digits and more included
        raise FileNotReadable(f"{path} is not a readable JSON file: {error}.", hint) from None
    _check_counts(path, data, hint)
    try:
        state = StorageState.model_validate(data)
    except ValidationError as error:
        raise FileNotReadable(f"{path} is not a storage state: {_first_problem(error)}.", hint) from None
    return state.model_dump()


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_A_BRACKET = re.compile(rb"[^\[\]{}]+")
_INNERMOST_PAIR = re.compile(rb"\[\]|\{\}")


def _nested_deeper_than(raw: bytes, limit: int) -> bool:
    """Whether the JSON text ``raw`` nests lists and objects deeper than ``limit`` (or has more
    unmatched brackets than that), found without parsing it: strings and everything but brackets
    are dropped, then each round removes the innermost pairs, one level of nesting."""
    brackets = _NOT_A_BRACKET.sub(b"", _JSON_STRING.sub(b"", raw))
    for _ in range(limit):
        brackets, removed = _INNERMOST_PAIR.subn(b"", brackets)
        if not brackets:
            return False
        if not removed:  # brackets that do not match: the parser says where, unless there are many
            return len(brackets) > limit
    return True


def _check_counts(path: Path, data: Any, hint: str) -> None:
    """Refuse more entries than a browser can take in a moment, before each is checked."""
    if not isinstance(data, dict):
        raise FileNotReadable(f"{path} is not a storage state: it must be an object with `cookies` and `origins` "
                              f"lists, not {_JSON_TYPES.get(type(data), 'that')}.", hint)
    cookies, origins = data.get("cookies"), data.get("origins")
    counted = [("cookies", cookies, MAX_COOKIES), ("origins", origins, MAX_ORIGINS)]
    if isinstance(origins, list):
        counted += [(f"origins[{number}].localStorage", entry.get("localStorage"), MAX_ITEMS_PER_ORIGIN)
                    for number, entry in enumerate(origins[:MAX_ORIGINS]) if isinstance(entry, dict)]
    for where, entries, most in counted:
        if isinstance(entries, list) and len(entries) > most:
            raise FileNotReadable(f"{path} holds {len(entries):,} entries in {where}; webhand loads at most {most:,}.",
                                  hint)


def _first_problem(error: ValidationError) -> str:
    problems = error.errors()
    first = problems[0]
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]).lstrip(".")
    field = next((part for part in reversed(first["loc"]) if isinstance(part, str)), "")
    if first["type"] == "missing":
        said = f"{where} is missing"
    elif first["type"] in ("value_error", "literal_error", "finite_number"):
        said = f"{where} must be {_WANTED.get(field, 'something else')}"
    else:
        wanted = {"model_type": "an object", "list_type": "a list"}.get(first["type"]) or _WANTED.get(field, "a string")
        said = f"{where} must be {wanted}, not {_JSON_TYPES.get(type(first['input']), 'that')}"
    more = len(problems) - 1
    return said + (f" ({more} more problem{'s' if more != 1 else ''} after it)" if more else "")


def write_storage_state(path: Path, state: dict[str, Any]) -> int:
    """Write ``state`` to ``path`` at once (a reader never sees half a file), owner-only (0600);
    returns the bytes written."""
    data = json.dumps(state, indent=1).encode()
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # 0600
    except OSError as error:
        raise FileNotWritable(f"Cannot write the storage state {path}: {error.strerror or error}.",
                              "Make its folder writable, or set storage_state to another path.") from None
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise FileNotWritable(f"Cannot write the storage state {path}: {error.strerror or error}.",
                              "Make its folder writable, or set storage_state to another path.") from None
    return len(data)


def summary(state: dict[str, Any]) -> str:
    cookies, origins = len(state.get("cookies", [])), len(state.get("origins", []))
    return f"{cookies} cookie{'s' if cookies != 1 else ''} and the storage of {origins} origin{'s' if origins != 1 else ''}"
