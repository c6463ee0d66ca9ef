"""Finding the Chromium-family browsers on this machine that expose DevTools, so that a person can
pick one instead of typing a port (`webhand browsers`, `webhand doctor`).

A Chromium started with ``--remote-debugging-port`` writes ``DevToolsActivePort`` (the port, then
the browser's WebSocket path) into its user-data dir. This module reads that file in the usual
profile folders of Chrome, Chromium, Edge and Brave (and their beta/dev channels), asks the port
for ``/json/version`` on 127.0.0.1 with a short timeout, and says for each browser why it can or
cannot be attached: not running, a stale file whose port no longer answers, running without a
DevTools port (Chrome 136 and later refuse ``--remote-debugging-port`` on the default profile), or
answering.

The files are the user's, but any program of theirs may write them: each is read bounded (a few
hundred bytes), only when it is a regular file, never through a symbolic link that leads out of
the home folder, and whatever it holds is parsed strictly (a port is 1-65535 digits, nothing else).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

#: The most of a DevToolsActivePort file read: a port and a path are a few dozen bytes.
_MAX_FILE_BYTES = 512
#: How long a port has to answer /json/version.
PROBE_TIMEOUT_SECONDS = 2.0
_WS_PATH = re.compile(r"/devtools/browser/[A-Za-z0-9-]{1,64}")

# (browser name, user-data dir relative to the home folder)
_LINUX = [
    ("Google Chrome", ".config/google-chrome"), ("Google Chrome Beta", ".config/google-chrome-beta"),
    ("Google Chrome Dev", ".config/google-chrome-unstable"), ("Chromium", ".config/chromium"),
    ("Microsoft Edge", ".config/microsoft-edge"), ("Microsoft Edge Beta", ".config/microsoft-edge-beta"),
    ("Microsoft Edge Dev", ".config/microsoft-edge-dev"), ("Brave", ".config/BraveSoftware/Brave-Browser"),
    ("Brave Beta", ".config/BraveSoftware/Brave-Browser-Beta"),
    ("Brave Nightly", ".config/BraveSoftware/Brave-Browser-Nightly"),
    ("Chromium (snap)", "snap/chromium/common/chromium"),
]
_MAC = [
    ("Google Chrome", "Library/Application Support/Google/Chrome"),
    ("Google Chrome Beta", "Library/Application Support/Google/Chrome Beta"),
    ("Google Chrome Dev", "Library/Application Support/Google/Chrome Dev"),
    ("Google Chrome Canary", "Library/Application Support/Google/Chrome Canary"),
    ("Chromium", "Library/Application Support/Chromium"),
    ("Microsoft Edge", "Library/Application Support/Microsoft Edge"),
    ("Microsoft Edge Beta", "Library/Application Support/Microsoft Edge Beta"),
    ("Microsoft Edge Dev", "Library/Application Support/Microsoft Edge Dev"),
    ("Brave", "Library/Application Support/BraveSoftware/Brave-Browser"),
    ("Brave Beta", "Library/Application Support/BraveSoftware/Brave-Browser-Beta"),
]


@dataclass
class FoundBrowser:
    """One profile folder that holds a browser, and whether webhand can attach to it."""

    name: str
    folder: str
    attachable: bool
    reason: str  # why (or why not), in words a person acts on
    port: int | None = None
    version: str = ""  # what /json/version says ("Chrome/140.0.…") when it answered

    @property
    def cdp_url(self) -> str | None:
        return f"http://127.0.0.1:{self.port}" if self.attachable and self.port else None


def profile_folders(home: Path, platform: str | None = None) -> list[tuple[str, Path]]:
    """The usual user-data dirs under ``home`` for this platform (macOS's too on macOS)."""
    table = _MAC if (platform or sys.platform) == "darwin" else _LINUX
    return [(name, home / relative) for name, relative in table]


def find_running_browsers(home: Path | None = None, *, timeout: float = PROBE_TIMEOUT_SECONDS,
                          platform: str | None = None) -> list[FoundBrowser]:
    """Every usual profile folder under ``home`` that exists, with what can be attached to it."""
    home = Path(home or Path.home())
    found = []
    for name, folder in profile_folders(home, platform):
        if _inside(folder, home) and folder.is_dir():
            found.append(examine(name, folder, home, timeout=timeout))
    return found


def examine(name: str, folder: Path, home: Path, *, timeout: float = PROBE_TIMEOUT_SECONDS) -> FoundBrowser:
    """What ``folder`` (a user-data dir) says about its browser."""
    def result(attachable: bool, reason: str, port: int | None = None, version: str = "") -> FoundBrowser:
        return FoundBrowser(name, str(folder), attachable, reason, port, version)

    running = _lock_holder_alive(folder)
    parsed = _read_port_file(folder / "DevToolsActivePort", home)
    if isinstance(parsed, str):  # missing or unreadable
        if parsed == "missing":
            if running:
                return result(False, "running without a DevTools port (started without --remote-debugging-port, "
                                     "or Chrome 136 and later on its default profile, which refuses it); share a tab "
                                     "through webhand's extension (webhand extension path), or start it with another "
                                     "--user-data-dir and --remote-debugging-port")
            return result(False, "not running (no DevToolsActivePort file)")
        return result(False, f"its DevToolsActivePort file cannot be used: {parsed}")
    port, _path = parsed
    version = _probe(port, timeout)
    if version is None:
        why = "running, but" if running else "not running:"
        return result(False, f"{why} port {port} from its DevToolsActivePort file does not answer /json/version "
                             "(a stale file from an earlier run?)", port)
    return result(True, f"answers on 127.0.0.1:{port} ({version}); connect with cdp_url = "
                        f"\"http://127.0.0.1:{port}\"", port, version)


def _inside(path: Path, home: Path) -> bool:
    """Whether ``path``, with every symbolic link followed, is still inside ``home``."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(home))
    except (OSError, ValueError):
        return False


def _read_port_file(path: Path, home: Path) -> tuple[int, str] | str:
    """(port, browser path) from a DevToolsActivePort file, or why not ("missing" when absent)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})"
    if stat.S_ISLNK(info.st_mode) and not _inside(path, home):
        return "it is a symbolic link that leads out of the home folder"
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})"
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return "it is not a regular file"
        data = os.read(descriptor, _MAX_FILE_BYTES + 1)
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})"
    finally:
        os.close(descriptor)
    if len(data) > _MAX_FILE_BYTES:
        return f"it is longer than {_MAX_FILE_BYTES} bytes, which no browser writes"
    try:
        lines = data.decode("ascii").split("\n")
    except UnicodeDecodeError:
        return "it is not text"
    first = lines[0].strip()
    if not first.isdigit() or len(first) > 5 or not 0 < int(first) < 65536:
        return "its first line is not a port number"
    browser_path = lines[1].strip() if len(lines) > 1 else ""
    if browser_path and not _WS_PATH.fullmatch(browser_path):
        browser_path = ""  # only the port is needed; a strange second line is not passed on
    return int(first), browser_path


