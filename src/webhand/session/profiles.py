"""Named profiles: browser profile folders (a Chromium user-data dir, a Firefox profile) webhand
keeps, so that sign-ins survive sessions, servers and reboots.

A profile ``NAME`` is the folder ``$XDG_DATA_HOME/webhand/profiles/NAME`` (0700, owner-checked
like every private folder webhand keeps). A browser launched on it (engine/launch/chrome.py and
engine/bidi/firefox.py, ``profile_dir``) keeps it on close. One session uses a profile at a time:
a browser keeps one process per profile folder, and two would corrupt its databases. The session holds the file
``webhand.lock`` inside the folder:

- an ``flock`` on it, held while the session is open, decides who gets the profile; the kernel
  drops it when the holder dies however it dies, so a killed server never leaves it locked;
- its content names the holder (pid, process start time, program, conversation and session) for
  the error a second user gets and for ``webhand profile list``. A holder named there that is
  alive (same pid *and* start time, as orphan reaping checks) is respected even without the
  flock; a dead or reused pid is stale. A holder on another machine sharing the folder cannot be
  checked from here: it is respected until the person clears it (``webhand profile unlock NAME``,
  ``unlock_profile``), which the refusal names.

Which profiles a model may open is the person's choice (``may_open``): the configured ``profile``
and ``allowed_profiles``, nothing else; making, deleting and signing in to a profile are the
person's acts (the CLI), never a tool's.

Chromium's own ``SingletonLock``/``SingletonSocket``/``SingletonCookie`` (Firefox's ``lock`` and
``.parentlock``) left by a killed browser are removed before launch, once no live process runs on
the folder. A profile folder is one browser's: Firefox runs on it in its default user context
(engine/bidi), a Chromium would not read a Firefox's files nor the reverse.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from webhand.errors import FileNotWritable, InvalidArgument, PolicyRefused, ProfileInUse
from webhand.security.locations import check_profile_name, is_profile_name, private_folder, profiles_folder_name

LOCK_FILE = "webhand.lock"
#: Files a browser keeps in its profile folder while it runs on it: Chromium's singletons, and
#: Firefox's ``lock`` (a symbolic link naming host and pid) and ``.parentlock``.
BROWSER_SINGLETONS = ("SingletonLock", "SingletonSocket", "SingletonCookie", "lock", ".parentlock")
#: The most a lock file's content is read (it is a few hundred bytes).
_LOCK_READ_CAP = 4096
_FOLDER_HINT = "Set XDG_DATA_HOME to a folder of your own that only you can write (mode 0700)."


def profiles_root(*, create: bool = True) -> Path:
    return Path(private_folder(profiles_folder_name(), _FOLDER_HINT, create=create))


def profile_dir(name: str, *, create: bool = True) -> Path:
    """The profile's folder (made 0700 when missing and ``create``), checked private."""
    check_profile_name(name)
    return Path(private_folder(profiles_root(create=create) / name, _FOLDER_HINT, create=create))


@dataclass(frozen=True)
class Holder:
    """Who holds a profile, as its lock file says."""

    pid: int
    start_time: float | None
    host: str
    program: str
    purpose: str  # which conversation and session
    since: float

    @property
    def elsewhere(self) -> bool:
        """Whether the holder runs on another machine (sharing the folder): not ours to check."""
        return self.host != socket.gethostname()

    def alive(self) -> bool:
        if self.elsewhere:
            return True  # another machine's process: not ours to judge
        try:
            return psutil.Process(self.pid).create_time() == self.start_time
        except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
            return False

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        where = f" on host {self.host}" if self.elsewhere else ""
        return f"pid {self.pid}{where} ({self.program}; {self.purpose}) since {when}"


def _own_holder(purpose: str) -> dict[str, Any]:
    me = psutil.Process()
    program = " ".join(os.path.basename(part) for part in (sys.argv[:3] or ["python"]))[:120]
    return {"pid": me.pid, "start_time": me.create_time(), "host": socket.gethostname(), "program": program,
            "purpose": purpose[:200], "since": time.time()}


