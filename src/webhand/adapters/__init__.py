"""webhand's tools as an agent framework's own tool objects, generated from the catalog.

    from webhand.adapters.langchain import langchain_tools
    async with webhand.open_browser() as browser:
        tools = langchain_tools(browser)          # or a Conversation from Webhand.context(conversation_id)

One small module per framework (``openai_agents``, ``langchain``, ``pydantic_ai``), each importing
its framework only when called: the base package never needs them (``pip install
'webhand[langchain]'`` …). What they share is here: the served tools as a model sees them
(``ToolDispatcher``: the same names, descriptions and schemas as every other surface), bound to
one conversation when the tools are built, exactly as a ``Conversation`` is, so the model can never
choose whose browser it drives.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from webhand.errors import ConfigError

if TYPE_CHECKING:
    from webhand.api import Browser
    from webhand.host import Conversation
    from webhand.response import ToolResult


@dataclass(frozen=True)
class BoundTool:
    """One served tool, bound to a conversation: what every adapter wraps."""

    name: str
    description: str
    input_schema: dict[str, Any]
    dispatcher: Any  # ToolDispatcher: validates the arguments and runs the call

    async def call(self, arguments: dict[str, Any] | str | None) -> ToolResult:
        """Run the tool; never raises for what a model sends (failures are ``is_error`` replies)."""
        return await self.dispatcher.call(self.name, arguments)


def bound_tools(target: Conversation | Browser, *, style: str = "multi") -> list[BoundTool]:
    """The served tools of ``target``'s conversation, one by one (``multi``) or as the single
    ``browser`` tool (``single``)."""
    from webhand.host import Conversation
    from webhand.surfaces.schemas import ToolDispatcher

    context = getattr(target, "context", target)
    if not isinstance(context, Conversation):
        raise TypeError("Pass a webhand Browser (from open_browser) or a Conversation (from Webhand.context), "
                        f"not {type(target).__name__}.")
    dispatcher = ToolDispatcher(context, style=style)
    return [BoundTool(t.name, t.description, t.input_schema, dispatcher)
            for t in dispatcher.tools.values()]


def require(module: str, extra: str) -> ModuleType:
    """Import a framework, or say which extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ConfigError(f"This adapter needs the {module!r} package, which is not installed ({error}).",
                          f"Install it with: pip install 'webhand[{extra}]'.") from None


def data_url(mime_type: str, data: bytes) -> str:
    import base64

    return f"data:{mime_type};base64,{base64.b64encode(data).decode()}"
