"""webhand's tools as OpenAI Agents SDK ``FunctionTool`` objects (``pip install 'webhand[openai-agents]'``).

    from agents import Agent
    from webhand.adapters.openai_agents import openai_agents_tools

    agent = Agent(name="browser", tools=openai_agents_tools(browser))

A failed call is returned to the model as its error text (``Error: … what to do next``), the SDK's
way of letting the model recover; images come back as ``ToolOutputImage`` beside the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webhand.adapters import BoundTool, bound_tools, data_url, require

if TYPE_CHECKING:
    from webhand.api import Browser
    from webhand.host import Conversation


def openai_agents_tools(target: Conversation | Browser, *, style: str = "multi") -> list[Any]:
    """One ``agents.FunctionTool`` per served tool (or the single ``browser`` tool), bound to the
    conversation of ``target``."""
    agents = require("agents", "openai-agents")
    return [_function_tool(agents, tool) for tool in bound_tools(target, style=style)]


def _function_tool(agents: Any, tool: BoundTool) -> Any:
    async def invoke(_run_context: Any, arguments: str) -> Any:
        result = await tool.call(arguments)
        if not result.images:
            return result.text
        return [agents.ToolOutputText(text=result.text),
                *(agents.ToolOutputImage(image_url=data_url(i.mime_type, i.data)) for i in result.images)]

    # Not strict: optional fields may be left out, which strict mode does not allow.
    return agents.FunctionTool(name=tool.name, description=tool.description, params_json_schema=tool.input_schema,
                               on_invoke_tool=invoke, strict_json_schema=False)
