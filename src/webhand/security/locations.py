"""Where webhand's files are: the config file, the per-user runtime dir (the daemon's socket, the
browser registry), the default output folder; and the one check every private folder passes. Standard library only: the CLI's call to a running daemon needs these and
nothing heavier.
"""

import os

# No `from __future__` either (one module more for that call): the annotations that name Path or
# FileNotWritable, imported only for type checkers, are strings.
TYPE_CHECKING = False  # typing itself is not imported: a forwarded call must start fast
if TYPE_CHECKING:
    from pathlib import Path

    from webhand.errors import FileNotWritable

# webhand.errors is imported where an error is raised, not here: it imports re (and with it enum),
# a third of a warm CLI call, which reaches this module for the runtime folder's check.

CONFIG_FILE_NAME = "webhand.toml"


def user_config_dir() -> "Path":
    from pathlib import Path

    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "webhand"


def find_config_file(explicit: "str | Path | None" = None, *, env: dict[str, str] | None = None,
                     cwd: "Path | None" = None) -> "Path | None":
    """The config file to read: ``explicit`` (or ``WEBHAND_CONFIG``), ./webhand.toml, the user's one."""
    from pathlib import Path

    env = os.environ if env is None else env  # type: ignore[assignment]
    chosen = explicit or env.get("WEBHAND_CONFIG")
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_file():
            from webhand.errors import ConfigError

            raise ConfigError(f"Config file {path} does not exist.", "Fix --config / WEBHAND_CONFIG or create the file.")
        return path
    for candidate in ((cwd or Path.cwd()) / CONFIG_FILE_NAME, user_config_dir() / CONFIG_FILE_NAME):
        if candidate.is_file():
            return candidate
    return None


def runtime_dir() -> "Path":
    """The per-user runtime dir: the daemon's socket, lock and log, the browser registry."""
    from pathlib import Path

    return Path(runtime_dir_name())


