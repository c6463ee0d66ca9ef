"""Downloads, the part every driver shares: the name a file is saved under."""

from __future__ import annotations

from pathlib import Path


def free_path(folder: Path | None, name: str, reserved: set[str]) -> Path:
    """``name`` in the download folder, numbered ("report-2.pdf") when taken: never overwrite.
    ``reserved``: the names of files being saved (not on disk yet); the one returned joins them,
    and leaves once its file is saved."""
    assert folder is not None  # a context without a download folder cancels its downloads
    stem, suffix = Path(name).stem, Path(name).suffix
    candidate, number = name, 1
    while (folder / candidate).exists() or candidate in reserved:
        number += 1
        candidate = f"{stem}-{number}{suffix}"
    reserved.add(candidate)
    return folder / candidate
