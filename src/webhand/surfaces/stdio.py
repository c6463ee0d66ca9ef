"""``webhand mcp`` over stdio: start the browser side first, then load the MCP SDK and serve.

The SDK is the largest import of the server. It is loaded in a worker thread, so the event loop
keeps driving the browser's start (the driver, the launch) while it loads; the tool catalog loads
at the client's first ``tools/list``, after ``initialize`` is answered.
"""

from __future__ import annotations

import asyncio
import importlib

from webhand.config import Settings
from webhand.host import Webhand


async def serve(settings: Settings, *, style: str = "multi") -> None:
    """Serve one conversation over stdin/stdout until the client closes the pipe or a signal."""
    webhand = Webhand(settings)
    await webhand.start()
    try:
        mcp = await asyncio.to_thread(importlib.import_module, "webhand.surfaces.mcp")
    except BaseException:
        await webhand.close()
        raise
    await mcp.serve_stdio(webhand, style=style)
