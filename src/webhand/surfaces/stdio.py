"""``webhand mcp`` over stdio: one conversation, whose browser starts with the server.

A stdio server serves exactly one conversation, known when it starts: its browser launches at
once, while the client is still initializing, and no second (reserve) browser is kept, since no
other conversation will come. The reserve stays for the HTTP server and the Python host.

Order of the start-up, for the time to the first page: the browser and the Playwright driver are
spawned first; the MCP SDK (about half a second of imports) loads in a worker thread while they
boot on the other core; the tool catalog loads at the client's first ``tools/list``.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import uuid

from webhand.config import Settings
from webhand.host import Webhand


async def serve(settings: Settings, *, style: str = "multi") -> None:
    """Serve one conversation over stdin/stdout until the client closes the pipe or a signal."""
    webhand = Webhand(settings.model_copy(update={"warm_reserve": False}))
    conversation_id = f"stdio-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    await webhand.start()
    webhand.open_soon(conversation_id)
    mcp = await asyncio.to_thread(importlib.import_module, "webhand.surfaces.mcp")
    await mcp.serve_stdio(webhand, style=style, conversation_id=conversation_id)
