"""The MCP server, on the official ``mcp`` SDK's low-level server.

Tools, their schemas and annotations come from the catalog (see ``exposure``). Over stdio, one
connection is one conversation. Over streamable HTTP (``streamable_http``), each MCP session is one
conversation with its own browser, ended when the session ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from webhand import __version__
from webhand.caller import Caller
from webhand.host import Conversation, Webhand
from webhand.surfaces.mcp import client_roots, prompts, resources
from webhand.surfaces.mcp.startup.handshake import INSTRUCTIONS, SINGLE_INSTRUCTIONS
from webhand.surfaces.exposure import by_name
from webhand.surfaces.mcp.tool_json import call_result, tool_entry, unknown_tool_result

if TYPE_CHECKING:
    from webhand.surfaces.exposure import ExposedTool

#: Picks the conversation of one MCP request; raises MCPError when the request has none.
ContextFor = Callable[[Any], Conversation]


def mcp_tool(tool: ExposedTool) -> types.Tool:
    return types.Tool.model_validate(tool_entry(tool))


def build_server(webhand: Webhand, context_for: ContextFor, *, style: str = "multi",
                 exposed: Callable[[], dict[str, ExposedTool]] | None = None) -> Server[Any]:
    """An MCP server whose calls run in the ``Conversation`` that ``context_for(ctx)`` picks.
    ``exposed``: the served tools by name, when they are shared with the early stdio server."""
    if exposed is None:
        from webhand.surfaces.exposure import served_tools

        exposed = served_tools(lambda: webhand.tools.values(), style)
    listed: list[types.Tool] = []

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        if not listed:
            listed.extend(mcp_tool(t) for t in exposed().values())
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = by_name(exposed(), params.name)
        if tool is None:
            return types.CallToolResult.model_validate(unknown_tool_result(params.name, list(exposed())))
        context = context_for(ctx)
        await client_roots.refresh(ctx.session, context.files)
        result = await tool.run(context, dict(params.arguments or {}), caller_of(ctx))
        return types.CallToolResult.model_validate(call_result(result))

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return resources.read(context_for(ctx).files, str(params.uri))

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return resources.listed(context_for(ctx).files)

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return prompts.listed("browser_run_flow" in exposed())

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        return prompts.get("browser_run_flow" in exposed(), params.name, params.arguments)

    async def roots_changed(ctx: Any, params: Any) -> None:
        context_for(ctx).files.client_roots_current = False  # asked again before the next call

    server: Server[Any] = Server("webhand", version=__version__,
                                 instructions=SINGLE_INSTRUCTIONS if style == "single" else INSTRUCTIONS,
                                 on_list_tools=list_tools, on_call_tool=call_tool,
                                 on_read_resource=read_resource, on_list_resources=list_resources,
                                 on_list_prompts=list_prompts, on_get_prompt=get_prompt)
    # Roots belong to the handshake protocols (2026's per-request protocol drops them), which are the
    # ones webhand speaks: registered directly, as the SDK's constructor argument warns it is deprecated.
    server.add_notification_handler("notifications/roots/list_changed", types.NotificationParams, roots_changed)

    async def refuse_discover(ctx: Any, params: Any) -> None:
        # The 2026 per-request protocol has no sessions, and a browser lives as long as a session:
        # answering "not found" makes SDK clients in auto mode fall back to the session handshake.
        raise MCPError(code=types.METHOD_NOT_FOUND, message="webhand keeps a browser per MCP session; "
                       "connect with the initialize handshake (protocol 2025-11-25).")

    server.add_request_handler("server/discover", types.RequestParams, refuse_discover)
    return server


_ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())


def caller_of(ctx: Any) -> Caller:
    """What this request's client offers while the call runs: progress reports when it sent a
    progress token, its person's answer when it declared elicitation (both through the SDK)."""
    session = ctx.session
    meta = ctx.meta or {}
    token = meta.get("progress_token") if isinstance(meta, dict) else getattr(meta, "progress_token", None)

    async def progress(elapsed: float, message: str) -> None:
        await session.report_progress(round(elapsed, 1), None, message)

    async def ask_person(message: str, url: str) -> str:
        # A form with no fields: the person's answer is the action (accept = Done, decline, cancel).
        answer = await session.elicit_form(message, {"type": "object", "properties": {}},
                                           related_request_id=ctx.request_id)
        return str(answer.action)

    return Caller(progress=progress if token is not None else None,
                  ask_person=ask_person if session.check_client_capability(_ELICITATION) else None)


async def serve_stdio(webhand: Webhand, context: Conversation, stdin: Any, stdout: Any, *, style: str = "multi",
                      exposed: Callable[[], dict[str, ExposedTool]] | None = None) -> None:
    """Serve one conversation over stdio until the client closes the pipe. ``stdin``/``stdout``: the
    wire's lines and writer (``wire``), which webhand owns from the process's start."""
    server = build_server(webhand, lambda _ctx: context, style=style, exposed=exposed)
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
