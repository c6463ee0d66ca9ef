"""A person's Chromium for the extension bridge's tests: started as a person's browser would be (its
own profile, no --remote-debugging-port), with a copy of the shipped extension loaded unpacked.

The copy has a test-only ``test-config.json`` (the shipped folder has none) that stands in for the
person: it pairs with the relay's port and token and shares every tab whose URL contains
"bridge_shared" when it loads. A second tab, never shared, shows a page of another site
(``localhost``, where the shared tab is on ``127.0.0.1``) with a cookie of its own, the "mail
session" no one shared.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from webhand.config import Settings
from webhand.security.pairing import extension_folder, pairing_token

CHROMIUM = "/usr/lib/chromium/chromium"
#: The unshared site's cookie: nothing read through the bridge may contain it.
UNSHARED_COOKIE = "mail_session_of_an_unshared_site"


@dataclass
class PersonsBrowser:
    chrome: subprocess.Popen[bytes]
    port: int       # the relay's
    token: str      # the pairing token, as the token file holds it
    settings: Settings


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def until(check, timeout: float = 15.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.1)


@contextmanager
def persons_browser(root: Path, site) -> Iterator[PersonsBrowser]:
    config_home = root / "config"
    previous = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(config_home)
    token = pairing_token()
    assert (config_home / "webhand" / "extension-token").stat().st_mode & 0o777 == 0o600
    port = free_port()
    extension = root / "extension"
    shutil.copytree(extension_folder(), extension)
    assert not (extension_folder() / "test-config.json").exists()  # the shipped extension has no switch on
    (extension / "test-config.json").write_text(json.dumps({"port": port, "token": token,
                                                            "autoShareUrl": "bridge_shared", "retryMs": 200,
                                                            "openTabs": [site.url("bridge_shared.html")]}))
    unshared = site.url("bridge_private.html").replace("127.0.0.1", "localhost")
    chrome = subprocess.Popen([CHROMIUM, "--headless=new", f"--user-data-dir={root / 'profile'}", "--no-sandbox",
                               "--no-first-run", f"--load-extension={extension}",
                               f"--disable-extensions-except={extension}", unshared],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**os.environ, "TMPDIR": str(root)})  # its singleton folder stays in root
    settings = Settings(extension_bridge=True, extension_port=port, output_dir=str(root / "out"), warm_reserve=False,
                        capabilities=["all"])
    try:
        yield PersonsBrowser(chrome, port, token, settings)
    finally:
        if chrome.poll() is None:
            os.killpg(chrome.pid, signal.SIGKILL)
            chrome.wait(10)
        if previous is None:
            os.environ.pop("XDG_CONFIG_HOME", None)
        else:
            os.environ["XDG_CONFIG_HOME"] = previous


async def first_reply(context, tool: str, arguments: dict, tries: int = 80):
    """The first reply that is not an error: the extension connects when the relay listens (it
    retries every 200 ms in a test build), so the first calls may find no extension yet."""
    reply = None
    for _ in range(tries):
        reply = await context.call(tool, arguments)
        if not reply.is_error:
            return reply
        await asyncio.sleep(0.25)
    raise AssertionError(reply.text if reply else "no reply")
