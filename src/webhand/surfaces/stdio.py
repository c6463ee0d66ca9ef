"""``webhand mcp`` over stdio: one conversation, whose browser starts with the server.

A stdio server serves exactly one conversation, known when it starts: its browser launches at
once, while the client is still initializing, and no second (reserve) browser is kept, since no
other conversation will come. The reserve stays for the HTTP server and the Python host.

The MCP SDK is imported first, in the usual way. Loading it in a worker thread beside the
browser's start, or after spawning the browser and the driver, was measured again (8 interleaved
runs each, 2 cores): ``initialize`` came 1.5-1.6x later and the first page no sooner (0.97-1.02x),
since the import, the driver and Chromium all want the CPU at once.
The tool catalog loads at the client's first ``tools/list``, after ``initialize`` is answered.
"""

from __future__ import annotations

import os
import uuid

from webhand.config import Settings
from webhand.host import Webhand
from webhand.surfaces.mcp import serve_stdio


async def serve(settings: Settings, *, style: str = "multi") -> None:
    """Serve one conversation over stdin/stdout until the client closes the pipe or a signal."""
    webhand = Webhand(settings.model_copy(update={"warm_reserve": False}))
    conversation_id = f"stdio-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    await webhand.start()
    webhand.open_soon(conversation_id)
    await serve_stdio(webhand, style=style, conversation_id=conversation_id)
