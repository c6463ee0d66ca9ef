"""Downloads, the part every driver shares: the name a file is saved under (free, and short enough
for the file system), and keeping it owner-only like everything else webhand writes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from webhand.security.locations import make_private_folders

#: The longest name most file systems take, in bytes, when the folder's own limit cannot be read.
DEFAULT_NAME_MAX = 255
#: A longer "extension" is no extension (a name with a dot in a long sentence): it is not kept whole.
_LONGEST_EXTENSION = 32


def free_path(folder: Path | None, name: str, reserved: set[str]) -> Path:
    """``name`` in the download folder (made owner-only when missing), numbered ("report-2.pdf")
    when taken: never overwrite; shortened to the folder's longest file name (bytes, whole UTF-8
    characters), its extension kept. ``reserved``: the names of files being saved (not on disk
    yet); the one returned joins them, and leaves once its file is saved."""
    assert folder is not None  # a context without a download folder cancels its downloads
    make_private_folders(folder)
    limit = _name_max(folder)
    candidate, number = fitted(name, limit), 1
    while os.path.lexists(folder / candidate) or candidate in reserved:
        number += 1
        candidate = fitted(name, limit, f"-{number}")
    reserved.add(candidate)
    return folder / candidate


def fitted(name: str, limit: int, tag: str = "") -> str:
    """``name`` with ``tag`` before its extension, at most ``limit`` bytes in UTF-8."""
    name = name.encode("utf-8", "replace").decode()  # a lone surrogate cannot be in a file name
    stem, extension = os.path.splitext(name)
    if len(extension.encode()) > _LONGEST_EXTENSION or len((tag + extension).encode()) >= limit:
        stem, extension = name, ""
    room = limit - len((tag + extension).encode())
    return stem.encode()[:room].decode("utf-8", "ignore") + tag + extension


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return DEFAULT_NAME_MAX


def store(staged: str | Path, folder: Path | None, name: str, reserved: set[str]) -> tuple[Path, int]:
    """Move the browser's finished file ``staged`` into the download folder under a free name (as
    ``free_path`` picks it), owner-only (the browser wrote it as the umask says, 0644 by default):
    where it went, and its size. ``OSError`` when it cannot be saved."""
    target = free_path(folder, name, reserved)
    try:
        shutil.move(str(staged), target)
        return target, keep_private(target)
    finally:
        reserved.discard(target.name)


def keep_private(path: Path) -> int:
    """Make a file the browser saved owner-only (0600); its size."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        os.fchmod(descriptor, 0o600)
        return os.fstat(descriptor).st_size
    finally:
        os.close(descriptor)
