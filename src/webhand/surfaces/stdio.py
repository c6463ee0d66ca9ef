"""``webhand mcp`` over stdio: one conversation, whose browser starts with the server.

A stdio server serves exactly one conversation, known when it starts: its browser launches at
once, while the client is still initializing, and no second (reserve) browser is kept, since no
other conversation will come. The reserve stays for the HTTP server and the Python host.

Start-up order (each step measured, see docs/design.md "Cold start"): the client's ``initialize``
is answered from the first line before anything heavy loads (``handshake``); then the settings;
then the browser's process is spawned; then the MCP SDK is imported while Chromium boots on the
other core. (Importing it in a worker thread instead was measured: it competes with the event
loop for the GIL and made the raw-CDP driver's first page 1.1x later.) The tool catalog loads at
the client's first ``tools/list``.
"""

from __future__ import annotations

import os
import uuid

from webhand.config import Settings
from webhand.host import Webhand
from webhand.surfaces.handshake import EarlyHandshake


async def serve(settings: Settings, *, style: str = "multi", handshake: EarlyHandshake | None = None) -> None:
    """Serve one conversation over stdin/stdout until the client closes the pipe or a signal."""
    webhand = Webhand(settings.model_copy(update={"warm_reserve": False}))
    conversation_id = f"stdio-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    await webhand.start()
    webhand.open_soon(conversation_id)
    await webhand.sessions.browser_spawned()
    from webhand.surfaces.mcp import serve_stdio

    await serve_stdio(webhand, style=style, conversation_id=conversation_id, handshake=handshake)
