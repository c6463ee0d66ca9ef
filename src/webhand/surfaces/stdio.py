"""``webhand mcp`` over stdio: start the conversation's browser first, then load the MCP SDK and serve.

A stdio server serves exactly one conversation, known when it starts: its browser launches at
once, while the client is still initializing, and no second (reserve) browser is kept, since no
other conversation will come. The reserve stays for the HTTP server and the Python host. The SDK is the largest import of the server. It is loaded in a worker thread, so the event loop
keeps driving the browser's start (the driver, the launch) while it loads; the tool catalog loads
at the client's first ``tools/list``, after ``initialize`` is answered.
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
    try:
        mcp = await asyncio.to_thread(importlib.import_module, "webhand.surfaces.mcp")
    except BaseException:
        await webhand.close()
        raise
    await mcp.serve_stdio(webhand, style=style, conversation_id=conversation_id)
