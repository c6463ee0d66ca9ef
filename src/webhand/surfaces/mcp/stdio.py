"""``webhand mcp`` over stdio: one conversation, whose browser starts with the server.

A stdio server serves exactly one conversation, known when it starts: its browser launches at
once, while the client is still initializing, and no second (reserve) browser is kept, since no
other conversation will come. The reserve stays for the HTTP server and the Python host.

Start-up order (each step measured, see docs/design.md "Cold start"):

1. The client's ``initialize`` is answered from its first line before anything heavy loads
   (``wire``, ``handshake``).
2. The settings load, and the browser's process is spawned. When this server was started as the
   last one was (same command line, directory, variables), its browser is launched first, as that
   one launched it, and the settings confirm it or it is replaced (``engine/launch_memo``).
3. While Chromium boots on the other core, the client's first ``tools/list`` and ``tools/call``
   are served without the MCP SDK (``early``): the catalog loads at the first list.
4. The SDK is imported once the first call was answered (or at once, for a line only it can
   answer), in a thread, and the session is handed to it: it serves everything after.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from webhand.engine.launch import launch_memo
from webhand.engine.launch.chrome import ChromeProcess, discard_launch
from webhand.engine.launch.launch_memo import Plan
from webhand.errors import WebhandError
from webhand.surfaces.exposure import served_tools
from webhand.surfaces.mcp.startup.early import EarlyServer
from webhand.surfaces.mcp.startup.wire import SdkInput, SdkOutput, StdioWire

if TYPE_CHECKING:  # both load after the remembered browser is launched: they are most of the start-up's CPU
    from webhand.config import Settings
    from webhand.host import Webhand
    from webhand.surfaces.dashboard import DashboardServer

log = logging.getLogger("webhand.mcp")


async def serve(load_settings: Callable[[], Settings], wire: StdioWire, *, style: str = "multi",
                memo_key: str | None = None, dashboard: bool = False) -> None:
    """Serve one conversation over the client's pipe until it closes it, or a signal. ``memo_key``:
    what this server was started with, under which its browser's launch is remembered. ``dashboard``:
    also serve this conversation's dashboard on a loopback port (``serve_dashboard``)."""
    guess = await _launch_remembered(memo_key)
    try:
        settings = load_settings()
    except BaseException:
        if guess is not None:
            await discard_launch(guess[1])
        raise
    from webhand.host import Webhand

    webhand = Webhand(settings.model_copy(update={"warm_reserve": False}))
    await _confirm_launch(webhand, memo_key, guess)
    conversation_id = f"stdio-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    async with webhand:
        _close_on_signals(webhand)
        webhand.open_soon(conversation_id)
        context = webhand.conversation(conversation_id)
        if (launcher := webhand.sessions.launcher) is not None:
            await launcher.until_spawned()
        exposed = served_tools(lambda: webhand.tools.values(), style)
        await asyncio.to_thread(wire.wait_opening)  # a client sends `initialize` at once
        early = EarlyServer(wire, context, exposed)
        sdk_loaded = asyncio.Event()
        loading = asyncio.create_task(_load_sdk(early.wants_sdk, sdk_loaded))
        board = asyncio.create_task(serve_dashboard(webhand)) if dashboard else None
        try:
            handover = await early.serve(sdk_loaded)
            if not handover.ended:
                await loading
                from webhand.surfaces.mcp.server import serve_stdio

                await serve_stdio(webhand, context, SdkInput(wire, handover.replay, early.cancels_own_call),
                                  SdkOutput(wire, wire.answered), style=style, exposed=exposed)
        finally:
            loading.cancel()
            await early.stop()
            if board is not None:
                await _stop_dashboard(board)


async def serve_dashboard(webhand: Webhand) -> DashboardServer | None:
    """The dashboard of this server's sessions on a free loopback port, behind the user's dashboard
    token (the CLI's: one token to keep), its link printed on stderr: the client's logs show it,
    and ``browser_request_human`` gives the session's page in it. Started beside the client's first
    calls, never before them (it loads the HTTP stack). None, said on stderr, when it cannot start."""
    from webhand.security.locations import runtime_dir
    from webhand.surfaces.dashboard import DashboardServer, link, user_token
    from webhand.surfaces.http_security import HttpOptions

    try:
        token = await asyncio.to_thread(user_token, runtime_dir())
        server = DashboardServer(webhand, HttpOptions(host="127.0.0.1", port=0, token=token, require_token=True))
        url = await server.start()
    except (OSError, WebhandError) as error:
        log.warning("the dashboard could not start (%s); the tools work without it, browser_request_human does not",
                    error)
        return None
    print(f"webhand dashboard on {link(url, token=token)} (this server's session: watch it, take control)",
          file=sys.stderr, flush=True)
    return server


async def _stop_dashboard(starting: asyncio.Task[DashboardServer | None]) -> None:
    starting.cancel()  # nothing when it has started
    await asyncio.wait({starting})
    if not starting.cancelled() and starting.exception() is None and (server := starting.result()) is not None:
        await server.stop()


async def _launch_remembered(memo_key: str | None) -> tuple[Plan, asyncio.Future[ChromeProcess]] | None:
    """Launch the browser the last server started the same way launched, before the settings load
    (``engine/launch/launch_memo.py``); returns once its process exists, or its launch failed."""
    plan = launch_memo.recall(memo_key) if memo_key else None
    if plan is None:
        return None
    spawned = asyncio.Event()
    starting = asyncio.ensure_future(ChromeProcess.launch_planned(plan, spawned=spawned))
    waiting = asyncio.ensure_future(spawned.wait())
    await asyncio.wait((starting, waiting), return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    return plan, starting


async def _confirm_launch(webhand: Webhand, memo_key: str | None, guess: tuple[Plan, asyncio.Future[ChromeProcess]] | None) -> None:
    """Keep the browser launched from memory when the settings launch it the same way; else end it.
    Remember how these settings launch, for the next start."""
    launcher = webhand.sessions.launcher  # None: no browser is launched ahead, so none is remembered
    try:
        plan = launcher.plan() if launcher is not None else None
    except WebhandError:  # no Chromium found, say: the session's launch reports it
        plan = None
    if guess is not None:
        if launcher is not None and guess[0] == plan:
            launcher.adopt_prelaunched(guess[1])
        else:
            log.info("the browser launched as last time does not fit the settings now: launching it again")
            await discard_launch(guess[1])
    if memo_key is not None and plan != (guess[0] if guess else None):
        await asyncio.to_thread(launch_memo.remember, memo_key, plan)


async def _load_sdk(wanted: asyncio.Event, loaded: asyncio.Event) -> None:
    """Import the MCP SDK once it is wanted: in a thread, so that a call under way goes on."""
    await wanted.wait()
    await asyncio.to_thread(__import__, "webhand.surfaces.mcp.server")
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
