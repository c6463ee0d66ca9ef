"""Find a Chromium binary, launch it in its own process group, and never leave one behind.

Every browser webhand starts:
- runs in a new session (its own process group) with a fresh temporary user-data dir, or with a
  named profile's folder (session/profiles.py), kept on close, and a temporary folder beside it;
- is asked to die with its parent (``PR_SET_PDEATHSIG``), so a killed host does not strand it;
- is written to a PID registry in the user's runtime dir, so that the next webhand start can
  reap any that survived anyway (verified by pid, start time and user-data dir, so that no
  unrelated process is ever touched);
- is closed by SIGTERM to the whole group, then SIGKILL after a short grace.

Long because a launch is one sequence (the plan, the flags, the spawn, the DevTools port read from
the browser's own output, the registry entry, the kill) whose steps share the process and its
folders; the binary's choice, the memo of launches and the registry's reading live beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil
from websockets.exceptions import WebSocketException

from webhand.engine.launch.chromium_binary import choose_chromium, find_chromium, is_headless_shell  # noqa: F401 - find_chromium re-exported
from webhand.errors import BrowserLaunchFailed
from webhand.security.locations import private_folder, runtime_dir

if TYPE_CHECKING:
    from webhand.config import Settings

USER_DATA_PREFIX = "webhand-chrome-"
KILL_GRACE_SECONDS = 2.0
#: How long a browser on a kept profile gets to shut down by itself (SIGTERM to its main process
#: alone) before its group is killed: its network service writes the cookies to disk on the way.
PROFILE_CLOSE_GRACE_SECONDS = 5.0
DISABLED_FEATURES = (
    "Translate", "MediaRouter", "OptimizationHints", "AutofillServerCommunication", "InterestFeedContentSuggestions",
    "AimEnabled", "LensOverlay", "PreconnectToSearch", "NetworkTimeServiceQuerying",
    "WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "PreloadTopChromeWebUI",
)
_DEVTOOLS_LINE = re.compile(r"DevTools listening on (ws://\S+)")


#: What the page_tools setting adds: Chromium's WebMCP (a page's document.modelContext, form tools, the
#: CDP WebMCP domain), behind a feature in Chromium 156 (engine/page_tools.py).
PAGE_TOOLS_FLAG = "--enable-features=WebMCP"


def merged_features(flags: list[str]) -> list[str]:
    """``flags`` with every ``--enable-features=`` merged into one, and every ``--disable-features=``
    into one, each where its first stood: Chromium takes only the last of each, so a user's own
    ``extra_args`` feature list and webhand's would otherwise drop one another."""
    lists: dict[str, list[str]] = {}
    merged: list[str] = []
    for flag in flags:
        switch, _, value = flag.partition("=")
        if switch in ("--enable-features", "--disable-features") and _:
            if switch not in lists:
                lists[switch] = []
                merged.append(switch)
            lists[switch] += [name for name in value.split(",") if name and name not in lists[switch]]
        else:
            merged.append(flag)
    return [f"{flag}={','.join(lists[flag])}" if flag in lists else flag for flag in merged]


def launch_flags(user_data_dir: str, *, headless: bool = True, width: int = 1280, height: int = 720,
                 extra: list[str] | None = None, extensions: list[str] | None = None,
                 headless_shell: bool = False) -> list[str]:
    """Flags fit for containers and closed networks: nothing phones home, nothing waits for a user.
    ``extensions`` (unpacked folders, ``extensions = [...]``) are the only ones the browser runs.
    ``headless_shell``: the binary is the headless shell (chromium_binary.py), which is headless by
    nature and opens no window at start: it gets neither ``--headless`` nor ``--no-startup-window``."""
    flags = [
        f"--user-data-dir={user_data_dir}",
        "--remote-debugging-port=0",
        "--remote-debugging-address=127.0.0.1",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        *(_extension_flags(extensions) if extensions else ["--disable-extensions"]),
        "--disable-breakpad",
        "--disable-client-side-phishing-detection",
        "--disable-domain-reliability",
        # The omnibox popup WebUIs are preloaded renderers (about 80 MB per window) that headless
        # never shows; the rest would reach out to Google at start-up.
        "--disable-features=" + ",".join(DISABLED_FEATURES),
        "--disable-quic",
        "--disable-dev-shm-usage",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        "--mute-audio",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
    ]
    if headless_shell:
        flags.append("--disable-gpu")
    elif headless:
        flags += ["--headless=new", "--disable-gpu"]
    # The sandbox needs user namespaces that root in a container does not get; elsewhere keep it.
    if os.geteuid() == 0 or os.environ.get("WEBHAND_NO_SANDBOX") == "1":
        flags.append("--no-sandbox")
    flags = merged_features(flags + list(extra or []))
    # No first window: every session opens its own context and pages, and a window would cost a
    # renderer and its omnibox UI for nothing.
    if not headless_shell:
        flags.append("--no-startup-window")
    return flags


