"""What a surface shows a model: the served catalog tools, one by one or as the single tool.

MCP, the function-calling schemas and the dispatcher all start from ``exposed_tools``, so the
two tool styles look the same to every surface and new catalog tools appear everywhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from webhand.caller import NO_CALLER, Caller

if TYPE_CHECKING:  # the catalog is imported by whoever passes its tools: not before they are needed
    from webhand.host import Conversation
    from webhand.response import ToolResult
    from webhand.tools import Tool

ToolStyle = Literal["multi", "single"]
TOOL_STYLES: tuple[str, ...] = ("multi", "single")


@dataclass(frozen=True)
class ExposedTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    read_only: bool
    destructive: bool
    #: ``run(context, arguments, caller=NO_CALLER)``: the call, with the client's side channels.
    run: Callable[..., Awaitable[ToolResult]]


def hidden_fields(tools: list[Tool]) -> set[str]:
    """Fields left out of the schemas: ``session`` (named sessions) belongs to the ``sessions``
    group, so without it every tool would pay ~80 characters for a field the host did not ask for.
    The tools still accept it."""
    return set() if any(t.capability == "sessions" for t in tools) else {"session"}


#: Validation bounds the model does not need to see: the tool's own input model enforces them
#: and its error says what is allowed, so listing them would only cost tokens on every request.
_BOUNDS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "minLength", "maxLength"}


def for_model(schema: Any) -> Any:
    """The schema a model sees: without numeric/length bounds and without ``default: false``
    (an absent flag is off). Everything else, every description included, stays."""
    if isinstance(schema, dict):
        return {k: ({name: for_model(f) for name, f in v.items()} if k == "properties" and isinstance(v, dict)
                    else for_model(v))
                for k, v in schema.items() if k not in _BOUNDS and not (k == "default" and v is False)}
    if isinstance(schema, list):
        return [for_model(v) for v in schema]
    return schema


def without(schema: dict[str, Any], fields: set[str]) -> dict[str, Any]:
    if not fields or not any(f in schema.get("properties", {}) for f in fields):
        return schema
    out = dict(schema, properties={k: v for k, v in schema["properties"].items() if k not in fields})
    if "required" in out:
        out["required"] = [r for r in out["required"] if r not in fields]
    return out


def _catalog_tool(tool: Tool, hidden: set[str]) -> ExposedTool:
    async def run(context: Conversation, arguments: dict[str, Any], caller: Caller = NO_CALLER) -> ToolResult:
        return await context.call(tool.name, arguments, caller)

    return ExposedTool(tool.name, tool.description, for_model(without(tool.input_schema(), hidden)), tool.output_schema(),
                       tool.read_only, tool.destructive, run)


def _single_tool(tools: list[Tool], hidden: set[str]) -> ExposedTool:
    from webhand.surfaces.single_tool import SingleTool

    single = SingleTool(tools, hidden_fields=hidden)
    return ExposedTool(single.name, single.description(), for_model(single.input_schema()), None,
                       single.read_only, single.destructive, single.call)


def exposed_tools(tools: Iterable[Tool], style: str = "multi") -> list[ExposedTool]:
    """The tools a model is given, in the chosen style (``multi``: one per catalog tool)."""
    if style not in TOOL_STYLES:
        from webhand.errors import ConfigError

        raise ConfigError(f"Unknown tool style {style!r}.", "Use one of: " + ", ".join(TOOL_STYLES) + ".")
    tools = list(tools)
    hidden = hidden_fields(tools)
    if style == "single":  # no tool served (enabled = false): no browser tool either, not one with no actions
        return [_single_tool(tools, hidden)] if tools else []
    return [_catalog_tool(t, hidden) for t in tools]


def by_name(exposed: dict[str, ExposedTool], name: str) -> ExposedTool | None:
    """The exposed tool a call names: its own name, or another design's name for a served catalog
    tool (``OTHER_TOOL_NAMES``: ``navigate_page``, ``browser_evaluate`` ...), read here, once, as
    webhand's tool with the arguments that name implies (``other_designs.our_call``). Such names
    are answered, never listed. Every surface that takes a model's tool name asks here."""
    tool = exposed.get(name)
    if tool is not None:
        return tool
    from webhand.tools.other_designs import our_call  # loaded with the catalog: a call needs it anyway

    ours, _ = our_call(name, None, exposed)
    if ours not in exposed:  # the single style serves `browser` only: other names are not its form
        return None

    async def run(context: Conversation, arguments: dict[str, Any], caller: Caller = NO_CALLER) -> ToolResult:
        tool_name, tool_arguments = our_call(name, arguments, exposed)
        return await context.call(tool_name, tool_arguments, caller, called_as=name)

    return ExposedTool(name, exposed[ours].description, exposed[ours].input_schema, exposed[ours].output_schema,
                       exposed[ours].read_only, exposed[ours].destructive, run)


def served_tools(tools: Callable[[], Iterable[Tool]], style: str = "multi") -> Callable[[], dict[str, ExposedTool]]:
    """The exposed tools by name, built on first use and kept: not before ``initialize`` is
    answered, since the catalog's import is the larger part of webhand's own start-up."""
    served: dict[str, ExposedTool] = {}

    def by_name() -> dict[str, ExposedTool]:
        if not served:
            served.update((t.name, t) for t in exposed_tools(tools(), style))
        return served

    return by_name
