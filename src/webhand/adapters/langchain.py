"""webhand's tools as LangChain ``StructuredTool`` objects (``pip install 'webhand[langchain]'``).

    from webhand.adapters.langchain import langchain_tools

    tools = langchain_tools(browser)
    model = chat_model.bind_tools(tools)
    message = await tools_by_name[call["name"]].ainvoke(call)   # a ToolMessage

The tools are async only (``ainvoke``): the browser lives on the event loop that opened it. A failed
call becomes a ``ToolMessage`` with ``status="error"`` and the error text; images come back as
image content blocks beside the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webhand.adapters import BoundTool, bound_tools, require

if TYPE_CHECKING:
    from webhand.api import Browser
    from webhand.host import Conversation


def langchain_tools(target: Conversation | Browser, *, style: str = "multi") -> list[Any]:
    """One ``langchain_core.tools.StructuredTool`` per served tool (or the single ``browser`` tool),
    bound to the conversation of ``target``."""
    tools = require("langchain_core.tools", "langchain")
    return [_structured_tool(tools, tool) for tool in bound_tools(target, style=style)]


def _structured_tool(tools: Any, tool: BoundTool) -> Any:
    import base64

    async def invoke(**arguments: Any) -> Any:
        result = await tool.call(arguments)
        if result.is_error:
            raise tools.ToolException(result.text)
        if not result.images:
            return result.text
        return [{"type": "text", "text": result.text},
                *({"type": "image", "base64": base64.b64encode(i.data).decode(), "mime_type": i.mime_type}
                  for i in result.images)]

    def refuse_sync(**_: Any) -> Any:
        raise RuntimeError(f"{tool.name} is async only: call `await tool.ainvoke(...)` (the browser lives on the "
                           "event loop that opened it).")

    # A JSON-schema args_schema: LangChain passes the model's arguments through as they are, and
    # webhand's own input model validates them (its errors say what to fix).
    return tools.StructuredTool(name=tool.name, description=tool.description, args_schema=tool.input_schema,
                                func=refuse_sync, coroutine=invoke, handle_tool_error=True)
