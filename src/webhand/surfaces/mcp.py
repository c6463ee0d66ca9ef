"""The MCP server, on the official ``mcp`` SDK's low-level server.

Tools, their schemas and annotations come from the catalog (see ``exposure``). Over stdio, one
connection is one conversation. Over streamable HTTP (``mcp_http``), each MCP session is one
conversation with its own browser, ended when the session ends.
"""

from __future__ import annotations

import base64
import os
import signal
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from webhand import __version__
from webhand.errors import shorten
from webhand.surfaces.handshake import INSTRUCTIONS, SINGLE_INSTRUCTIONS, EarlyHandshake
from webhand.host import ToolContext, Webhand
from webhand.response import ToolResult
from webhand.surfaces.stdio_replay import replay_opening

if TYPE_CHECKING:
    from webhand.surfaces.exposure import ExposedTool

#: Picks the conversation of one MCP request; raises MCPError when the request has none.
ContextFor = Callable[[Any], ToolContext]


def mcp_tool(tool: ExposedTool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=annotations(tool),
    )


def annotations(tool: ExposedTool) -> types.ToolAnnotations:
    """Only hints that differ from the spec's defaults (readOnly false, destructive true, openWorld
    true) are sent: the list is paid for in tokens on every model request."""
    if tool.read_only:
        return types.ToolAnnotations(read_only_hint=True)
    return types.ToolAnnotations(destructive_hint=tool.destructive)


def mcp_result(result: ToolResult) -> types.CallToolResult:
    content: list[Any] = [types.TextContent(type="text", text=result.text)]
    for image in result.images:
        content.append(types.ImageContent(type="image", data=base64.b64encode(image.data).decode(), mime_type=image.mime_type))
    # Structured content only on success: an error's shape would not match the tool's output schema.
    structured = result.data if (result.data is not None and not result.is_error) else None
    return types.CallToolResult(content=content, structured_content=structured, is_error=result.is_error)


def build_server(webhand: Webhand, context_for: ContextFor, *, style: str = "multi") -> Server[Any]:
    """An MCP server whose calls run in the ``ToolContext`` that ``context_for(ctx)`` picks."""
    served: dict[str, ExposedTool] = {}
    listed: list[types.Tool] = []

    def exposed() -> dict[str, ExposedTool]:
        # Built on the first list or call, not before `initialize` is answered: the catalog's
        # import is the larger part of webhand's own start-up.
        if not served:
            from webhand.surfaces.exposure import exposed_tools

            served.update((t.name, t) for t in exposed_tools(webhand.tools.values(), style))
            listed.extend(mcp_tool(t) for t in served.values())
        return served

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        exposed()
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = exposed().get(params.name)
        if tool is None:
            return types.CallToolResult(content=[types.TextContent(
                type="text", text=f"Error: Tool {shorten(params.name)!r} is not served here. Available: {', '.join(exposed())}.")],
                is_error=True)
        return mcp_result(await tool.run(context_for(ctx), dict(params.arguments or {})))

    server: Server[Any] = Server("webhand", version=__version__,
                                 instructions=SINGLE_INSTRUCTIONS if style == "single" else INSTRUCTIONS,
                                 on_list_tools=list_tools, on_call_tool=call_tool)

    async def refuse_discover(ctx: Any, params: Any) -> None:
        # The 2026 per-request protocol has no sessions, and a browser lives as long as a session:
        # answering "not found" makes SDK clients in auto mode fall back to the session handshake.
        raise MCPError(code=types.METHOD_NOT_FOUND, message="webhand keeps a browser per MCP session; "
                       "connect with the initialize handshake (protocol 2025-11-25).")

    server.add_request_handler("server/discover", types.RequestParams, refuse_discover)
    return server


async def serve_stdio(webhand: Webhand, *, style: str = "multi", conversation_id: str | None = None,
                      handshake: EarlyHandshake | None = None) -> None:
    """Serve one conversation over stdio until the client closes the pipe, SIGTERM or SIGINT.
    ``handshake``: the client's first line, read (and maybe answered) before the SDK loaded."""
    context = webhand.context(conversation_id or f"stdio-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    server = build_server(webhand, lambda _ctx: context, style=style)
    async with webhand:
        async with anyio.create_task_group() as group:
            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for signum in signals:
                        # stdin is read in a worker thread that no cancel can interrupt, so waiting
                        # for the server to unwind could hang: close the browsers now, then leave.
                        with anyio.CancelScope(shield=True):
                            await webhand.close()
                        os._exit(128 + signum)

            group.start_soon(stop_on_signal)
            if handshake is not None:
                await anyio.to_thread.run_sync(handshake.wait)  # it holds fd 0 and 1 until then
            async with stdio_server() as (read_stream, write_stream), replay_opening(handshake, read_stream, write_stream) as (
                    read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()
