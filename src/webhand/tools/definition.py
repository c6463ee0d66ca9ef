"""What a tool is: a name, a description for the model, an input model, its kind and a handler.

A tool module declares tools with the ``@tool`` decorator. The handler's annotations state the
rest: its first parameter's type is the tool's kind (what it runs on, ``KINDS``) and its ``args``
annotation the input model. Every surface is generated from these definitions.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, model_validator
from pydantic.json_schema import SkipJsonSchema

from webhand.config import Settings
from webhand.durations import Timeout
from webhand.errors import InvalidArgument, WebhandError
from webhand.response import Response
from webhand.session.conversation import ConversationSessions, ToolKind
from webhand.session.session import Session
from webhand.tools.other_designs import read_other_forms

Handler = Callable[[Any, Any, Response], Awaitable[None]]

#: A tool's kind, by the type of its handler's first parameter: what the handler runs on.
KINDS: dict[type, ToolKind] = {
    Session: "page",  # a page tool runs on one of the conversation's sessions (``args.session``)
    ConversationSessions: "sessions",  # a sessions tool manages the conversation's sessions
    Settings: "plain",  # a plain tool needs no browser (reading an image from disk)
}


def kind_of(handler: Handler) -> ToolKind:
    """The kind the handler's first parameter states (``KINDS``); anything else is refused, since
    the host would not know what to run it on."""
    first = next(iter(inspect.signature(handler).parameters.values()), None)
    annotation = first.annotation if first is not None else inspect.Parameter.empty
    if isinstance(annotation, str):  # ``from __future__ import annotations``: a name in the handler's module
        annotation = getattr(handler, "__globals__", {}).get(annotation, annotation)
    kind = KINDS.get(annotation) if isinstance(annotation, type) else None
    if kind is None:
        shown = "none" if annotation is inspect.Parameter.empty else getattr(annotation, "__name__", str(annotation))
        raise TypeError(f"{getattr(handler, '__name__', handler)}: annotate the first parameter with what the tool "
                        f"runs on: Session (a page tool), ConversationSessions (a sessions tool) or Settings (a plain "
                        f"tool), not {shown}")
    return kind

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
    "flows": "flows: a task saved from the session's history and run again without the model (save, list, run)",
    "vision": "acting at pixel coordinates of the last screenshot (vision and computer-use models): mouse move, click, "
              "drag, wheel, buttons, typing at the focus, key holds, zoom",
}


class ToolArgs(BaseModel):
    """Base of every input model: unknown fields are refused, so typos fail loudly; the other
    designs' names and forms of an argument (other_designs.py) are read as webhand's own."""

    model_config = ConfigDict(extra="forbid")
    #: A model's own other names, over ``OTHER_NAMES`` (e.g. a step's ``type`` for ``action``).
    other_names: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: A model's own arguments of other designs that it has no use for, over ``UNUSED_ARGUMENTS``
    #: (name -> the note the reply gives, or "" for none).
    unused_arguments: ClassVar[dict[str, str]] = {}
    #: How arguments were read where that is not what they say (aliases, milliseconds): told in the reply.
    #: A default, not ``default_factory=list``: pydantic copies a private default for each model
    #: (an empty list is copied, never shared), while a factory that is a builtin made it read
    #: ``list``'s signature from its text on every validation, about 2 ms of every tool call.
    _reading_notes: list[str] = PrivateAttr(default=[])

    @model_validator(mode="before")
    @classmethod
    def _other_forms(cls, data: Any, info: ValidationInfo) -> Any:
        notes = info.context.get("notes") if isinstance(info.context, dict) else None
        return read_other_forms(cls, data, notes)

    @property
    def reading_notes(self) -> list[str]:
        return self._reading_notes


class PageArgs(ToolArgs):
    session: str | None = Field(None, description="Named browser session; omit for the default one.")
    # The Python/Playwright design sizes the viewport on any page call; accepted, not advertised
    # (browser_resize is the tool for it). The host applies it before the tool runs.
    viewport_width: SkipJsonSchema[int | None] = Field(None, ge=1, le=16384, exclude=True)
    viewport_height: SkipJsonSchema[int | None] = Field(None, ge=1, le=16384, exclude=True)


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
    enabled: Callable[[Settings], bool] | None = None
    #: Shape of ``Response.data(...)`` on success, when the tool promises one (MCP outputSchema).
    output_model: type[BaseModel] | None = None
    #: Runs while a JavaScript dialog is open (every other page tool is refused until it is answered).
    during_dialog: bool = False
    #: Tools whose last successful call before this one a replay must run again, even when they
    #: change nothing themselves (a coordinate click is measured on the last screenshot): exports keep them.
    needs_before: tuple[str, ...] = ()
    #: What the handler runs on, read from its first parameter's annotation (``kind_of``).
    kind: ToolKind = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", kind_of(self.handle))

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

        notes: list[str] = []
        try:
            args = self.input_model.model_validate(arguments or {}, context={"notes": notes})
            args.reading_notes.extend(dict.fromkeys(notes))
            return args
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
         enabled: Callable[[Settings], bool] | None = None, during_dialog: bool = False,
         output: type[BaseModel] | None = None, needs_before: tuple[str, ...] = ()) -> Callable[[Handler], Handler]:
    """Declare a tool. The docstring's first paragraph is the model-facing description; the
    handler's first parameter's type is the tool's kind (``KINDS``), its ``args`` type the input model."""

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
                               enabled=enabled, output_model=output, during_dialog=during_dialog,
                               needs_before=needs_before)
        return handler

    return register


def registered() -> dict[str, Tool]:
    return dict(_REGISTRY)