def _extension_flags(extensions: list[str]) -> list[str]:
    # The extensions are loaded over CDP once the browser is up (load_extensions): --load-extension
    # cannot enable them in the browser contexts sessions run in (incognito-like), loadUnpacked can.
    # The Extensions domain needs unsafe extension debugging on; that adds no way in: the DevTools
    # endpoint is webhand's alone (127.0.0.1, a port of its own).
    return ["--enable-unsafe-extension-debugging", "--disable-component-extensions-with-background-pages"]


async def load_extensions(ws_endpoint: str, folders: list[str]) -> None:
    """Load each unpacked extension into the browser at ``ws_endpoint``, enabled in every context
    (``Extensions.loadUnpacked``); the caller caps the time."""
    from websockets.asyncio.client import connect

    async with connect(ws_endpoint, max_size=1 << 20, compression=None) as socket:
        for number, folder in enumerate(folders, 1):
            await socket.send(json.dumps({"id": number, "method": "Extensions.loadUnpacked",
                                          "params": {"path": folder, "enableInIncognito": True}}))
            while (reply := json.loads(await socket.recv())).get("id") != number:
                pass  # an event: not the answer
            if "error" in reply:
                raise BrowserLaunchFailed(f"Chromium refused the extension in {folder}: "
                                          f"{str(reply['error'].get('message'))[:300]}",
                                          "Fix its manifest.json (chrome://extensions, Load unpacked, shows the same "
                                          "error), or remove it from extensions.")


# ---------------------------------------------------------------------------------------------
# PID registry


def _registry_dir() -> Path:
    return Path(private_folder(runtime_dir() / "browsers", "Set XDG_RUNTIME_DIR (or XDG_STATE_HOME) to a folder of your own."))


def _process_start_time(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


_OWN_START = _process_start_time(os.getpid())


@dataclass(frozen=True)
class RegistryEntry:
    pid: int
    start_time: float
    user_data_dir: str
    owner_pid: int
    owner_start_time: float | None
    #: The temporary folder that goes with the browser when ``user_data_dir`` is a profile kept on
    #: disk; None when the user-data dir is itself that temporary folder.
    scratch_dir: str | None = None

    @property
    def temporary_dir(self) -> str:
        """What is removed with the browser, and what its processes' command lines name."""
        return self.scratch_dir or self.user_data_dir

    @property
    def path(self) -> Path:
        return _registry_dir() / f"{self.pid}.json"

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.__dict__))
        tmp.replace(self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def _same_process(pid: int, start_time: float | None) -> bool:
    return start_time is not None and _process_start_time(pid) == start_time


def reap_orphans() -> list[int]:
    """Kill browsers that a dead webhand process started and left behind; return their pids.

    A browser is killed only when its registry entry's owner is gone, and the live process
    has the recorded start time and the recorded user-data dir on its command line.
    """
    reaped: list[int] = []
    for file in _registry_dir().glob("*.json"):
        try:
            entry = RegistryEntry(**json.loads(file.read_text()))
        except (OSError, ValueError, TypeError):
            file.unlink(missing_ok=True)
            continue
        if _same_process(entry.owner_pid, entry.owner_start_time):
            continue  # its owner is alive and will close it
        for process in _group_members(entry):
            try:
                process.kill()
                reaped.append(process.pid)
            except psutil.NoSuchProcess:
                pass
        shutil.rmtree(entry.temporary_dir, ignore_errors=True)  # never a profile's own folder
        file.unlink(missing_ok=True)
    return reaped


def _naming(user_data_dir: str) -> list[psutil.Process]:
    """Live processes whose command line names the (unique, mkdtemp-made) user-data dir: the
    browser's own, and the crash handlers that left its process group."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if any(user_data_dir in arg for arg in process.info["cmdline"] or []):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def _kill_outside_group(user_data_dir: str) -> None:
    for process in _naming(user_data_dir):
        try:
            process.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass


def _group_members(entry: RegistryEntry) -> list[psutil.Process]:
    """Live processes of the entry's group that carry its user-data dir (the leader may be gone)."""
    members = []
    marker = f"--user-data-dir={entry.user_data_dir}"
    for process in psutil.process_iter(["pid", "cmdline"]):
        try:
            if os.getpgid(process.pid) != entry.pid:
                continue
            if process.pid == entry.pid and process.create_time() != entry.start_time:
                continue
            cmdline = process.info["cmdline"] or []
            # Renderers do not repeat --user-data-dir; their group leader did, which we checked.
            if (marker in cmdline or _same_process(entry.pid, entry.start_time)
                    or _child_of_firefox(process, cmdline, entry)):
                members.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError, PermissionError):
            continue
    return members + [p for p in _naming(entry.temporary_dir) if p not in members]