def read_holder(folder: Path) -> Holder | None:
    """The holder the lock file names, or None when it names none (or cannot be read)."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO would block
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, _LOCK_READ_CAP)
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
        return Holder(int(data["pid"]), data.get("start_time"), str(data["host"]), str(data["program"]),
                      str(data["purpose"]), float(data["since"]))
    except (ValueError, KeyError, TypeError):
        return None


def live_holder(folder: Path) -> Holder | None:
    holder = read_holder(folder)
    return holder if holder is not None and holder.alive() else None


class ProfileLock:
    """This process's hold on one profile, from ``acquire`` until ``release``."""

    def __init__(self, name: str, folder: Path, fd: int) -> None:
        self.name, self.folder, self._fd = name, folder, fd

    @classmethod
    def acquire(cls, name: str, purpose: str, *, over_other_hosts: bool = False) -> "ProfileLock":
        """Hold profile ``name`` for ``purpose`` ("conversation …, session …"), or raise
        ``ProfileInUse`` naming who holds it. A lock its holder left by dying is taken over; one
        naming a holder on another machine only when ``over_other_hosts`` (the person said so)."""
        folder = profile_dir(name)
        try:
            fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise OSError("not a regular file")
        except OSError as error:
            raise FileNotWritable(f"webhand will not use the lock file {folder / LOCK_FILE}: "
                                  f"{error.strerror or error} (a symbolic link or something else put there).",
                                  "Remove it; webhand makes a new one.") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise _in_use(name, read_holder(folder)) from None
            named = live_holder(folder)
            if named is not None and named.pid != os.getpid() and not (named.elsewhere and over_other_hosts):
                raise _in_use(name, named)  # alive without the flock: another machine, or an older webhand
            release_browser_singletons(folder)
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(_own_holder(purpose)).encode(), 0)
        except BaseException:
            os.close(fd)  # drops the flock, if it was taken
            raise
        return cls(name, folder, fd)

    def release(self) -> None:
        """Let go of the profile (its browser has exited): the lock file stays, naming nobody."""
        if self._fd < 0:
            return
        fd, self._fd = self._fd, -1
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.utime(self.folder / LOCK_FILE)  # "last used"
        os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd >= 0


def _in_use(name: str, holder: Holder | None) -> ProfileInUse:
    if holder is not None and holder.elsewhere:
        return ProfileInUse(f"Profile {name!r} is held by {holder.describe()}: webhand cannot see from here whether "
                            "that process still runs, so the profile stays locked until that webhand lets it go or "
                            "the lock is cleared.",
                            f"If {holder.host} no longer uses the profile (its webhand or machine stopped without "
                            f"letting go), clear the lock with `webhand profile unlock {name}`; else end that session "
                            f"on {holder.host} first, or use another profile.")
    who = holder.describe() if holder is not None else "another process (its lock names no holder yet)"
    return ProfileInUse(f"Profile {name!r} is in use by {who}: one session at a time may use a profile.",
                        "Close that session first (browser_close or browser_session_destroy there, or end that "
                        "webhand), or use another profile; `webhand profile list` shows who holds each one.")


def browsers_on(folder: Path) -> list[int]:
    """Pids of live processes started on exactly that folder: a Chromium with
    ``--user-data-dir=<folder>``, a Firefox with ``--profile <folder>``."""
    marker = f"--user-data-dir={folder}"
    found = []
    for process in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            cmdline = process.info["cmdline"] or []
            if marker in cmdline or any(flag in ("--profile", "-profile") and value == str(folder)
                                        for flag, value in zip(cmdline, cmdline[1:])):
                found.append(process.pid)
    return found


