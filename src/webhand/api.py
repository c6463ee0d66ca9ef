"""The Python API: a browser whose tools are methods.

    import webhand

    async with webhand.open_browser() as browser:
        await browser.navigate("http://127.0.0.1:8000/login.html")
        page = await browser.snapshot()
        await browser.click(ref="e3")

Each method is a catalog tool (its name without ``browser_``); positional arguments fill the
tool's required fields in order (and ``ref`` first where the tool targets an element). A failed
call raises ``ToolCallFailed`` carrying the reply; ``call`` returns every reply as it is.

Private module: import its public names from ``webhand`` (``webhand.__all__``); the module's path may
change in any release.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from webhand.config import Settings, load_settings
from webhand.errors import WebhandError
from webhand.host import Conversation, Webhand
from webhand.response import ToolResult
from webhand.tools import Tool


class ToolCallFailed(WebhandError):
    """A tool call returned an error reply; ``result`` holds it."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.text.removeprefix("Error: "))
        self.result = result


def positional_fields(tool: Tool) -> list[str]:
    schema = tool.input_schema()
    required = [name for name in schema.get("properties", {}) if name in schema.get("required", [])]
    return (["ref"] if "ref" in schema.get("properties", {}) and "ref" not in required else []) + required


class Browser:
    """One conversation's browser; every served tool is an async method."""

    def __init__(self, context: Conversation) -> None:
        self.context = context

    @property
    def tools(self) -> dict[str, Tool]:
        return self.context.webhand.tools

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        """Run a tool by its full name and return its reply, error or not."""
        return await self.context.call(name, arguments)

    def _method(self, tool: Tool) -> Callable[..., Awaitable[ToolResult]]:
        names = positional_fields(tool)

        async def method(*args: Any, **kwargs: Any) -> ToolResult:
            if len(args) > len(names):
                raise TypeError(f"{tool.short_name}() takes at most {len(names)} positional arguments "
                                f"({', '.join(names) or 'none'}); pass the others by name")
            arguments = dict(zip(names, args, strict=False))
            arguments.update({k: v for k, v in kwargs.items() if v is not None})
            result = await self.context.call(tool.name, arguments)
            if result.is_error:
                raise ToolCallFailed(result)
            return result

        method.__name__ = tool.short_name
        method.__doc__ = tool.description
        return method

    def __getattr__(self, name: str) -> Callable[..., Awaitable[ToolResult]]:
        tools = self.__dict__.get("context") and self.context.webhand.tools
        for candidate in (f"browser_{name}", name):
            if tools and candidate in tools:
                return self._method(tools[candidate])
        raise AttributeError(f"{name!r} is not a served tool. Served: "
                             + ", ".join(sorted(t.short_name for t in (tools or {}).values())))

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {t.short_name for t in self.tools.values()})

    def definitions(self, format: str = "openai", *, style: str = "multi") -> list[dict[str, Any]]:
        """The function-calling definitions of this browser's tools (see ``webhand.surfaces.schemas``)."""
        from webhand.surfaces.schemas import definitions

        return definitions(self.tools.values(), format, style=style)

    def dispatcher(self, format: str = "openai", *, style: str = "multi") -> Any:
        """Runs a model's tool calls in this browser and answers in the vendor's shape."""
        from webhand.surfaces.schemas import ToolDispatcher

        return ToolDispatcher(self.context, format, style=style)

    async def close(self) -> None:
        """Close this conversation's browser sessions (the ``Webhand`` keeps running)."""
        await self.context.webhand.end_conversation(self.context.conversation_id)


@asynccontextmanager
async def open_browser(settings: Settings | None = None, *, capabilities: list[str] | None = None,
                       config: str | None = None, agent: str | None = None,
                       **overrides: Any) -> AsyncIterator[Browser]:
    """Start webhand, open a browser session, close everything on exit.

    Settings come from ``settings`` if given, else from the config file, ``WEBHAND_*`` and the
    keyword ``overrides`` (any Settings field, e.g. ``headless=False``). All capability groups
    are served unless ``capabilities`` narrows them: a program names the tools it calls.
    """
    if settings is None:
        settings = load_settings(config=config, agent=agent, flags=overrides)
    elif overrides:
        settings = Settings.from_sources(settings.model_dump(), overrides, env={})
    async with Webhand(settings, capabilities=capabilities or ["all"]) as webhand:
        browser = Browser(webhand.conversation(f"api-{uuid.uuid4().hex[:12]}"))
        try:
            yield browser
        finally:
            await browser.close()
