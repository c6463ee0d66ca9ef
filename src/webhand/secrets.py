"""Secrets the model may type but never see.

The user keeps ``NAME=value`` lines in the file ``secrets_file`` names. The model writes
``<secret>NAME</secret>`` wherever it would type the value; ``expand`` puts the real value in
just before it reaches the browser, and ``redact`` (run by ``Response.result`` on every reply)
turns any value back into its placeholder, so a reply, log line or history entry built from a
reply never holds one (not even a snapshot showing the filled field).
"""

from __future__ import annotations

import re
from pathlib import Path

from webhand.errors import ConfigError, InvalidArgument

# Every occurrence of a value is masked in every reply, so a very short value ("ab") would
# garble ordinary text; such a secret is refused when the file is read.
MIN_LENGTH = 4
_PLACEHOLDER = re.compile(r"<secret>\s*([A-Za-z_][A-Za-z0-9_]*)\s*</secret>")
_cache: dict[Path, tuple[float, dict[str, str]]] = {}


def placeholder(name: str) -> str:
    return f"<secret>{name}</secret>"


def load(path: Path | None) -> dict[str, str]:
    """NAME -> value from the secrets file; re-read when the file changes. Empty without a file."""
    if path is None:
        return {}
    try:
        mtime = path.stat().st_mtime
    except OSError:
        raise ConfigError(f"The secrets file {path} cannot be read.", "Fix secrets_file in the configuration.") from None
    cached = _cache.get(path)
    if cached and cached[0] == mtime:
        return cached[1]
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if name.strip() and value:
            if len(value) < MIN_LENGTH:
                raise ConfigError(f"The secret {name.strip()} in {path} is shorter than {MIN_LENGTH} characters; "
                                  "a value that short would be masked wherever it appears in replies.",
                                  "Use a longer value, or remove the line.")
            values[name.strip()] = value
    _cache[path] = (mtime, values)
    return values


def expand(text: str, path: Path | None) -> str:
    """``text`` with each ``<secret>NAME</secret>`` replaced by its value."""
    if "<secret>" not in text:
        return text
    values = load(path)

    def value_of(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            known = ", ".join(sorted(values)) or "none (no secrets_file is configured)"
            raise InvalidArgument(f"There is no secret named {name}.", f"Known secrets: {known}.")
        return values[name]

    return _PLACEHOLDER.sub(value_of, text)


def redact(text: str, path: Path | None) -> str:
    """``text`` with every secret value replaced by its placeholder (longest values first)."""
    if path is None or not text:
        return text
    for name, value in sorted(load(path).items(), key=lambda item: -len(item[1])):
        if value in text:
            text = text.replace(value, placeholder(name))
    return text
