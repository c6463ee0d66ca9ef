"""The browser extension's pairing: where the extension is, its fixed id (so its origin is known),
and the token it must present to webhand's relay.

The token is made once, kept in a file of webhand's private config folder (0700, owner-checked by
``private_folder``) with mode 0600, and checked there each time it is read: another local user can
neither read it nor put one of their own in its place. The person copies it into the extension's
popup once (`webhand extension pair` prints it).

The extension's id is fixed by the public key in its manifest (``key``), so the relay accepts the
one origin ``chrome-extension://<id>`` wherever the folder was loaded from.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from pathlib import Path

from webhand.errors import FileNotWritable
from webhand.security.locations import private_folder, user_config_dir

#: The extension's id: the first 128 bits of SHA-256 of its manifest's public key, as letters a-p.
EXTENSION_ID = "ecocjeeiobpheppecncodcgfbekbmcho"
EXTENSION_ORIGIN = f"chrome-extension://{EXTENSION_ID}"
TOKEN_FILE_NAME = "extension-token"
_HINT = "Set XDG_CONFIG_HOME to a folder of your own that only you can write."


def extension_folder() -> Path:
    """The unpacked extension shipped in the package (for chrome://extensions, "Load unpacked")."""
    return Path(__file__).resolve().parent.parent / "extension"


def token_path() -> Path:
    return Path(private_folder(user_config_dir(), _HINT)) / TOKEN_FILE_NAME


def pairing_token() -> str:
    """The pairing token: read from its file, made (0600) on first use."""
    path = token_path()
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read(path)
    token = secrets.token_urlsafe(32)
    with os.fdopen(descriptor, "w") as file:
        file.write(token + "\n")
    return token


def _read(path: Path) -> str:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        raise FileNotWritable(f"The extension's pairing token {path} cannot be read ({error.strerror or error}).",
                              f"Delete {path} to make a new one, then pair the extension again.") from None
    with os.fdopen(descriptor) as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise FileNotWritable(f"The extension's pairing token {path} is not a private file of yours (mode "
                                  f"{stat.S_IMODE(info.st_mode):o}): someone else may know it.",
                                  f"Delete {path} to make a new one, then pair the extension again.")
        token = file.read(200).strip()
    if len(token) < 20:
        raise FileNotWritable(f"The extension's pairing token in {path} is too short to be one webhand made.",
                              f"Delete {path} to make a new one, then pair the extension again.")
    return token


def token_matches(offered: object, token: str) -> bool:
    """Constant-time comparison: how long it takes says nothing about how much of it was right."""
    return isinstance(offered, str) and hmac.compare_digest(offered.encode(), token.encode())