def _child_of_firefox(process: psutil.Process, cmdline: list[str], entry: RegistryEntry) -> bool:
    """A Firefox helper (content, socket, RDD, forkserver …) of the entry's browser whose main
    process is already gone: in its group, started after it, and naming it ``-parentPid``. Such a
    helper repeats no profile path; it usually exits within a second of its parent, but the
    reaper does not count on that."""
    try:
        named = cmdline[cmdline.index("-parentPid") + 1] == str(entry.pid)
    except (ValueError, IndexError):
        return False
    return named and process.create_time() >= entry.start_time - 1


# ---------------------------------------------------------------------------------------------
# One launched browser

#: The longest path of a Unix socket (sun_path holds 108 bytes with the final NUL). Chromium
#: aborts when its singleton socket's path is longer.
_MAX_SOCKET_PATH = 107
#: What Chromium adds to TMPDIR for its singleton socket.
_SINGLETON_SOCKET = "/org.chromium.Chromium.XXXXXX/SingletonSocket"


def _new_user_data_dir() -> str:
    """A fresh user-data dir, with the folder Chromium gets as TMPDIR inside it, so that removing
    the one dir (at close, or the reaper after a crash) leaves nothing of the browser on disk.
    It is a random-named 0700 dir (``mkdtemp``) in the temporary folder, which is checked to be
    one that nobody else can rename things in (sticky when shared); that keeps the singleton
    socket's path short enough for Chromium."""
    base = tempfile.gettempdir()
    user_data_dir = tempfile.mkdtemp(prefix=USER_DATA_PREFIX, dir=base)
    try:
        private_folder(user_data_dir, "Set TMPDIR to a folder of your own, or a shared one that is sticky like /tmp.",
                       create=False)
        temporary = os.path.join(user_data_dir, "tmp")
        if len(os.fsencode(temporary + _SINGLETON_SOCKET)) > _MAX_SOCKET_PATH:
            raise BrowserLaunchFailed(f"The temporary folder {base} has too long a path: Chromium's socket in it would "
                                      f"be over the {_MAX_SOCKET_PATH} bytes a socket path may have.",
                                      "Set TMPDIR to a shorter folder, e.g. /tmp.")
        os.mkdir(temporary, 0o700)
    except BaseException:
        shutil.rmtree(user_data_dir, ignore_errors=True)
        raise
    return user_data_dir



def _merge_preferences(user_data_dir: str, preferences: dict[str, object]) -> None:
    """Seed ``preferences`` into the profile's Preferences file, keeping what a kept profile has there."""
    path = os.path.join(user_data_dir, "Default", "Preferences")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    current: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        with open(path, encoding="utf-8") as file:
            loaded = json.load(file)
        current = loaded if isinstance(loaded, dict) else {}
    for key, value in preferences.items():
        if isinstance(value, dict) and isinstance(current.get(key), dict):
            current[key] = {**current[key], **value}
        else:
            current[key] = value
    with open(path, "w", encoding="utf-8") as file:
        json.dump(current, file)


