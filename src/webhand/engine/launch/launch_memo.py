"""How the last ``webhand mcp`` started with the same command line launched its browser.

A host starts ``webhand mcp`` afresh for every conversation, always the same way. Its browser can
only be launched once the settings are known, and they cost about a fifth of a second of CPU to
load (pydantic, the config models, the host). So a stdio server remembers its launch (a "plan":
the browser binary and what ``ChromeProcess.launch`` was given), keyed by what it was started
with (the command line, the working directory, the user and webhand's version), and the next
server started the same way launches that browser before its settings load.

A plan is only a guess, checked before use: once the settings are loaded, the engine's own plan
is compared with it, and a browser launched from a plan that differs (the config file changed,
say) is killed at once and the right one launched. A plan is read only from a file of this user's
that nobody else can write, as the config file is. Standard library only: it runs before anything
heavy is imported.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from typing import Any

from webhand import __version__
from webhand.errors import FileNotWritable
from webhand.security.locations import private_folder

log = logging.getLogger("webhand")

#: A plan is what ``ChromeProcess.launch`` takes, with JSON values (``chrome.launch_plan``).
Plan = dict[str, Any]
PLAN_KEYS = frozenset({"executable", "headless", "width", "height", "extra_args", "timeout", "preferences", "extensions"})


def memo_key(argv: list[str], cwd: str, env: dict[str, str]) -> str:
    """Which memo a start reads: one per command line, directory and user. The variables and the
    config file are left out on purpose: the check after the settings load covers them, and a
    host that gives each conversation its own ``WEBHAND_OUTPUT_DIR`` must still find its memo."""
    facts = [__version__, argv, cwd, env.get("HOME", ""), env.get("XDG_CONFIG_HOME", "")]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:32]


def memo_dir(env: dict[str, str] | None = None) -> str:
    env = os.environ if env is None else env  # type: ignore[assignment]
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "webhand", "launches")


def _checked(directory: str, *, create: bool) -> str | None:
    """``directory`` if it is a private folder of this user's (``locations.private_folder``): a
    folder someone else could change could hand us a plan, a program to run."""
    try:
        return private_folder(directory, "", create=create)
    except FileNotWritable as error:
        if create or os.path.lexists(directory):
            log.warning("not using the launch memo: %s", error.message)
        return None


def recall(key: str, *, directory: str | None = None) -> Plan | None:
    """The plan remembered for ``key``; None when there is none, or its file is not this user's
    alone (a plan names a program to run)."""
    folder = _checked(directory or memo_dir(), create=False)
    if folder is None:
        return None
    path = os.path.join(folder, f"{key}.json")
    try:
        with open(path, "rb") as file:
            status = os.fstat(file.fileno())
            if status.st_uid != os.getuid() or status.st_mode & 0o022:
                log.warning("ignoring the launch memo %s: it is not this user's alone", path)
                return None
            plan = json.loads(file.read())
    except (OSError, ValueError):
        return None
    if not (isinstance(plan, dict) and set(plan) == PLAN_KEYS and isinstance(plan["executable"], str)):
        return None
    return plan


def keepable(plan: Plan | None) -> bool:
    """Whether ``plan`` may be written down: not when it carries browser flags of the user's
    (``extra_args``), which can hold a credential (a proxy's, say) that must not land in a second
    file. webhand's own flags (stealth's, page tools') are fine."""
    from webhand.engine.launch.chrome import PAGE_TOOLS_FLAG
    from webhand.engine.stealth import LAUNCH_FLAGS

    return plan is not None and all(flag in (*LAUNCH_FLAGS, PAGE_TOOLS_FLAG) for flag in plan.get("extra_args", []))


def remember(key: str, plan: Plan | None, *, directory: str | None = None) -> None:
    """Keep ``plan`` for the next start with ``key``; forget what was kept when there is no plan
    or it must not be written down (``keepable``). Never fails the caller."""
    directory = directory or memo_dir()
    path = os.path.join(directory, f"{key}.json")
    try:
        if not keepable(plan):
            if os.path.exists(path):
                os.unlink(path)
            return
        if _checked(directory, create=True) is None:
            return
        handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")  # 0600
        with os.fdopen(handle, "w") as file:
            json.dump(plan, file)
        os.replace(temporary, path)
    except OSError as error:
        log.debug("could not keep the launch memo %s: %s", path, error)