def release_browser_singletons(folder: Path) -> None:
    """Remove the singleton files a killed browser left in ``folder`` (Chromium's, Firefox's lock),
    so that the next browser does not refuse the profile or try to hand its URL to a dead one
    (both call a lock naming another host "in use by another computer"). Refused with the
    pids when a browser still runs on the folder (one webhand did not start, or not reaped yet)."""
    running = browsers_on(folder)
    if running:
        raise ProfileInUse(f"A browser is still running on profile folder {folder} (pid "
                           f"{', '.join(map(str, running))}).",
                           "Close that browser (it may be a Chromium you started with this folder), then try again.")
    for singleton in BROWSER_SINGLETONS:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(folder / singleton)


@dataclass(frozen=True)
class ProfileInfo:
    name: str
    size: int  # bytes on disk, the folder's files
    last_used: float  # Unix time
    holder: Holder | None  # who holds it now


def list_profiles() -> list[ProfileInfo]:
    root = Path(profiles_folder_name())
    if not root.is_dir():
        return []
    infos = []
    for entry in sorted(root.iterdir()):
        if not is_profile_name(entry.name) or entry.is_symlink() or not entry.is_dir():
            continue
        lock = entry / LOCK_FILE
        last = lock.lstat().st_mtime if lock.exists() else entry.lstat().st_mtime
        infos.append(ProfileInfo(entry.name, _size(entry), last, live_holder(entry)))
    return infos


def _size(folder: Path) -> int:
    total = 0
    for base, _folders, files in os.walk(folder):  # never follows symlinks
        for file in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(base, file)).st_size
    return total


def exists(name: str) -> bool:
    return (Path(profiles_folder_name()) / check_profile_name(name)).is_dir()


def _existing(name: str) -> None:
    if not exists(name):
        known = ", ".join(p.name for p in list_profiles()) or "none"
        raise InvalidArgument(f"There is no profile {name!r} (profiles: {known}).", "`webhand profile list` shows them.")


def may_open(name: str, configured: str | None, allowed: list[str]) -> None:
    """Refuse profile ``name`` that a model chose (browser_session_create profile=) unless this
    agent's configuration gives it: ``configured`` (its ``profile``) or one of ``allowed``
    (``allowed_profiles``), which must already exist (the model never makes one). The refusal says
    which profiles it may use and how the person allows another."""
    check_profile_name(name)
    given = list(dict.fromkeys(([configured] if configured else []) + allowed))
    if name not in given:
        raise PolicyRefused(f"Profile {name!r} is not one this agent may use (it may use: "
                            f"{', '.join(map(repr, given)) or 'none'}). A profile holds the person's sign-ins: "
                            "only they choose which ones an agent gets.",
                            "Go on without profile= (a session of its own, signed in to nothing), or ask the person: "
                            "they can add the name to `allowed_profiles` in webhand's config ([agents.NAME.browser] or "
                            "[defaults.browser], or WEBHAND_ALLOWED_PROFILES).")
    if name != configured and not exists(name):  # the configured one is made on first use: the config says so
        raise InvalidArgument(f"Profile {name!r} is allowed but does not exist yet: only the person makes a profile "
                              "and signs in to it.",
                              f"Ask the person to run `webhand profile login {name}`; until then go on without profile=.")


def delete_profile(name: str) -> None:
    """Remove profile ``name`` and everything signed in there; refused while it is held."""
    _existing(name)
    lock = ProfileLock.acquire(name, "deleting the profile")  # refuses a held one, naming the holder
    try:
        shutil.rmtree(lock.folder)
    finally:
        lock.release()


def unlock_profile(name: str) -> Holder | None:
    """Clear the lock of profile ``name`` that names a holder on another machine (one that stopped
    without letting go): the person's act. Refused, naming the holder, while a process of this
    machine holds the profile or a browser runs on it. Returns the holder the lock named."""
    _existing(name)
    holder = read_holder(profile_dir(name, create=False))
    ProfileLock.acquire(name, "unlocking the profile", over_other_hosts=True).release()
    return holder