def _die_with_parent() -> None:
    """Runs in the child before exec: SIGKILL it when the launching thread dies (Linux only)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass


#: Profile preferences of a browser launched under an origin policy. WebRTC would otherwise send
#: UDP (STUN, TURN) straight to any address a page names, around every proxy; with this it only
#: uses connections through the context's policy proxy. Chromium honours it as a preference only:
#: the --force-webrtc-ip-handling-policy switch is ignored (measured on Chromium 156).
POLICY_PREFERENCES = {"webrtc": {"ip_handling_policy": "disable_non_proxied_udp"}}


def _shell_switches(preferences: dict[str, object]) -> list[str]:
    """The headless shell reads no such preference from its profile (its WebRTC sent UDP straight to
    the address a page named, measured on Chromium 156), but it takes the switch the full browser
    ignores: the same policy, given the shell's way."""
    webrtc = preferences.get("webrtc")
    policy = webrtc.get("ip_handling_policy") if isinstance(webrtc, dict) else None
    return [f"--force-webrtc-ip-handling-policy={policy}"] if policy else []


def launch_plan(settings: Settings, *, policy_active: bool) -> dict[str, Any]:
    """How a browser for these settings is launched, as data (``ChromeProcess.launch``'s
    arguments): both drivers launch from it, and a stdio server remembers it (launch_memo.py)."""
    from webhand.engine.stealth import LAUNCH_FLAGS as STEALTH_FLAGS

    return {"executable": choose_chromium(settings).executable, "headless": settings.headless,
            "width": settings.viewport.width, "height": settings.viewport.height,
            "extra_args": settings.extra_args + (STEALTH_FLAGS if settings.stealth else [])
            + ([PAGE_TOOLS_FLAG] if settings.page_tools else []),
            "timeout": settings.launch_timeout, "preferences": POLICY_PREFERENCES if policy_active else None,
            "extensions": [os.path.realpath(path) for path in settings.extensions]}


async def discard_launch(starting: asyncio.Future[ChromeProcess]) -> None:
    """End a browser launched ahead that no one will take: cancelled mid-launch, the launch kills
    its own half-started process group; launched, it is closed."""
    if not starting.done():
        starting.cancel()
    try:
        chrome = await starting
    except BaseException:  # noqa: BLE001 - cancelled, or failed to launch: nothing is left running
        return
    await chrome.close()


