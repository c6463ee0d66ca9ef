"""The browser extension's pairing: where the extension is, its fixed id (so its origin is known),
and the token it must present to webhand's relay.

The token is made once, kept in a file of webhand's private config folder (0700, owner-checked by
``private_folder``) with mode 0600, and checked there each time it is read: another local user can
neither read it nor put one of their own in its place. The person copies it into the extension's
popup once (`webhand extension pair` prints it).

The extension's id is fixed by the public key in its manifest (``key``), so the relay accepts the
one origin ``chrome-extension://<id>`` wherever the folder was loaded from.

The token itself never crosses the socket. Each side proves it knows it by an HMAC-SHA256, keyed
with the token, over a fresh nonce from each side and the prover's role (``proof``): the relay
proves itself first, so whatever listens on the port in webhand's place sees only the extension's
nonce, and the extension answers only a relay that proved itself (``service_worker.js`` does the
same with WebCrypto).
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import re
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
#: What both sides sign, so a proof made for one role, protocol or pair of nonces proves nothing else.
_PROOF_LABEL = "webhand-bridge-v2"
NONCE = re.compile(r"[0-9a-f]{64}")  # 32 random bytes, hex


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
    # O_NONBLOCK: a FIFO (or a device) put in its place must not hold the caller until someone writes
    # to it; O_NOFOLLOW: a symbolic link would let whoever controls its target choose the token.
    again = f"Delete {path} (it must be a regular file of yours, mode 0600, which webhand makes), then run " \
            "`webhand extension pair` and paste the new token into the extension's popup."
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        what = "is a symbolic link" if error.errno == errno.ELOOP else f"cannot be read ({error.strerror or error})"
        raise FileNotWritable(f"The extension's pairing token {path} {what}.", again) from None
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise FileNotWritable(f"The extension's pairing token {path} is not a regular file (a FIFO, device or "
                                  "folder was put in its place).", again)
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise FileNotWritable(f"The extension's pairing token {path} is not a private file of yours (mode "
                                  f"{stat.S_IMODE(info.st_mode):o}): someone else may know it.", again)
        token = file.read(200).decode("utf-8", "replace").strip()
    if len(token) < 20:
        raise FileNotWritable(f"The extension's pairing token in {path} is too short to be one webhand made.", again)
    return token


def new_nonce() -> str:
    return secrets.token_hex(32)


def proof(token: str, role: str, port: int, extension_nonce: str, relay_nonce: str) -> str:
    """What ``role`` ("relay" or "extension") sends to prove it knows ``token``, for this pair of
    nonces and this port only: hex HMAC-SHA256 of ``webhand-bridge-v2 <role> <port> <extension nonce>
    <relay nonce>``. The port is the one the extension dialled and the relay listens on: a process that
    holds the extension's port and passes the handshake through to a webhand listening on another port
    gets a proof for the wrong port, which the extension refuses (without it, such a go-between would
    be left holding an authenticated connection it could inject commands into)."""
    message = f"{_PROOF_LABEL} {role} {port} {extension_nonce} {relay_nonce}".encode()
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


def token_matches(offered: object, token: str) -> bool:
    """Constant-time comparison: how long it takes says nothing about how much of it was right."""
    return isinstance(offered, str) and hmac.compare_digest(offered.encode(), token.encode())
