"""The webhand servers this user runs (HTTP MCP servers, dashboards): one file each in the private
runtime folder, so that every webhand refuses them all to the browsers it drives, not only its own.

A server writes ``<runtime dir>/servers/<port>`` (its PID and the address it listens on) once it is
bound, and removes it as it stops; a file whose process is gone (the server was killed) is ignored,
and removed when seen. Other users' servers are not listed: the folder is this user's, private, as
the profile locks' are. Reading is cheap enough to do for each request a page makes to a loopback
address: the folder is listed again only when its modification time changed. Standard library only.
"""

from __future__ import annotations

import json
import logging
import os

from webhand.security.locations import runtime_dir_name

log = logging.getLogger("webhand")

FOLDER_NAME = "servers"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process now holds that PID: not ours, but alive
    return True


class RunningServers:
    """The registry, as this process reads and writes it."""

    def __init__(self, folder: str | None = None) -> None:
        self._folder = folder  # found on first use (the runtime folder may not be made until then)
        self._stamp: int | None = None
        self._entries: dict[int, tuple[int, str]] = {}  # port -> (pid, host it listens on)

    def folder(self, *, create: bool) -> str | None:
        if self._folder is None:
            try:
                base = runtime_dir_name()
            except Exception as error:  # noqa: BLE001 - an unsafe runtime folder: no registry, said once
                log.warning("the list of running webhand servers is unavailable: %s", error)
                self._folder = ""
                return None
            self._folder = os.path.join(base, FOLDER_NAME)
        if not self._folder:
            return None
        if create:
            try:
                os.mkdir(self._folder, 0o700)
            except FileExistsError:
                pass
            except OSError as error:
                log.warning("cannot make %s: %s", self._folder, error)
                return None
        return self._folder

    def register(self, host: str, port: int) -> None:
        """Announce this process's server on ``host:port`` to every webhand of this user."""
        folder = self.folder(create=True)
        if folder is None:
            return
        path = os.path.join(folder, str(port))
        temporary = f"{path}.{os.getpid()}.tmp"
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(descriptor, "w") as file:
                json.dump({"pid": os.getpid(), "host": host}, file)
            os.replace(temporary, path)
        except OSError as error:
            log.warning("cannot register the server on port %s in %s: %s", port, folder, error)

    def unregister(self, port: int) -> None:
        """Remove this process's entry for ``port`` (never another process's)."""
        folder = self.folder(create=False)
        if folder is None:
            return
        path = os.path.join(folder, str(port))
        entry = self._read(path)
        if entry is not None and entry[0] == os.getpid():
            try:
                os.unlink(path)
            except OSError:
                pass

    def host_of(self, port: int) -> tuple[int, str] | None:
        """(PID, host) of the live webhand server on ``port``, if one is registered."""
        self._refresh()
        entry = self._entries.get(port)
        return entry if entry is not None and _alive(entry[0]) else None

    def __bool__(self) -> bool:
        self._refresh()
        return any(_alive(pid) for pid, _ in self._entries.values())

    def _refresh(self) -> None:
        folder = self.folder(create=False)
        try:
            stamp = os.stat(folder).st_mtime_ns if folder else None
        except OSError:
            stamp = None
        if stamp == self._stamp:
            return
        self._stamp, self._entries = stamp, {}
        if stamp is None or folder is None:
            return
        for name in os.listdir(folder):
            if not name.isdigit():
                continue
            entry = self._read(os.path.join(folder, name))
            if entry is None:
                continue
            if not _alive(entry[0]):  # a server that was killed: its file is stale
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    pass
                continue
            self._entries[int(name)] = entry

    @staticmethod
    def _read(path: str) -> tuple[int, str] | None:
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(descriptor) as file:
                data = json.loads(file.read(1000))
            return int(data["pid"]), str(data["host"])
        except (OSError, ValueError, KeyError, TypeError):
            return None


#: The registry of this user's webhand servers, as this process sees it.
RUNNING_SERVERS = RunningServers()
