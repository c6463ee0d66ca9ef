"""Answer a stdio client's ``initialize`` before the MCP SDK is loaded.

The official SDK takes about 0.6 s of CPU to import (its pydantic models for every protocol
version), and ``initialize`` needs none of it: its answer is fixed by the server's name, version,
instructions and capabilities. So ``webhand mcp`` over stdio answers the client's first line as
soon as it is read (``wire``), when it is a well-formed ``initialize``; the browser starts
meanwhile. The SDK, loaded later, is given the same line first, so it negotiates and records the
client's capabilities exactly as if it had answered, and its own answer, which must equal ours,
is dropped. Anything else as a first line (another method, params the SDK must refuse) is left
to the SDK untouched; a malformed message never gets here (``wire`` answers it). This module imports only the standard library.
"""

from __future__ import annotations

import json
from typing import Any

from webhand import __version__

INSTRUCTIONS = (
    "A real headless Chromium. Call browser_navigate, then browser_snapshot to see the page: elements you can act "
    "on carry refs like [e3]; pass them as `ref` to browser_click, browser_type and the other actions. Refs stay "
    "valid while the element stays on the page; after a navigation, snapshot again."
)
SINGLE_INSTRUCTIONS = (
    "A real headless Chromium behind one `browser` tool. Call it with action navigate, then snapshot to see the "
    "page: elements you can act on carry refs like [e3]; pass them as `ref` with action act (act_kind click, type, "
    "...). After a navigation, snapshot again."
)
#: The SDK's handshake versions (``mcp_types.version``); tests/test_mcp_handshake.py keeps them equal.
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE_VERSION = "2025-11-25"


def initialize_result(style: str, requested_version: str) -> dict[str, Any]:
    """The ``initialize`` result, as the SDK's low-level server would write it for webhand."""
    negotiated = requested_version if requested_version in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    return {"capabilities": {"prompts": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False},
                             "tools": {"listChanged": False}},
            "instructions": SINGLE_INSTRUCTIONS if style == "single" else INSTRUCTIONS,
            "protocolVersion": negotiated, "serverInfo": {"name": "webhand", "version": __version__}}


def early_answer(line: bytes, style: str) -> tuple[int | str, dict[str, Any]] | None:
    """The request id and result to send for this first line, or None when the SDK must see it
    first: only a complete, well-formed ``initialize`` is answered early."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not isinstance(params, dict):
        return None
    client = params.get("clientInfo")
    if not (isinstance(params.get("protocolVersion"), str) and isinstance(params.get("capabilities"), dict)
            and isinstance(client, dict) and isinstance(client.get("name"), str) and isinstance(client.get("version"), str)):
        return None
    return request_id, initialize_result(style, params["protocolVersion"])
