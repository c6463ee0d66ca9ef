"""Where webhand's files are: the config file, the per-user runtime dir (the daemon's socket, the
browser registry). Standard library only: the CLI's call to a running daemon needs these and
nothing heavier.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing itself is not imported: a forwarded call must start fast
if TYPE_CHECKING:
    from pathlib import Path

from webhand.errors import BrowserLaunchFailed, ConfigError

CONFIG_FILE_NAME = "webhand.toml"


def user_config_dir() -> Path:
    from pathlib import Path

    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "webhand"


def find_config_file(explicit: str | Path | None = None, *, env: dict[str, str] | None = None,
                     cwd: Path | None = None) -> Path | None:
    """The config file to read: ``explicit`` (or ``WEBHAND_CONFIG``), ./webhand.toml, the user's one."""
    from pathlib import Path

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
    from pathlib import Path

    return Path(runtime_dir_name())


def runtime_dir_name() -> str:
    """``runtime_dir`` as a string, with ``os`` alone: a warm CLI call needs only this (pathlib and
    tempfile would cost it a third of its time)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        path = os.path.join(base, "webhand")
    else:
        path = os.path.join(_temp_dir(), f"webhand-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.stat(path).st_uid != os.getuid():
        raise BrowserLaunchFailed(f"{path} belongs to another user.", "Set XDG_RUNTIME_DIR to a dir of your own.")
    return path


def _temp_dir() -> str:
    """``tempfile.gettempdir()``'s answer in the usual cases (TMPDIR, TEMP, TMP, then /tmp),
    without importing tempfile; anything unusual is left to tempfile itself."""
    for candidate in (os.environ.get("TMPDIR"), os.environ.get("TEMP"), os.environ.get("TMP"), "/tmp"):
        if candidate and os.path.isdir(candidate):
            return os.path.abspath(candidate)
    import tempfile

    return tempfile.gettempdir()
