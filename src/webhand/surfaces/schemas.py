"""Function-calling definitions (OpenAI, Anthropic, MCP) and a dispatcher for the model's calls.

A host that talks to a model API directly gives it ``definitions(...)`` and, for each tool call
the model makes, hands the call to ``ToolDispatcher.run``; the reply comes back in the vendor's
own shape (text and images), ready to append to the conversation.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any, Literal

from webhand.errors import ConfigError, shorten
from webhand.host import Conversation
from webhand.response import ToolResult
from webhand.surfaces.exposure import ExposedTool, by_name, exposed_tools
from webhand.tools import Tool

Format = Literal["openai", "anthropic", "mcp"]
FORMATS: tuple[str, ...] = ("openai", "anthropic", "mcp")


def _check_format(format: str) -> None:
    if format not in FORMATS:
        raise ConfigError(f"Unknown schema format {format!r}.", "Use one of: " + ", ".join(FORMATS) + ".")


def definition(tool: ExposedTool, format: str) -> dict[str, Any]:
    """One tool in a vendor's function-calling shape."""
    _check_format(format)
    if format == "openai":  # Chat Completions `tools` entry
        return {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                                 "parameters": tool.input_schema}}
    if format == "anthropic":
        return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
    from webhand.surfaces.mcp.server import mcp_tool

    return mcp_tool(tool).model_dump(by_alias=True, exclude_none=True, mode="json")


def definitions(tools: Iterable[Tool], format: str = "openai", *, style: str = "multi") -> list[dict[str, Any]]:
    """Definitions of the given catalog tools (e.g. ``Webhand.tools.values()``)."""
    _check_format(format)
    return [definition(t, format) for t in exposed_tools(tools, style)]


def _field(call: Any, name: str, default: Any = None) -> Any:
    """Read a field of a tool call given as a dict or as an SDK object."""
    if isinstance(call, dict):
        return call.get(name, default)
    return getattr(call, name, default)


class ToolDispatcher:
    """Runs a model's tool calls in one conversation and answers in the vendor's shape."""

    def __init__(self, context: Conversation, format: str = "openai", *, style: str = "multi") -> None:
        _check_format(format)
        self.context = context
        self.format = format
        self.tools = {t.name: t for t in exposed_tools(context.webhand.tools.values(), style)}

    def definitions(self) -> list[dict[str, Any]]:
        return [definition(t, self.format) for t in self.tools.values()]

    async def call(self, name: str, arguments: dict[str, Any] | str | None) -> ToolResult:
        """Run one call by name; arguments may be the JSON string a model API hands back."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError as error:
                return ToolResult(f"Error: The arguments of {name} are not valid JSON ({error}). Send a JSON object.",
                                  is_error=True)
        if not isinstance(arguments, dict | None):
            return ToolResult(f"Error: The arguments of {name} must be a JSON object.", is_error=True)
        tool = by_name(self.tools, name) if isinstance(name, str) else None
        if tool is None:
            return ToolResult(f"Error: Tool {shorten(name)!r} is not served here. Available: {', '.join(self.tools)}.", is_error=True)
        return await tool.run(self.context, arguments or {})

    async def run(self, tool_call: Any) -> Any:
        """Run one tool call as the vendor's API gave it; return what to send back.

        openai: a ``tool_calls`` item -> a list of messages (the ``tool`` message, then a ``user``
        message with the images, since tool messages cannot carry images).
        anthropic: a ``tool_use`` block -> a ``tool_result`` block.
        mcp: ``{"name", "arguments"}`` -> a ``CallToolResult`` as a dict.
        """
        if self.format == "openai":
            function = _field(tool_call, "function") or {}
            result = await self.call(_field(function, "name"), _field(function, "arguments"))
            return openai_reply(_field(tool_call, "id"), result)
        if self.format == "anthropic":
            result = await self.call(_field(tool_call, "name"), _field(tool_call, "input"))
            return anthropic_reply(_field(tool_call, "id"), result)
        from webhand.surfaces.mcp.tool_json import call_result

        return call_result(await self.call(_field(tool_call, "name"), _field(tool_call, "arguments")))


def openai_reply(call_id: str | None, result: ToolResult) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": call_id, "content": result.text}]
    if result.images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": f"Image(s) returned by tool call {call_id}:"}]
        parts += [{"type": "image_url", "image_url": {"url": f"data:{i.mime_type};base64,{base64.b64encode(i.data).decode()}"}}
                  for i in result.images]
        messages.append({"role": "user", "content": parts})
    return messages


def anthropic_reply(tool_use_id: str | None, result: ToolResult) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": result.text}]
    content += [{"type": "image", "source": {"type": "base64", "media_type": i.mime_type,
                                             "data": base64.b64encode(i.data).decode()}} for i in result.images]
    reply: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if result.is_error:
        reply["is_error"] = True
    return reply
