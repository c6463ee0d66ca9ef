"""webhand's tools as PydanticAI ``Tool`` objects (``pip install 'webhand[pydantic-ai]'``).

    from pydantic_ai import Agent
    from webhand.adapters.pydantic_ai import pydantic_ai_tools

    agent = Agent(model, tools=pydantic_ai_tools(browser))

A failed call raises ``ToolFailed`` with the error text: the model sees the failure and adapts,
without spending the tool's retry budget. Images come back as ``BinaryContent`` beside the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webhand.adapters import BoundTool, bound_tools, require

if TYPE_CHECKING:
    from webhand.api import Browser
    from webhand.host import Conversation


def pydantic_ai_tools(target: Conversation | Browser, *, style: str = "multi") -> list[Any]:
    """One ``pydantic_ai.Tool`` per served tool (or the single ``browser`` tool), bound to the
    conversation of ``target``."""
    pydantic_ai = require("pydantic_ai", "pydantic-ai")
    return [_tool(pydantic_ai, tool) for tool in bound_tools(target, style=style)]


def _tool(pydantic_ai: Any, tool: BoundTool) -> Any:
    async def invoke(**arguments: Any) -> Any:
        result = await tool.call(arguments)
        if result.is_error:
            raise pydantic_ai.ToolFailed(result.text)
        if not result.images:
            return result.text
        return [result.text, *(pydantic_ai.BinaryContent(data=i.data, media_type=i.mime_type) for i in result.images)]

    # The schema is the catalog's; webhand's own input model validates the arguments.
    return pydantic_ai.Tool.from_schema(invoke, name=tool.name, description=tool.description,
                                        json_schema=tool.input_schema)
