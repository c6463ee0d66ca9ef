"""Private: the flow file, a task saved from a session's history to run again without the model.

A flow is JSON in the user's flows folder: a name, the parameters it takes, where it starts, and
its steps. A step is one tool call as the model made it, with every ref replaced by a target key
(``"@1"``) that names a ``Target``: the several ways to find that element on a fresh page, in the
order a person would trust them, so the step still finds its element when the next build of the
app renames classes, reorders rows or inserts a banner. A step also keeps what it was seen to do
(``Expect``), which a replay checks before going on.

Typed values may hold ``{{param}}`` (a parameter of the flow, given when it runs) or
``<secret>NAME</secret>`` (a secret, by name: its value is never in the file).

A flow file is data, and may be crafted: ``Flow.model_validate`` refuses unknown fields, wrong
types, tools outside ``FLOW_TOOLS``, arguments the tool does not take, target keys no step
defines and parameters no step declares, before anything runs or any script is written. Every
recorded value reaches an exported script only through the language's own quoting.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from webhand.tools.definition import registered

FLOW_VERSION = 1
#: A flow's name: a file name in the flows folder, never a path.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
#: A parameter's name, as ``{{name}}`` writes it in a typed value.
PARAM_PATTERN = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}")
#: A target key in a step's arguments, in place of a ref.
TARGET_KEY_PATTERN = r"^@[0-9]{1,4}$"
#: Tools that run code the page or the model wrote, or manage sessions and people, never run from a flow.
NOT_IN_FLOWS = frozenset({"browser_eval", "browser_close", "browser_request_human", "browser_session_create",
                          "browser_session_destroy", "browser_route", "browser_unroute", "browser_recording",
                          "browser_clear_console_logs", "browser_network_conditions"})
#: Longest text kept for one way of finding an element (a name, a label, a text).
TEXT_LIMIT = 300
#: Most steps one flow may hold.
STEPS_LIMIT = 1_000

_ROLE = Field("", pattern=r"^([a-z][a-z-]{0,39})?$")  # a role is one word (page/roles.js)


def catalog() -> dict[str, Any]:
    """The tool catalog (name -> ``Tool``): every tool declared with ``@tool``. This package is
    part of ``webhand.tools``, so importing any of it has imported every tool first."""
    return registered()


def flow_tools() -> frozenset[str]:
    """The catalog's tools a flow step may call: page tools that act, less ``NOT_IN_FLOWS``."""
    CATALOG = catalog()
    return frozenset(name for name, tool in CATALOG.items()
                     if tool.kind == "page" and not tool.read_only and name not in NOT_IN_FLOWS) \
        | {"browser_take_screenshot"}  # a coordinate step is measured on the screenshot before it


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Ancestor(_Strict):
    """A named element around the target: "the Delete button in the row named 'bob'"."""

    role: str = _ROLE
    name: str = Field("", max_length=TEXT_LIMIT)


class Point(_Strict):
    """Where a coordinate action hit its element, as fractions of the element's box (0 left/top,
    1 right/bottom): a replay clicks the same place in the element wherever it now is."""

    x: float = Field(ge=0, le=1)
    y: float = Field(ge=0, le=1)


class Target(_Strict):
    """The ways to find one element, in the order a replay tries them; a way left empty is not tried.

    A replay takes the first way that finds exactly one element; when that is not the first way
    recorded, the step is healed if the element's role and name agree with ``role`` and ``name``."""

    role: str = _ROLE
    name: str = Field("", max_length=TEXT_LIMIT)  # the accessible name, exactly Chromium's
    ancestors: list[Ancestor] = Field(default_factory=list, max_length=3)  # nearest first
    label: str = Field("", max_length=TEXT_LIMIT)
    placeholder: str = Field("", max_length=TEXT_LIMIT)
    # Attributes that outlive a build: ``id`` (when not generated), ``data-testid``, ``name``, ``href``.
    attributes: dict[Literal["id", "data-testid", "name", "href"], str] = Field(default_factory=dict)
    text: str = Field("", max_length=TEXT_LIMIT)  # its own visible text
    css: str = Field("", max_length=2_000)  # a CSS path from the document (the stable selector)
    frame: list[str] = Field(default_factory=list, max_length=10)  # CSS paths of the iframes, top first
    point: Point | None = None  # coordinate actions only

    @field_validator("attributes")
    @classmethod
    def _bounded(cls, attributes: dict[str, str]) -> dict[str, str]:
        if any(len(v) > 2_000 for v in attributes.values()):
            raise ValueError("an attribute value is longer than 2000 characters")
        return attributes