def _probe(port: int, timeout: float) -> str | None:
    """The browser's product ("Chrome/140.0.…") when 127.0.0.1:port answers /json/version as a
    DevTools endpoint does; None otherwise."""
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through an HTTP(S)_PROXY
    try:
        with direct.open(f"http://127.0.0.1:{port}/json/version", timeout=timeout) as reply:
            body = json.loads(reply.read(64 * 1024))
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or not isinstance(body.get("webSocketDebuggerUrl"), str):
        return None
    product = body.get("Browser")
    return product[:80] if isinstance(product, str) else "a DevTools endpoint"


def _lock_holder_alive(folder: Path) -> bool:
    """Whether the process named by the profile's ``SingletonLock`` (a symbolic link to
    "host-pid", on Linux and macOS) runs on this machine. Read as a link: never followed."""
    try:
        target = os.readlink(folder / "SingletonLock")
    except OSError:
        return False
    host, _, pid = target.rpartition("-")
    if not pid.isdigit() or len(pid) > 10 or host != os.uname().nodename:
        return False
    try:
        os.kill(int(pid), 0)
    except PermissionError:
        return True  # another user's process: it runs
    except (OSError, OverflowError):
        return False
    return True


def describe(found: list[FoundBrowser]) -> list[str]:
    """One line per browser, for the CLI."""
    if not found:
        return ["No Chrome, Chromium, Edge or Brave profile folder was found in the usual places."]
    return [f"{'can attach' if b.attachable else 'cannot attach'}  {b.name} ({b.folder}): {b.reason}" for b in found]
