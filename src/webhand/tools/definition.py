"""What a tool is: a name, a description for the model, an input model, flags and a handler.

A tool module declares tools with the ``@tool`` decorator; the input model is taken from the
handler's ``args`` annotation. Every surface is generated from these definitions.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, model_validator

from webhand.config import Settings
from webhand.durations import Timeout
from webhand.errors import InvalidArgument, WebhandError
from webhand.response import Response

Handler = Callable[[Any, Any, Response], Awaitable[None]]

#: Capability groups a host can switch on. ``core`` is on by default.
CAPABILITIES = {
    # The default group is what an agent needs on most pages; every tool in it is paid for in
    # tokens on every model request, so the less frequent ones live in "extra".
    "core": "navigate, back, snapshot, find, text, click, type, keys, hover, select, fill a form, wait, screenshot, "
            "console, evaluate, dialogs, close",
    "extra": "less frequent actions: batches of steps, drag, focus, scroll, check/uncheck, forward, reload, "
             "current URL, resize, clearing the console",
    "inspect": "the page's HTML and its state as JSON, for programs",
    "tabs": "open, list, focus and close tabs",
    "storage": "cookies, localStorage/sessionStorage, saved storage state",
    "files": "uploads, downloads, reading images from disk",
    "pdf": "save the page as PDF",
    "sessions": "named browser sessions",
    "network": "the requests the page made (status, source, headers, bodies), mocks (routes), offline and throttling",
    "fetch": "web_fetch: read a page over plain HTTP, without the browser (falls back to it when needed)",
    "human": "ask a person to take over in the dashboard (a login, a CAPTCHA, a second factor)",
    "debug": "service workers, performance (web vitals, counters), comparing screenshots, recording the tab as video",
}


class ToolArgs(BaseModel):
    """Base of every input model: unknown fields are refused, so typos fail loudly."""

    model_config = ConfigDict(extra="forbid")


class PageArgs(ToolArgs):
    session: str | None = Field(None, description="Named browser session; omit for the default one.")


class ElementArgs(PageArgs):
    ref: str | None = Field(None, description="Element ref from browser_snapshot, e.g. e12.")
    selector: str | None = Field(None, description="CSS selector, when there is no ref.")
    timeout: Timeout = None  # how long the element may take to be actionable (default action_timeout)

    @model_validator(mode="after")
    def _one_target(self) -> "ElementArgs":
        if bool(self.ref) == bool(self.selector):
            raise ValueError("give exactly one of `ref` and `selector`")
        return self


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_model: type[ToolArgs]
    handle: Handler
    capability: str = "core"
    read_only: bool = False
    destructive: bool = False
    needs_session: bool = True
    enabled: Callable[[Settings], bool] | None = None
    #: Shape of ``Response.data(...)`` on success, when the tool promises one (MCP outputSchema).
    output_model: type[BaseModel] | None = None
    #: Runs while a JavaScript dialog is open (every other page tool is refused until it is answered).
    during_dialog: bool = False
    #: The handler gets the conversation's ``ConversationSessions`` instead of a session.
    manages_sessions: bool = False

    async def run(self, target: Any, args: ToolArgs, response: Response) -> None:
        """Run the handler on ``target`` (a session, the conversation's sessions or the settings),
        then say what its action changed when it declared so (``Response.report_changes``): the one
        place every action's reply gets its report of changes."""
        try:
            await self.handle(target, args, response)
        except WebhandError:
            await response.say_changes(failed=True)
            raise
        await response.say_changes()

    def is_enabled(self, settings: Settings) -> bool:
        return self.enabled is None or self.enabled(settings)

    def parse(self, arguments: dict[str, Any] | None) -> ToolArgs:
        from pydantic import ValidationError

        try:
            return self.input_model.model_validate(arguments or {})
        except ValidationError as error:
            problems = []
            for item in error.errors():
                where = ".".join(str(p) for p in item["loc"]) or "arguments"
                message = item["msg"].removeprefix("Value error, ")
                problems.append(f"{where}: {message}" if item["type"] != "extra_forbidden" else f"{where}: unknown argument")
            raise InvalidArgument(f"Invalid arguments for {self.name}: " + "; ".join(problems) + ".",
                                  "Fix them and call again.") from None

    def input_schema(self) -> dict[str, Any]:
        return compact_schema(self.input_model.model_json_schema())

    def output_schema(self) -> dict[str, Any] | None:
        return compact_schema(self.output_model.model_json_schema(), keep_null=True) if self.output_model else None

    @property
    def short_name(self) -> str:
        """The name without the ``browser_`` prefix: the CLI command and the single tool's action."""
        return self.name.removeprefix("browser_")


def compact_schema(schema: dict[str, Any], *, keep_null: bool = False) -> dict[str, Any]:
    """Drop titles, inline $defs and flatten ``anyOf [X, null]``: the model pays for every token.

    Inputs may leave an optional field out instead of sending null, so ``X | None`` becomes ``X``;
    outputs (``keep_null``) really contain nulls, so there it stays a union.
    """
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(dict(defs[node["$ref"].split("/")[-1]]))
            # additionalProperties=false only restates that unknown fields are refused, which
            # parse() does with a clearer message; dropping it saves ~30 characters per tool.
            out = {k: walk(v) if k != "properties" else {name: walk(f) for name, f in v.items()}
                   for k, v in node.items() if k != "title" and not (k == "additionalProperties" and v is False)}
            options = out.get("anyOf")
            if isinstance(options, list) and not keep_null:
                kept = [o for o in options if o != {"type": "null"}]
                if len(kept) == 1 and len(kept) < len(options):
                    del out["anyOf"]
                    out.update(kept[0])
            if out.get("default", ...) is None:
                del out["default"]
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


_REGISTRY: dict[str, Tool] = {}


def tool(name: str, *, capability: str = "core", read_only: bool = False, destructive: bool = False,
         needs_session: bool = True, enabled: Callable[[Settings], bool] | None = None,
         during_dialog: bool = False, manages_sessions: bool = False,
         output: type[BaseModel] | None = None) -> Callable[[Handler], Handler]:
    """Declare a tool. The docstring's first paragraph is the model-facing description."""

    def register(handler: Handler) -> Handler:
        hints = get_type_hints(handler)
        model = hints.get("args")
        if not (inspect.isclass(model) and issubclass(model, ToolArgs)):
            raise TypeError(f"{handler.__name__}: annotate `args` with a ToolArgs model")
        if name in _REGISTRY:
            raise ValueError(f"tool {name} is declared twice")
        if capability not in CAPABILITIES:
            raise ValueError(f"tool {name}: unknown capability {capability}")
        description = inspect.cleandoc(handler.__doc__ or "").split("\n\n")[0].replace("\n", " ")
        _REGISTRY[name] = Tool(name, description, model, handler, capability, read_only, destructive,
                               needs_session, enabled, output,
                               during_dialog=during_dialog, manages_sessions=manages_sessions)
        return handler

    return register


def registered() -> dict[str, Tool]:
    return dict(_REGISTRY)