class Expect(_Strict):
    """What the step was seen to do when it was recorded; a replay checks each that is set."""

    url: str = Field("", max_length=8_000)  # the active tab's URL after the step (masked)
    url_pattern: str = Field("", max_length=8_000)  # a URL glob the URL must match (engine/url_glob.py)
    new_page: bool = False  # the step opened a new tab or window
    download: str = Field("", max_length=TEXT_LIMIT)  # the suggested file name of a download it started
    dialog: str = Field("", pattern=r"^(|alert|confirm|prompt|beforeunload)$")  # a dialog it opened
    changes: list[str] = Field(default_factory=list, max_length=50)  # the change lines of its reply


class Step(_Strict):
    tool: str
    # The arguments as the tool takes them, each ref replaced by a key of ``targets``.
    arguments: dict[str, Any] = Field(default_factory=dict)
    targets: dict[str, Target] = Field(default_factory=dict)
    expect: Expect = Field(default_factory=Expect)
    note: str = Field("", max_length=TEXT_LIMIT)  # for people: "click button 'Save'"

    @field_validator("tool")
    @classmethod
    def _a_flow_tool(cls, name: str) -> str:
        if name not in flow_tools():
            raise ValueError("not a tool a flow may call")
        return name

    @field_validator("targets")
    @classmethod
    def _target_keys(cls, targets: dict[str, Target]) -> dict[str, Target]:
        if any(not re.match(TARGET_KEY_PATTERN, key) for key in targets):
            raise ValueError("a target key is not @ and a number")
        return targets

    @model_validator(mode="after")
    def _arguments_fit_the_tool(self) -> "Step":
        CATALOG = catalog()
        try:
            CATALOG[self.tool].input_model.model_validate(self.arguments)
        except ValidationError as error:
            problem = error.errors()[0]
            raise ValueError(f"arguments {CATALOG[self.tool].name} does not take at "
                             f"{'.'.join(str(p)[:60] for p in problem['loc']) or 'the arguments'}") from None
        missing = [key for key in target_keys_in(self.arguments) if key not in self.targets]
        if missing:
            raise ValueError("a ref names a target the step does not define")
        return self


class Param(_Strict):
    description: str = Field("", max_length=TEXT_LIMIT)
    default: str | None = Field(None, max_length=10_000)  # None: the caller must give it


class Flow(_Strict):
    webhand_flow: Literal[1] = FLOW_VERSION
    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field("", max_length=2_000)
    start_url: str = Field("", max_length=8_000)  # navigated to first, when set
    params: dict[str, Param] = Field(default_factory=dict)
    steps: list[Step] = Field(default_factory=list, max_length=STEPS_LIMIT)

    @field_validator("params")
    @classmethod
    def _param_names(cls, params: dict[str, Param]) -> dict[str, Param]:
        if any(not PARAM_PATTERN.fullmatch("{{" + name + "}}") for name in params):
            raise ValueError("a parameter name is not a word")
        return params

    @model_validator(mode="after")
    def _params_declared(self) -> "Flow":
        used = {name for step in self.steps for name in params_in(step.arguments)} | params_in(self.start_url)
        if used - set(self.params):
            raise ValueError("a step uses a parameter the flow does not declare")
        return self


def target_keys_in(value: Any) -> list[str]:
    """The target keys (``"@1"``) a step's arguments name, in ref fields at any depth."""
    from webhand.session.recording import REF_FIELDS

    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in REF_FIELDS and isinstance(item, str) and re.match(TARGET_KEY_PATTERN, item):
                found.append(item)
            else:
                found += target_keys_in(item)
    elif isinstance(value, list):
        for item in value:
            found += target_keys_in(item)
    return found


def params_in(value: Any) -> set[str]:
    """The ``{{param}}`` names in a step's string arguments, at any depth."""
    if isinstance(value, str):
        return set(PARAM_PATTERN.findall(value))
    if isinstance(value, dict):
        return {name for item in value.values() for name in params_in(item)}
    if isinstance(value, list):
        return {name for item in value for name in params_in(item)}
    return set()
