"""Extensions (the ``extensions`` setting) in a Firefox webhand launches: each unpacked folder is
installed as a temporary add-on with BiDi's ``webExtension.install`` right after the launch, before
any session opens a page. A temporary add-on needs no signature and goes when Firefox exits, so
nothing is left in a profile. Firefox gives the add-on the ID its manifest names
(``browser_specific_settings.gecko.id``), else one of its own (``<hash>@temporary-addon``).

BiDi lists no add-ons, so ``browser_extensions`` lists the ones installed here: the name and
version from the manifest, the ID Firefox answered.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from webhand.engine.bidi.connection import BidiConnection, BidiError, guarded
from webhand.engine.driver import BrowserExtension
from webhand.errors import BrowserLaunchFailed

#: The most of a manifest.json read for its name and version.
_MANIFEST_CAP = 1 << 20
_FIX = ("Fix its manifest.json (Firefox's about:debugging, Load Temporary Add-on, shows the same error), "
        "or remove it from extensions.")


def _name_and_version(folder: Path) -> tuple[str, str]:
    try:
        with open(folder / "manifest.json", "rb") as file:
            manifest = json.loads(file.read(_MANIFEST_CAP))
    except (OSError, ValueError) as error:
        raise BrowserLaunchFailed(f"Could not read the extension's manifest in {folder}: {error}", _FIX) from None
    if not isinstance(manifest, dict):
        raise BrowserLaunchFailed(f"The extension's manifest in {folder} is not a JSON object.", _FIX)
    return str(manifest.get("name", ""))[:200], str(manifest.get("version", ""))[:40]


async def install(connection: BidiConnection, folders: Sequence[Path], timeout: float) -> list[BrowserExtension]:
    """Install each folder as a temporary add-on, in order; what was installed. A refusal raises
    ``BrowserLaunchFailed`` with Firefox's reason (the caller closes the browser)."""
    installed = []
    for folder in folders:
        name, version = _name_and_version(folder)
        try:
            async with guarded(f"Installing the extension in {folder}", timeout):
                answer = await connection.send("webExtension.install",
                                               {"extensionData": {"type": "path", "path": str(folder)}})
        except BidiError as error:
            raise BrowserLaunchFailed(f"Firefox refused the extension in {folder}: {error.message[:300]}", _FIX) from None
        installed.append(BrowserExtension(name, version, str(answer.get("extension", ""))[:200], str(folder), True))
    return installed
