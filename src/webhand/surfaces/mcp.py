"""The MCP server, on the official ``mcp`` SDK's low-level server.

Tools, their input schemas and annotations come from the catalog. Over stdio, one connection is
one conversation.
"""

from __future__ import annotations

import base64
import os
import signal
import uuid
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from webhand import __version__
from webhand.host import ToolContext, Webhand
from webhand.response import ToolResult
from webhand.tools import Tool

INSTRUCTIONS = (
    "A real headless Chromium. Call browser_navigate, then browser_snapshot to see the page: elements you can act "
    "on carry refs like [e3]; pass them as `ref` to browser_click, browser_type and the other actions. Refs stay "
    "valid while the element stays on the page; after a navigation, snapshot again."
)


def mcp_tool(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema(),
        annotations=types.ToolAnnotations(read_only_hint=tool.read_only, destructive_hint=tool.destructive,
                                          open_world_hint=tool.needs_session),
    )


def mcp_result(result: ToolResult) -> types.CallToolResult:
    content: list[Any] = [types.TextContent(type="text", text=result.text)]
    for image in result.images:
        content.append(types.ImageContent(type="image", data=base64.b64encode(image.data).decode(), mime_type=image.mime_type))
    return types.CallToolResult(content=content, is_error=result.is_error)


def build_server(webhand: Webhand, context_for: Any) -> Server[Any]:
    """An MCP server whose calls run in the ``ToolContext`` that ``context_for(ctx)`` picks."""
    tools = [mcp_tool(t) for t in webhand.tools.values()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        context: ToolContext = context_for(ctx)
        return mcp_result(await context.call(params.name, dict(params.arguments or {})))

    return Server("webhand", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(webhand: Webhand) -> None:
    """Serve one conversation over stdio until the client closes the pipe, SIGTERM or SIGINT."""
    context = webhand.context(f"stdio-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    server = build_server(webhand, lambda _ctx: context)
    async with webhand:
        async with anyio.create_task_group() as group:
            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        group.cancel_scope.cancel()
                        return

            group.start_soon(stop_on_signal)
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()
