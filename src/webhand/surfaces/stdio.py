"""``webhand mcp`` over stdio: one conversation, whose browser starts with the server.

A stdio server serves exactly one conversation, known when it starts: its browser launches at
once, while the client is still initializing, and no second (reserve) browser is kept, since no
other conversation will come. The reserve stays for the HTTP server and the Python host.

Start-up order (each step measured, see docs/design.md "Cold start"):

1. The client's ``initialize`` is answered from its first line before anything heavy loads
   (``stdio_wire``, ``handshake``).
2. The settings load, and the browser's process is spawned.
3. While Chromium boots on the other core, the client's first ``tools/list`` and ``tools/call``
   are served without the MCP SDK (``stdio_early``): the catalog loads at the first list.
4. The SDK is imported once the first call was answered (or at once, for a line only it can
   answer), in a thread, and the session is handed to it: it serves everything after.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import uuid

from webhand.config import Settings
from webhand.host import Webhand
from webhand.surfaces.exposure import served_tools
from webhand.surfaces.stdio_early import EarlyServer
from webhand.surfaces.stdio_wire import SdkInput, SdkOutput, StdioWire

log = logging.getLogger("webhand.mcp")


async def serve(settings: Settings, wire: StdioWire, *, style: str = "multi") -> None:
    """Serve one conversation over the client's pipe until it closes it, or a signal."""
    webhand = Webhand(settings.model_copy(update={"warm_reserve": False}))
    conversation_id = f"stdio-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    async with webhand:
        _close_on_signals(webhand)
        webhand.open_soon(conversation_id)
        context = webhand.context(conversation_id)
        await webhand.sessions.browser_spawned()
        exposed = served_tools(lambda: webhand.tools.values(), style)
        await asyncio.to_thread(wire.wait_opening)  # a client sends `initialize` at once
        early = EarlyServer(wire, context, exposed)
        sdk_loaded = asyncio.Event()
        loading = asyncio.create_task(_load_sdk(early.wants_sdk, sdk_loaded))
        try:
            handover = await early.serve(sdk_loaded)
            if not handover.ended:
                await loading
                from webhand.surfaces.mcp import serve_stdio

                await serve_stdio(webhand, context, SdkInput(wire, handover.replay, early.cancels_own_call),
                                  SdkOutput(wire, wire.answered), style=style, exposed=exposed)
        finally:
            loading.cancel()
            await early.stop()


async def _load_sdk(wanted: asyncio.Event, loaded: asyncio.Event) -> None:
    """Import the MCP SDK once it is wanted: in a thread, so that a call under way goes on."""
    await wanted.wait()
    await asyncio.to_thread(__import__, "webhand.surfaces.mcp")
    loaded.set()


def _close_on_signals(webhand: Webhand) -> None:
    """SIGTERM or SIGINT: close the browsers, then leave. stdin is read by a thread that nothing
    can interrupt, so waiting for the server to unwind could hang."""
    loop = asyncio.get_running_loop()

    async def close_and_exit(signum: int) -> None:
        try:
            await asyncio.shield(webhand.close())
        finally:
            os._exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, lambda s=signum: asyncio.ensure_future(close_and_exit(s)))
