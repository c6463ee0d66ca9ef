"""Reap what webhand inherits, so that no zombie piles up in a container without an init.

Chromium's crash handler double-forks out of the browser's process tree, and a browser killed
with SIGKILL leaves children of its zygotes behind. Such orphans go to the nearest ancestor that
is a "child subreaper", else to process 1. In a container started without an init (``docker run``
without ``--init``), process 1 may be a program that never calls ``wait``, so each orphan that
exits stays a zombie for good.

``adopt_orphans()`` makes this process a child subreaper (``PR_SET_CHILD_SUBREAPER``), so the
orphans of the browsers it launched come to it, and starts a thread that reaps them. The server
entry points (``webhand mcp``, the CLI daemon) call it; a library host opts in by calling it,
since it changes the whole process.

It reaps only zombie children that were born in another session and do not lead one. A child this
process started itself either stays in our session (the Playwright driver, a host's subprocess)
or leads its own (each Chromium, started with ``start_new_session``). Those are left to whoever
started them: asyncio's child watcher and ``subprocess.Popen`` wait for their pid, and a pid
reaped behind their back would lose its exit status. Inherited orphans are the others: the
renderers and zygotes forked inside a browser's session, and crash handlers, which call setsid in
their first fork and fork again (so they sit in a session they do not lead).

A thread scans every ``interval`` seconds, rather than a SIGCHLD handler: asyncio allows one
handler per signal, and its older child watchers use SIGCHLD themselves.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading
import time
from pathlib import Path

import psutil

log = logging.getLogger("webhand.subreaper")

_PR_SET_CHILD_SUBREAPER = 36
_lock = threading.Lock()
_thread: threading.Thread | None = None


def adopt_orphans(interval: float = 2.0) -> bool:
    """Become a child subreaper and reap the zombies this process inherits (Linux only; once per
    process, later calls do nothing). Returns whether this process is now a subreaper."""
    global _thread
    if not sys.platform.startswith("linux"):
        return False
    with _lock:
        if _thread is not None:
            return True
        try:
            if ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                log.warning("could not become a child subreaper: %s", os.strerror(ctypes.get_errno()))
                return False
        except OSError:
            return False
        _thread = threading.Thread(target=_reap_every, args=(interval,), name="webhand-subreaper", daemon=True)
        _thread.start()
        return True


def _reap_every(interval: float) -> None:
    while True:  # a background round, like the idle reaper's: nothing waits for it
        try:
            reap_inherited()
        except OSError as error:  # /proc unreadable for a moment: try again next round
            log.debug("reaping skipped: %s", error)
        time.sleep(interval)


def reap_inherited() -> list[int]:
    """Reap the zombie children this process inherited (see the module's docstring); return their pids."""
    own_session = os.getsid(0)
    reaped = []
    for pid in _children():
        state, session = _state_and_session(pid)
        if state != "Z" or session in (own_session, pid):
            continue
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                reaped.append(pid)
        except ChildProcessError:
            pass  # collected meanwhile by someone else
    if reaped:
        log.debug("reaped %d inherited processes: %s", len(reaped), reaped)
    return reaped


def _children() -> set[int]:
    """Direct children of this process: each thread lists those it is the parent of (a kernel
    without CONFIG_PROC_CHILDREN has no such list: then every process's parent is read)."""
    found: set[int] = set()
    listed = False
    for task in Path("/proc/self/task").iterdir():
        try:
            found.update(int(pid) for pid in (task / "children").read_text().split())
            listed = True
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread ended meanwhile, or the kernel keeps no list
    if not listed:
        found = {child.pid for child in psutil.Process().children()}
    return found


def _state_and_session(pid: int) -> tuple[str, int]:
    """State letter and session id from /proc/<pid>/stat (readable for a zombie too)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return "", 0
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (name) ": state ppid pgrp session …
    return fields[0], int(fields[3])
