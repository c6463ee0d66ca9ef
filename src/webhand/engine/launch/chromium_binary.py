"""Which Chromium binary a local launch runs, and why: the headless shell or the full browser.

Chromium comes in two builds from the same source. The full browser (``chromium``, Chrome) runs
its whole desktop UI even with ``--headless=new``: every tab gets a Browser window, its tab strip
and omnibox models. The headless shell (``chromium-headless-shell``, Debian's package of that name;
Playwright's default for headless) is the same Blink and V8 without that UI: it costs
``SHELL_CPU_SHARE`` (measured on Chromium 156 with bench/conversation_cpu.py: 153 ms of browser CPU per
new conversation, against 378 ms). What it lacks: a window (it is headless by nature), extensions, and the look of a desktop
Chrome (its user agent, plugins and WebGL say "headless shell").

So, like Playwright, a headless launch prefers the shell when it is installed, and the full browser
is used when the settings need what only it has (``Settings.needs_full_chromium``), when the user named a
binary, or when ``chromium_flavor = "full"``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

#: What the headless shell saves, in the words doctor, the README and `make demo` all use (one figure:
#: bench/conversation_cpu.py, full against headless-shell, 20 conversations).
SHELL_CPU_SHARE = "about 40% of the CPU a conversation costs on the full browser"
from typing import TYPE_CHECKING, Literal

from webhand.errors import BrowserNotFound

if TYPE_CHECKING:
    from collections.abc import Sequence

    from webhand.config import Settings

Flavor = Literal["full", "headless-shell"]

CANDIDATE_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "msedge")
CANDIDATE_PATHS = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/opt/google/chrome/chrome")
#: The headless shell: Debian's package, and the name Google's Chrome for Testing and Playwright give it.
SHELL_NAMES = ("chromium-headless-shell", "chrome-headless-shell", "headless_shell")
#: Debian's /usr/bin/chromium-headless-shell is a script that execs this one.
SHELL_PATHS = ("/usr/lib/chromium/chromium-headless-shell",)
#: How the CLI, the config file and the environment set the choice.
FLAVOR_SETTING = "chromium_flavor in webhand.toml, WEBHAND_CHROMIUM_FLAVOR or --chromium-flavor"


@dataclass(frozen=True)
class ChromiumChoice:
    """The binary a local launch runs, which build it is, and why it was picked (``webhand doctor`` says it)."""

    executable: str
    flavor: Flavor
    reason: str


def is_headless_shell(path: str) -> bool:
    """Whether ``path`` is a headless-shell build, known by its file name (every build of it is named so)."""
    name = os.path.basename(path).lower()
    return "headless-shell" in name or "headless_shell" in name


def choose_chromium(settings: Settings) -> ChromiumChoice:
    """The binary for a browser launched here with ``settings``.

    A binary the user named (``executable_path``, else ``WEBHAND_CHROME``) is always the one run.
    Else ``chromium_flavor`` decides: "auto" takes the headless shell when it is installed and the
    settings need nothing only the full browser has, "full" never takes it, "headless-shell"
    requires it."""
    for label, path in (("executable_path", settings.executable_path), ("WEBHAND_CHROME", os.environ.get("WEBHAND_CHROME"))):
        if path and _is_executable(path):  # one that is not is reported by doctor, and passed over like find_chromium does
            return ChromiumChoice(path, "headless-shell" if is_headless_shell(path) else "full", f"{label} names it")
    wanted = settings.chromium_flavor
    needs_full = settings.needs_full_chromium()
    if wanted == "full":
        return ChromiumChoice(find_chromium(), "full", "chromium_flavor = \"full\"")
    if wanted == "headless-shell":
        if needs_full:  # the settings check refuses this pairing; a copy changed later could still carry it
            raise BrowserNotFound(f"chromium_flavor = \"headless-shell\" cannot serve these settings: {needs_full}.",
                                  "Set chromium_flavor to \"auto\" or \"full\".")
        shell = find_headless_shell()
        if shell is None:
            raise BrowserNotFound("chromium_flavor = \"headless-shell\" but no Chromium headless shell was found. Tried: "
                                  + ", ".join(SHELL_NAMES + SHELL_PATHS) + ".",
                                  "Install it (Debian/Ubuntu: `apt-get install chromium-headless-shell`), or set "
                                  "chromium_flavor to \"auto\".")
        return ChromiumChoice(shell, "headless-shell", "chromium_flavor = \"headless-shell\"")
    if needs_full:
        return ChromiumChoice(find_chromium(), "full", needs_full)
    shell = find_headless_shell()
    if shell is None:
        return ChromiumChoice(find_chromium(), "full", "the headless shell is not installed (Debian/Ubuntu: "
                              f"`apt-get install chromium-headless-shell`: {SHELL_CPU_SHARE})")
    return ChromiumChoice(shell, "headless-shell", f"headless and installed: {SHELL_CPU_SHARE} "
                          f"(set {FLAVOR_SETTING} to \"full\" to use the full one)")


def find_headless_shell() -> str | None:
    """The headless shell's binary, or None when it is not installed."""
    return _installed(SHELL_NAMES, SHELL_PATHS)


def find_chromium(configured: str | None = None) -> str:
    """The full browser's binary: the configured path, ``WEBHAND_CHROME``, then common names and paths."""
    tried: list[str] = []
    for label, path in (("configured executable_path", configured), ("WEBHAND_CHROME", os.environ.get("WEBHAND_CHROME"))):
        if path:
            if _is_executable(path):
                return path
            tried.append(f"{path} ({label})")
    found = _installed(CANDIDATE_NAMES, CANDIDATE_PATHS, tried)
    if found:
        return found
    raise BrowserNotFound(
        "No Chromium or Chrome was found. Tried: " + ", ".join(tried) + ".",
        "Install one (Debian/Ubuntu: `apt-get install chromium`) or set WEBHAND_CHROME to the binary's path.",
    )


def _installed(names: Sequence[str], paths: Sequence[str], tried: list[str] | None = None) -> str | None:
    """The first of ``names`` on PATH that is a real binary, else the first of ``paths`` that is, else
    a wrapper script found on PATH; None when none is installed. ``tried`` gathers what was looked for.
    Debian's /usr/bin/chromium (and its shell's) is a shell script that sources /etc/chromium.d and
    adds its own flags (extensions, GPU rasterization) before exec'ing the real binary: the real one
    is launched instead."""
    wrapper = None
    for name in names:
        found = shutil.which(name)
        if found and not _is_script(found):
            return found
        wrapper = wrapper or found
        if tried is not None:
            tried.append(name)
    for path in paths:
        if _is_executable(path) and not _is_script(path):
            return path
        if tried is not None:
            tried.append(path)
    return wrapper


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _is_script(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(2) == b"#!"
    except OSError:
        return False
