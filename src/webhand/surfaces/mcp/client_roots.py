"""The MCP client's roots as the folders a conversation's file tools may use.

When the client declares the ``roots`` capability, webhand asks for its roots (``roots/list``,
through the SDK's ``ServerSession.list_roots``) before the first tool call, and again after a
``notifications/roots/list_changed``. They narrow the configured ``roots`` (a path must lie in
both); the conversation's own folder stays reachable (``ConversationFiles.reaches``). A client
that fails to answer gets no roots at all: the narrower choice.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import mcp_types as types
from mcp.shared.exceptions import MCPDeprecationWarning

from webhand.conversation_files import ConversationFiles

log = logging.getLogger("webhand")

#: How long a client may take to list its roots.
LIST_TIMEOUT = 10.0
_ROOTS = types.ClientCapabilities(roots=types.RootsCapability())


def declares_roots(session: Any) -> bool:
    return bool(session.check_client_capability(_ROOTS))


def folder_of(uri: str) -> Path | None:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    if not path.startswith("/") or "\x00" in path:
        return None
    return Path(path).resolve()


async def refresh(session: Any, files: ConversationFiles) -> None:
    """Bring ``files.client_roots`` up to date with what the client says, when it may have changed."""
    if files.client_roots_current or not declares_roots(session):
        return
    files.client_roots_current = True
    try:
        import anyio

        with anyio.fail_after(LIST_TIMEOUT), warnings.catch_warnings():
            # Deprecated in the 2026 per-request protocol only; webhand speaks the handshake ones.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            result = await session.list_roots()
    except Exception as error:  # noqa: BLE001 - whatever went wrong, no roots is the safe answer
        log.warning("the MCP client did not list its roots (%s): file tools keep to the conversation's own folder", error)
        files.client_roots = []
        return
    folders = [folder_of(str(root.uri)) for root in result.roots]
    files.client_roots = [f for f in folders if f is not None]
    log.info("the MCP client's roots: %s", ", ".join(map(str, files.client_roots)) or "none")
