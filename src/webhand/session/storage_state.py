"""Storage-state files (Playwright's format: cookies, and each origin's localStorage): read with a
bounded size and checked for shape, written atomically and owner-only. browser_storage_state
uses them, and so does the ``storage_state`` setting, which loads one into every new session and,
with ``save_storage_state``, writes it back when the session closes."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from webhand.conversation_files import require_file
from webhand.errors import FileNotReadable, FileNotWritable

#: The largest storage-state file read (a big one holds a few MB of localStorage).
MAX_STORAGE_STATE_BYTES = 16 * 1024 * 1024
TOOL_HINT = "Give a file written by browser_storage_state action=save."


def read_storage_state(path: Path, hint: str = TOOL_HINT) -> dict[str, Any]:
    """A storage-state file's content, checked for the shape browser_storage_state save writes;
    ``FileNotReadable`` saying what is wrong with it (missing, too large, not JSON, wrong shape)
    and then ``hint``."""
    require_file(path, hint)
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_STORAGE_STATE_BYTES + 1)
    except OSError as error:
        raise FileNotReadable(f"Cannot read {path}: {error.strerror or error}.", hint) from None
    if len(raw) > MAX_STORAGE_STATE_BYTES:
        raise FileNotReadable(f"{path} is larger than {MAX_STORAGE_STATE_BYTES // (1024 * 1024)} MB, the most a "
                              "storage state may be.", hint)
    try:
        state = json.loads(raw)
    except ValueError as error:
        raise FileNotReadable(f"{path} is not a readable JSON file: {error}.", hint) from None
    if not (isinstance(state, dict) and isinstance(state.get("cookies", []), list)
            and isinstance(state.get("origins", []), list)
            and all(isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("value"), str)
                    and isinstance(c.get("domain"), str) for c in state.get("cookies", []))
            and all(isinstance(o, dict) and isinstance(o.get("origin"), str)
                    and isinstance(o.get("localStorage", []), list) for o in state.get("origins", []))):
        raise FileNotReadable(f"{path} is not a storage state (it needs a `cookies` list of objects with name, "
                              "value and domain, and an `origins` list of objects with origin and localStorage).",
                              hint)
    return {"cookies": state.get("cookies", []), "origins": state.get("origins", [])}


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