def runtime_dir_name() -> str:
    """``runtime_dir`` as a string, with ``os`` alone: a warm CLI call needs only this (pathlib and
    tempfile would cost it a third of its time). ``$XDG_RUNTIME_DIR/webhand`` when that dir is
    private (the login manager makes it, 0700), else ``$XDG_STATE_HOME/webhand`` (``~/.local/state``):
    never a fixed name in a shared folder like /tmp, which another user could create first."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base) and is_private_folder(base):
        return private_folder(os.path.join(base, "webhand"), _RUNTIME_HINT)
    return private_folder(os.path.join(state_home(), "webhand"), _RUNTIME_HINT)


_RUNTIME_HINT = "Set XDG_RUNTIME_DIR (or XDG_STATE_HOME) to a folder of your own that only you can write (mode 0700)."


def state_home() -> str:
    return os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")


def data_home() -> str:
    """Where webhand keeps what the user means to keep: named browser profiles (session/profiles.py)."""
    return os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")


#: A profile's name: letters, digits, '-' and '_', starting with a letter or digit. No '.', '/',
#: '\\' or '~', so no name can leave the profiles folder, hide, or be taken for an option.
_PROFILE_NAME = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"


def is_profile_name(name: object) -> bool:
    import re

    return isinstance(name, str) and re.fullmatch(_PROFILE_NAME, name) is not None


def check_profile_name(name: object) -> str:
    """``name`` when it is a valid profile name; else ``InvalidArgument`` saying what a name may be."""
    if not is_profile_name(name):
        from webhand.errors import InvalidArgument

        raise InvalidArgument(f"Profile name {repr(name)[:80]} is not valid.",
                              "Use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit (e.g. work).")
    return name  # type: ignore[return-value]


def profiles_folder_name() -> str:
    """Where named profiles live (session/profiles.py): ``$XDG_DATA_HOME/webhand/profiles``."""
    return os.path.join(data_home(), "webhand", "profiles")


def cache_home() -> str:
    return os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")


def default_output_dir() -> str:
    """Where conversations' files go unless ``output_dir`` says otherwise: the user's cache, not
    the shared temporary folder (files a user keeps, a download, may be large: not the runtime dir,
    a small tmpfs cleared at logout)."""
    return os.path.join(cache_home(), "webhand", "output")


# ---------------------------------------------------------------------------------------------
# The one check every folder webhand keeps private things in goes through


def private_folder(path: str | os.PathLike[str], hint: str, *, create: bool = True) -> str:
    """``path`` as a real path, once it is safe to keep private things in; made (0700, with any
    missing parent) when missing and ``create``. Safe means: a real folder (not a symlink) of this
    user's that neither its group nor others may write, reached only through folders that nobody
    but this user and root can change: a parent others may write (like /tmp) must be sticky, or
    they could rename the folder and put their own in its place. Else ``FileNotWritable`` saying
    which folder and why, then ``hint`` (what to configure instead)."""
    import stat

    wanted = os.path.join(os.getcwd(), os.fspath(path))  # not normalised: ".." after a symlink is the kernel's
    pending = [part for part in wanted.split("/") if part not in ("", ".")]
    current, hops = "/", 0
    _check_folder("/", os.lstat("/"), wanted, hint, last=not pending)
    while pending:
        name = pending.pop(0)
        if name == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, name)
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            if not create:
                raise _unsafe(wanted, candidate, "does not exist", hint) from None
            try:
                os.mkdir(candidate, 0o700)
            except FileExistsError:
                pass  # someone made it meanwhile: what it is gets checked below
            except OSError as error:
                raise _unsafe(wanted, candidate, f"cannot be created ({error.strerror or error})", hint) from None
            info = os.lstat(candidate)
        except OSError as error:
            raise _unsafe(wanted, candidate, f"cannot be read ({error.strerror or error})", hint) from None
        if stat.S_ISLNK(info.st_mode):
            if not pending:
                raise _unsafe(wanted, candidate, "is a symbolic link (whoever can change the link chooses the folder)",
                              hint)
            hops += 1
            if hops > 40:
                raise _unsafe(wanted, candidate, "is a loop of symbolic links", hint)
            target = os.readlink(candidate)
            pending[:0] = [part for part in target.split("/") if part not in ("", ".")]
            if target.startswith("/"):
                current = "/"
            continue  # the link's own folder (current) was checked; its target is checked as it is walked
        _check_folder(candidate, info, wanted, hint, last=not pending)
        current = candidate
    return current


def make_private_folders(path: "str | os.PathLike[str]") -> None:
    """Make the folder ``path`` and every missing folder above it owner-only (0700), whatever the
    umask (which only takes bits away); folders already there are left as they are. Inside a folder
    ``private_folder`` checked, this is how its subfolders (screenshots, downloads ...) are made."""
    missing = []
    folder = os.path.abspath(path)
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass  # made meanwhile (another download, say)


def open_private_file(path: "str | os.PathLike[str]", flags: int = os.O_WRONLY | os.O_CREAT | os.O_TRUNC) -> int:
    """A descriptor of the file ``path`` opened to write, owner-only (0600) whatever the umask, and
    never through a symbolic link put there; an existing file written over is made 0600 too."""
    descriptor = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(descriptor, 0o600)
    except OSError:
        os.close(descriptor)
        raise
    return descriptor


def is_private_folder(path: str) -> bool:
    """Whether ``path`` exists and passes ``private_folder``'s check."""
    try:
        private_folder(path, "", create=False)
    except OSError:
        return False
    except Exception as error:
        from webhand.errors import FileNotWritable

        if isinstance(error, FileNotWritable):  # what private_folder raises for an unsafe folder
            return False
        raise
    return True


def _check_folder(folder: str, info: os.stat_result, wanted: str, hint: str, *, last: bool) -> None:
    import stat

    if not stat.S_ISDIR(info.st_mode):
        raise _unsafe(wanted, folder, "is not a folder", hint)
    me = os.getuid()
    writable = info.st_mode & 0o022
    if last:
        if info.st_uid != me:
            raise _unsafe(wanted, folder, f"belongs to {_user(info.st_uid)}, not to you ({_user(me)})", hint)
        if writable:
            raise _unsafe(wanted, folder, f"can be written by {_writers(info.st_mode)} (mode {stat.S_IMODE(info.st_mode):04o})",
                          hint)
    elif info.st_uid not in (me, 0):
        raise _unsafe(wanted, folder, f"belongs to {_user(info.st_uid)}, who could replace what is inside", hint)
    elif writable and not info.st_mode & stat.S_ISVTX:
        raise _unsafe(wanted, folder, f"can be written by {_writers(info.st_mode)} and is not sticky (mode "
                                      f"{stat.S_IMODE(info.st_mode):04o}), so they could put their own folder in "
                                      "place of what is inside", hint)


def _unsafe(wanted: str, folder: str, reason: str, hint: str) -> "FileNotWritable":
    from webhand.errors import FileNotWritable

    where = folder if folder == wanted else f"{folder} (on the way to {wanted})"
    return FileNotWritable(f"webhand will not use the folder {where}: it {reason}.", hint)


def _writers(mode: int) -> str:
    return " and ".join(who for who, bit in (("its group", 0o020), ("every user", 0o002)) if mode & bit)


def _user(uid: int) -> str:
    import pwd

    try:
        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"