@dataclass
class ChromeProcess:
    """A Chromium that webhand launched and owns; ``close`` kills its whole process group."""

    process: asyncio.subprocess.Process
    ws_endpoint: str
    user_data_dir: str
    entry: RegistryEntry
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=30))
    _drain: asyncio.Task[None] | None = None
    ended: bool = False  # closed or killed: its pid is no longer ours to signal

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def scratch_dir(self) -> str:
        """The temporary folder removed with this browser (its user-data dir, unless that is a profile)."""
        return self.entry.temporary_dir

    @property
    def keeps_profile(self) -> bool:
        return self.entry.scratch_dir is not None

    @classmethod
    async def launch_planned(cls, plan: dict[str, Any], *, spawned: asyncio.Event | None = None,
                             profile_dir: str | None = None) -> "ChromeProcess":
        """Launch from a ``launch_plan`` (on the profile folder ``profile_dir``, if given)."""
        return await cls.launch(spawned=spawned, profile_dir=profile_dir, **plan)

    @classmethod
    async def launch(cls, executable: str, *, headless: bool = True, width: int = 1280, height: int = 720,
                     extra_args: list[str] | None = None, timeout: float = 30.0,
                     preferences: dict[str, object] | None = None, spawned: asyncio.Event | None = None,
                     profile_dir: str | None = None, extensions: list[str] | None = None) -> "ChromeProcess":
        """Start Chromium; ``preferences`` seed its profile (settings that have no command-line switch).
        ``spawned`` is set once the process exists (or could not start), before it boots.
        ``profile_dir``: use this folder as the user-data dir and keep it on close (a named profile,
        whose lock the caller holds); else a fresh temporary one."""
        try:
            return await cls._launch(executable, headless, width, height, extra_args, timeout, preferences, spawned,
                                     profile_dir, extensions)
        finally:
            if spawned is not None:
                spawned.set()

    @classmethod
    async def _launch(cls, executable: str, headless: bool, width: int, height: int, extra_args: list[str] | None,
                      timeout: float, preferences: dict[str, object] | None,
                      spawned: asyncio.Event | None, profile_dir: str | None,
                      extensions: list[str] | None = None) -> "ChromeProcess":
        scratch = _new_user_data_dir()
        user_data_dir = profile_dir or scratch
        if preferences:
            _merge_preferences(user_data_dir, preferences)
        shell = is_headless_shell(executable)
        args = launch_flags(user_data_dir, headless=headless, width=width, height=height, extra=extra_args,
                            extensions=extensions, headless_shell=shell)
        if shell and preferences:
            args += _shell_switches(preferences)
        # Crashpad's handler double-forks out of our process group. Pointing the config home
        # into the user-data dir puts that dir on the handler's command line (--database=…),
        # which is how close() and the reaper recognise it as ours.
        # Chromium makes its singleton socket's folder (org.chromium.Chromium.*) in TMPDIR, and a
        # killed browser leaves it there: inside the user-data dir, it goes with that dir.
        # A profile kept on disk gets these in its temporary folder instead: what a killed browser
        # leaves there is removed with it, and the socket's path stays short.
        env = {**os.environ, "XDG_CONFIG_HOME": os.path.join(scratch, "config"), "TMPDIR": os.path.join(scratch, "tmp")}
        process, ws, entry, tail = await spawn_registered(executable, args, env, scratch=scratch,
                                                          user_data_dir=user_data_dir, keeps_profile=bool(profile_dir),
                                                          timeout=timeout, spawned=spawned, endpoint=_DEVTOOLS_LINE)
        chrome = cls(process, ws, user_data_dir, entry, tail)
        chrome._drain = asyncio.create_task(_drain(process, tail))
        if extensions:
            try:
                await asyncio.wait_for(load_extensions(ws, extensions), timeout)
            except BaseException as error:  # cancellation too
                await asyncio.shield(chrome.close())
                if isinstance(error, (OSError, ValueError, WebSocketException)):
                    raise BrowserLaunchFailed(f"Loading the extensions into Chromium failed: {error}",
                                              "Run `webhand doctor` to see what is wrong.") from None
                if isinstance(error, asyncio.TimeoutError):
                    raise BrowserLaunchFailed(f"Loading the extensions into Chromium did not finish within "
                                              f"{timeout:.0f} s.", "Raise launch_timeout on a slow machine.") from None
                raise
        return chrome

    @property
    def alive(self) -> bool:
        """False as soon as the browser died, even before asyncio has reaped it (a zombie)."""
        if self.process.returncode is not None:
            return False
        try:  # our child: one syscall that asks whether it has exited, without reaping it (WNOWAIT)
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
        except ChildProcessError:  # reaped meanwhile, or not our child after all: ask /proc (a third of a ms)
            pass
        try:
            return psutil.Process(self.pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    async def close(self) -> None:
        """Kill the whole process group, wait for it, remove the temporary user-data dir (never a
        profile's) and the registry entry. A browser on a profile is first let shut down by itself,
        capped, so that what it holds in memory (cookies, storage) reaches the disk."""
        if self.keeps_profile and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGTERM)  # the main process only: it closes its helpers in order
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.process.wait(), PROFILE_CLOSE_GRACE_SECONDS)
        await _kill_group(self.process)
        _kill_outside_group(self.scratch_dir)
        if self._drain:
            self._drain.cancel()
        self.entry.remove()
        shutil.rmtree(self.scratch_dir, ignore_errors=True)
        self.ended = True

    def kill_now(self) -> None:
        """Synchronous last resort (interpreter exit, a shutdown that overran): SIGKILL the group, clean up."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _kill_outside_group(self.scratch_dir)  # its stderr drain ends by itself, at the pipe's end
        self.entry.remove()
        shutil.rmtree(self.scratch_dir, ignore_errors=True)
        self.ended = True


async def spawn_registered(executable: str, args: list[str], env: dict[str, str], *, scratch: str, user_data_dir: str,
                           keeps_profile: bool, timeout: float, spawned: asyncio.Event | None, endpoint: re.Pattern[str],
                           kind: str = "DevTools") -> tuple[asyncio.subprocess.Process, str, RegistryEntry, deque[str]]:
    """Start a browser in its own process group, write its PID registry entry (the reaper's), and
    read the endpoint its stderr announces (``endpoint``'s first group). Any browser webhand
    launches goes through here (Chromium, and Firefox in engine/bidi/firefox.py): a launch that
    fails or is cancelled kills the half-started group and removes ``scratch``."""
    try:
        process = await asyncio.create_subprocess_exec(
            executable, *args, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
    except OSError as error:
        shutil.rmtree(scratch, ignore_errors=True)
        raise BrowserLaunchFailed(f"Could not start {executable}: {error}.",
                                  "Check that the path is a browser binary (webhand doctor tells).") from error
    if spawned is not None:
        spawned.set()
    start_time = _process_start_time(process.pid) or time.time()
    entry = RegistryEntry(process.pid, start_time, user_data_dir, os.getpid(), _OWN_START,
                          scratch if keeps_profile else None)
    entry.save()
    tail: deque[str] = deque(maxlen=30)
    try:
        ws = await asyncio.wait_for(_read_devtools_endpoint(process, tail, endpoint), timeout)
    except BaseException as error:  # cancellation too: a half-launched browser must not survive
        await asyncio.shield(_kill_group(process))
        entry.remove()
        shutil.rmtree(scratch, ignore_errors=True)
        if not isinstance(error, (asyncio.TimeoutError, BrowserLaunchFailed)):
            raise
        detail = " | ".join(tail) or "no output"
        if isinstance(error, BrowserLaunchFailed):
            raise BrowserLaunchFailed(f"{executable} exited before it was ready: {detail}",
                                      "Run `webhand doctor` to see what is wrong.") from None
        raise BrowserLaunchFailed(f"{executable} did not open its {kind} endpoint within {timeout:.0f} s: {detail}",
                                  "Run `webhand doctor`; raise launch_timeout on a slow machine.") from None
    return process, ws, entry, tail


class LaunchedBrowsers:
    """The browsers one engine launched and nobody has closed yet. Shutdown kills these by pid
    when closing them overran its cap, or when no session or reserve held them any more: a
    close that hung on the browser's answer, or was cancelled midway, never strands one."""

    def __init__(self) -> None:
        self._chromes: list[ChromeProcess] = []

    def add(self, chrome: ChromeProcess) -> ChromeProcess:
        self._chromes = [c for c in self._chromes if not c.ended] + [chrome]
        return chrome

    def add_when_launched(self, starting: asyncio.Future[ChromeProcess]) -> None:
        """Track a browser launched elsewhere (the stdio server starts one before the engine exists)."""
        starting.add_done_callback(lambda done: done.cancelled() or done.exception() or self.add(done.result()))

    def kill_now(self) -> list[int]:
        """SIGKILL every one still running (its whole group, and its crash handler); their pids."""
        left, self._chromes = [c for c in self._chromes if not c.ended], []
        for chrome in left:
            chrome.kill_now()
        return [chrome.pid for chrome in left]


async def _read_devtools_endpoint(process: asyncio.subprocess.Process, tail: deque[str],
                                  endpoint: re.Pattern[str] = _DEVTOOLS_LINE) -> str:
    assert process.stderr is not None
    while True:
        line = await process.stderr.readline()
        if not line:
            raise BrowserLaunchFailed("browser exited")
        text = line.decode(errors="replace").strip()
        tail.append(text)
        match = endpoint.search(text)
        if match:
            return match.group(1)


async def _drain(process: asyncio.subprocess.Process, tail: deque[str]) -> None:
    """Keep reading stderr so that a chatty browser never blocks on a full pipe."""
    assert process.stderr is not None
    while line := await process.stderr.readline():
        tail.append(line.decode(errors="replace").strip())


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the group, wait for the leader (capped), then SIGKILL whatever of the group is left."""
    pgid = process.pid
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        await asyncio.wait_for(process.wait(), KILL_GRACE_SECONDS)
    except asyncio.TimeoutError:
        pass
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if process.returncode is None:
        try:
            await asyncio.wait_for(process.wait(), KILL_GRACE_SECONDS)
        except asyncio.TimeoutError:
            pass
