"""File paths that tools read or write are confined to configured roots."""

from __future__ import annotations

from pathlib import Path

from webhand.config import Settings
from webhand.errors import PolicyRefused


def allowed_roots(settings: Settings) -> list[Path]:
    """The configured roots, else the output dir and the working dir."""
    roots = settings.roots or [settings.output_dir, Path.cwd()]
    return [Path(r).expanduser().resolve() for r in roots]


def confine(path: str, settings: Settings) -> Path:
    """Resolve ``path`` (relative to the working dir) and refuse it outside every root."""
    resolved = Path(path).expanduser().resolve()
    roots = allowed_roots(settings)
    if not any(resolved == root or resolved.is_relative_to(root) for root in roots):
        raise PolicyRefused(f"{resolved} is outside the folders webhand may use ({', '.join(map(str, roots))}).",
                            "Use a file inside one of them, or add its folder to `roots` in the config.")
    return resolved
