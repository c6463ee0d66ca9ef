"""Where webhand's files are: the config file, the per-user runtime dir (the daemon's socket, the
browser registry). Standard library only: the CLI's call to a running daemon needs these and
nothing heavier.
"""

from __future__ import annotations

import os
from pathlib import Path

from webhand.errors import BrowserLaunchFailed, ConfigError

CONFIG_FILE_NAME = "webhand.toml"


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "webhand"


def find_config_file(explicit: str | Path | None = None, *, env: dict[str, str] | None = None,
                     cwd: Path | None = None) -> Path | None:
    """The config file to read: ``explicit`` (or ``WEBHAND_CONFIG``), ./webhand.toml, the user's one."""
    env = os.environ if env is None else env  # type: ignore[assignment]
    chosen = explicit or env.get("WEBHAND_CONFIG")
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_file():
            raise ConfigError(f"Config file {path} does not exist.", "Fix --config / WEBHAND_CONFIG or create the file.")
        return path
    for candidate in ((cwd or Path.cwd()) / CONFIG_FILE_NAME, user_config_dir() / CONFIG_FILE_NAME):
        if candidate.is_file():
            return candidate
    return None


def runtime_dir() -> Path:
    """The per-user runtime dir (``$XDG_RUNTIME_DIR/webhand``, else a 0700 dir in /tmp)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        path = Path(base) / "webhand"
    else:
        import tempfile  # only here: it costs a CLI call to the daemon more than the rest of this module

        path = Path(tempfile.gettempdir()) / f"webhand-{os.getuid()}"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid != os.getuid():
        raise BrowserLaunchFailed(f"{path} belongs to another user.", "Set XDG_RUNTIME_DIR to a dir of your own.")
    return path
