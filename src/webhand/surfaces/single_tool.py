"""The single-tool style: one ``browser`` tool whose ``action`` field picks a catalog tool.

Some hosts cap how many tools a model may see, or pay per tool; they get one tool. It is built
from the catalog at start: each catalog tool becomes an action (its name without ``browser_``),
a few get friendlier names (``screenshot``, ``evaluate``, ``open`` ...), and the element
actions (click, type, press_key, hover ...) are folded into ``act`` with an ``act_kind`` (and
taken by their own name too, ``{action: "click"}``, as other designs call them). The
argument object is the union of every action's arguments; each call is checked by the catalog
tool's own input model, so this module holds no tool logic, only the routing table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from webhand.caller import NO_CALLER, Caller
from webhand.errors import InvalidArgument
from webhand.host import Conversation
from webhand.response import ToolResult
from webhand.tools import Tool

SINGLE_TOOL_NAME = "browser"

#: Preferred action name -> catalog tools it may stand for (the first one served wins). Names of
#: tools that do not exist (yet) are harmless: an alias whose tools are all missing is dropped.
ACTION_ALIASES: dict[str, tuple[str, ...]] = {
    "launch": ("browser_launch", "browser_start", "browser_session_create"),
    "close": ("browser_close",),
    "navigate": ("browser_navigate",),
    "content": ("browser_content", "browser_get_content", "browser_page_content", "browser_readable", "browser_get_text"),
    "snapshot": ("browser_snapshot",),
    "screenshot": ("browser_take_screenshot", "browser_screenshot"),
    "evaluate": ("browser_eval", "browser_evaluate"),
}

#: ``act`` kinds -> catalog tools, folded into one action because they all target one element.
ACT_KINDS: dict[str, tuple[str, ...]] = {
    "click": ("browser_click",),
    "type": ("browser_type",),
    "press_key": ("browser_press_key", "browser_press"),
    "hover": ("browser_hover",),
    "scroll_into_view": ("browser_scroll_into_view", "browser_scroll_to"),
    "focus": ("browser_focus", "browser_focus_element"),
    "select_option": ("browser_select_option",),
    "check": ("browser_check",),
}

#: ``act`` kinds served by a tool that keeps its own action too, with the fields the route fixes:
#: ``scroll_into_view`` is browser_scroll with an element and no pixels.
SHARED_ACT_KINDS: dict[str, tuple[str, dict[str, Any], str]] = {
    "scroll_into_view": ("browser_scroll", {"x": 0, "y": 0}, "Scroll an element into view."),
}

#: Element actions called by their own name (``{action: "click"}``), as other designs call them,
#: instead of ``act`` + ``act_kind``: accepted, not listed in the schema (one form for the model).
#: The other designs' argument names (``element_ref``, ``script`` ...) are read by every catalog
#: tool itself (``OTHER_NAMES`` in tools/other_designs.py).
DIRECT_ACT_KINDS: dict[str, str] = {"fill": "type", "press": "press_key", "select": "select_option",
                                    "scroll_to": "scroll_into_view"}

#: Reading actions that take a ``url``: the page is opened first, then read.
OPEN_THEN_READ = ("snapshot", "screenshot")

#: Catalog tools with an operation field of their own, split into one action per operation:
#: tool -> (its field, {action: value of the field}).
SPLIT_ACTIONS: dict[str, tuple[str, dict[str, str]]] = {
    "browser_tabs": ("action", {"tabs": "list", "open": "open", "focus": "focus", "close_tab": "close"}),
}

#: Catalog tool -> {field of the browser tool: field of the catalog tool}, where the shared
#: argument object needs another name than the tool's own (e.g. two meanings of one name).
ARG_RENAMES: dict[str, dict[str, str]] = {}

#: Fields of the browser tool itself; a catalog tool's field of the same name is renamed to
#: ``<action>_<field>`` (e.g. browser_cookies' ``action`` becomes ``cookies_action``).
_RESERVED_FIELDS = ("action", "act_kind")

#: Fields every page action takes; described once instead of in each action's line.
_COMMON_FIELDS = {"session"}


@dataclass(frozen=True)
class Route:
    action: str
    tool: Tool
    act_kind: str | None = None
    renames: dict[str, str] = field(default_factory=dict)  # browser tool field -> catalog tool field
    fixed: dict[str, Any] = field(default_factory=dict)  # catalog tool fields this route sets itself

    @property
    def call_form(self) -> str:
        """How the model calls this route, used in replies instead of the catalog tool name."""
        kind = f', act_kind="{self.act_kind}"' if self.act_kind else ""
        return f'{SINGLE_TOOL_NAME}(action="{self.action}"{kind})'


class SingleTool:
    """The ``browser`` tool over a set of served catalog tools."""

    name = SINGLE_TOOL_NAME

    def __init__(self, tools: Iterable[Tool], *, hidden_fields: set[str] | None = None) -> None:
        served = {t.name: t for t in tools}
        self.hidden = set(hidden_fields or ())
        self.routes: dict[tuple[str, str | None], Route] = {}
        claimed: set[str] = set()
        for kind, candidates in ACT_KINDS.items():
            if (tool := _first(served, candidates)) is not None and tool.name not in claimed:
                self._add(Route("act", tool, kind, _renames(tool, "act")))
                claimed.add(tool.name)
        for kind, (name, fixed, _) in SHARED_ACT_KINDS.items():
            if name in served and ("act", kind) not in self.routes:
                self._add(Route("act", served[name], kind, _renames(served[name], "act"), dict(fixed)))
        for name, (operation, actions) in SPLIT_ACTIONS.items():
            if name in served and name not in claimed:
                for action, value in actions.items():
                    self._add(Route(action, served[name], None, _renames(served[name], action, skip=operation),
                                    {operation: value}))
                claimed.add(name)
        for action, candidates in ACTION_ALIASES.items():
            if (tool := _first(served, candidates)) is not None and tool.name not in claimed:
                self._add(Route(action, tool, None, _renames(tool, action)))
                claimed.add(tool.name)
        taken = {action for action, _ in self.routes}
        for tool in served.values():
            if tool.name not in claimed:
                action = tool.short_name if tool.short_name not in taken else tool.name
                self._add(Route(action, tool, None, _renames(tool, action)))
                taken.add(action)
        # Split tools name their first action (e.g. browser_tabs -> tabs): dict keeps the first.
        self._call_forms: dict[str, str] = {}
        for route in sorted(self.routes.values(), key=lambda r: r.act_kind in SHARED_ACT_KINDS):
            self._call_forms.setdefault(route.tool.name, route.call_form)  # a shared kind is not the tool's name
        names = sorted(self._call_forms, key=len, reverse=True)
        self._tool_names = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None

    def _add(self, route: Route) -> None:
        self.routes[(route.action, route.act_kind)] = route

    # -- what the model sees -------------------------------------------------------------------
    @property
    def actions(self) -> list[str]:
        return list(dict.fromkeys(action for action, _ in self.routes))

    @property
    def read_only(self) -> bool:
        return all(r.tool.read_only for r in self.routes.values())

    @property
    def destructive(self) -> bool:
        return any(r.tool.destructive for r in self.routes.values())

    def description(self) -> str:
        lines = ["A real headless Chromium. `action` picks the operation; pass only the fields it lists ([..] = optional)."]
        done: set[str] = set()
        for route in self.routes.values():
            if route.act_kind:
                shared = SHARED_ACT_KINDS.get(route.act_kind)
                what = shared[2] if shared else route.tool.description
                lines.append(f"- act/{route.act_kind}({self._signature(route)}): {self._rewrite(what)}")
            elif route.tool.name not in done:  # a split tool is one line: "tabs|open|focus|close_tab(...)"
                done.add(route.tool.name)
                label = "|".join(r.action for r in self.routes.values() if r.tool is route.tool and not r.act_kind)
                lines.append(f"- {label}({self._signature(route)}): {self._rewrite(route.tool.description)}")
        return "\n".join(lines)

    def input_schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {
            "action": {"type": "string", "enum": self.actions, "description": "The operation to run."}}
        kinds = [kind for _, kind in self.routes if kind]
        if kinds:
            properties["act_kind"] = {"type": "string", "enum": kinds, "description": "For action act: what to do to the element."}
        for route in self.routes.values():
            for name, schema in self._fields(route).items():
                schema = self._rewrite_descriptions(schema)
                properties[name] = _merge(properties[name], schema) if name in properties else dict(schema)
        return {"type": "object", "properties": properties, "required": ["action"], "additionalProperties": False}

    def _rewrite_descriptions(self, schema: Any) -> Any:
        if isinstance(schema, dict):
            return {k: self._rewrite(v) if k == "description" and isinstance(v, str) else self._rewrite_descriptions(v)
                    for k, v in schema.items()}
        if isinstance(schema, list):
            return [self._rewrite_descriptions(v) for v in schema]
        return schema

    def _fields(self, route: Route) -> dict[str, Any]:
        """The route's fields as the browser tool names them (fixed and hidden ones left out)."""
        inverse = {tool_field: own for own, tool_field in route.renames.items()}
        properties = route.tool.input_schema().get("properties", {})
        return {inverse.get(name, name): value for name, value in properties.items()
                if name not in self.hidden and name not in route.fixed}

    def _signature(self, route: Route) -> str:
        inverse = {tool_field: own for own, tool_field in route.renames.items()}
        required = set(route.tool.input_schema().get("required", []))
        names = [n for n in route.tool.input_schema().get("properties", {})
                 if n not in _COMMON_FIELDS and n not in self.hidden and n not in route.fixed]
        opens = ["[url]"] if route.action in OPEN_THEN_READ and ("navigate", None) in self.routes else []
        return ", ".join(opens + [inverse.get(n, n) if n in required else f"[{inverse.get(n, n)}]" for n in names])

    # -- running a call ------------------------------------------------------------------------
    def route(self, arguments: dict[str, Any] | None) -> tuple[Route, dict[str, Any]]:
        """The catalog tool and its arguments for one call of the browser tool."""
        given = {k: v for k, v in (arguments or {}).items() if v is not None}  # strict-mode models send nulls
        action = given.pop("action", None)
        kind = given.pop("act_kind", None)
        if action is None:
            raise InvalidArgument("The browser tool needs an `action`.", "Actions: " + ", ".join(self.actions) + ".")
        if not isinstance(action, str) or not isinstance(kind, (str, type(None))):
            raise InvalidArgument("`action` and `act_kind` must be strings.",
                                  "Actions: " + ", ".join(self.actions) + ".")
        if action != "act":
            kind = None
            if (action, None) not in self.routes:  # {action: "click"}: an element action by its own name
                direct = DIRECT_ACT_KINDS.get(action, action)
                if ("act", direct) in self.routes:
                    action, kind = "act", direct
        route = self.routes.get((action, kind))
        if route is None:
            if action == "act" and kind in SHARED_ACT_KINDS:
                raise InvalidArgument(f"act_kind {kind!r} needs {SHARED_ACT_KINDS[kind][0]}, which is not served here.",
                                      "Serve the extra group (--caps core,extra), or act on the element directly: "
                                      "click, type and hover scroll it into view themselves.")
            if action == "act":
                kinds = ", ".join(k for _, k in self.routes if k)
                raise InvalidArgument(f"act_kind {kind!r} is not one of: {kinds}.", "Call again with one of them.")
            kinds = [k for _, k in self.routes if k]
            element = (f' Element actions ({", ".join(kinds)}) are action="act" with act_kind, e.g. '
                       f'{SINGLE_TOOL_NAME}(action="act", act_kind="click", ref="e3").') if kinds else ""
            raise InvalidArgument(f"Unknown action {action!r}.",
                                  "Actions: " + ", ".join(self.actions) + "." + element)
        return route, {**{route.renames.get(k, k): v for k, v in given.items()}, **route.fixed}

    async def call(self, context: Conversation, arguments: dict[str, Any] | None, caller: Caller = NO_CALLER) -> ToolResult:
        if (arguments or {}).get("action") == "launch" and ("launch", None) not in self.routes \
                and not (arguments or {}).get("name"):
            # The other design starts its browser with `launch`; here the first page call does.
            return ToolResult(f'Ready: the default session starts with the first page action, e.g. '
                              f'{SINGLE_TOOL_NAME}(action="navigate", url=...).')
        try:
            route, args = self.route(arguments)
        except InvalidArgument as error:
            return ToolResult(f"Error: {error}", [], {"error": type(error).__name__, "message": str(error)}, True)
        opened: ToolResult | None = None
        if route.action in OPEN_THEN_READ and "url" in args and ("navigate", None) in self.routes:
            # {action: "snapshot", url: ...}: open the page, then read it (the other designs' form).
            opening = {"url": args.pop("url"), **({"session": args["session"]} if "session" in args else {})}
            opened = await context.call(self.routes[("navigate", None)].tool.name, opening, caller)
            if opened.is_error:
                opened.text = self._rewrite(opened.text)
                return opened
        result = await context.call(route.tool.name, args, caller)
        if opened is not None:
            result.text = f"{opened.text}\n\n{result.text}"
        result.text = self._rewrite(result.text)
        if result.data and isinstance(result.data.get("message"), str):
            result.data = {**result.data, "message": self._rewrite(result.data["message"])}
        return result

    def _rewrite(self, text: str) -> str:
        """Replies and descriptions name catalog tools (``call browser_snapshot``); the model here
        only knows the browser tool, so name the action it would call instead."""
        if self._tool_names is None:
            return text
        return self._tool_names.sub(lambda m: self._call_forms[m.group(1)], text)


def _renames(tool: Tool, action: str, skip: str | None = None) -> dict[str, str]:
    renames = dict(ARG_RENAMES.get(tool.name, {}))
    for name in _RESERVED_FIELDS:
        if name != skip and name in tool.input_schema().get("properties", {}):
            renames[f"{tool.short_name}_{name}"] = name
    return renames


def _first(served: dict[str, Tool], candidates: tuple[str, ...]) -> Tool | None:
    return next((served[name] for name in candidates if name in served), None)


def _merge(existing: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """One property shared by several actions: same schema keeps the first description; string
    enums are united; anything else becomes ``anyOf`` so every action's values stay valid."""
    bare_old = {k: v for k, v in existing.items() if k not in ("description", "default")}
    bare_new = {k: v for k, v in new.items() if k not in ("description", "default")}
    if bare_old == bare_new:
        return existing
    description = _join(existing.get("description"), new.get("description"))
    if "enum" in bare_old and "enum" in bare_new and bare_old.get("type") == bare_new.get("type"):
        merged = dict(bare_old, enum=list(dict.fromkeys(bare_old["enum"] + bare_new["enum"])))
    else:
        options = existing.get("anyOf") or [bare_old]
        options = [o for o in options] + ([bare_new] if bare_new not in options else [])
        merged = {"anyOf": options}
    if description:
        merged["description"] = description
    return merged


def _join(first: str | None, second: str | None) -> str:
    parts = [p for p in (first, second) if p]
    return " / ".join(dict.fromkeys(p for text in parts for p in text.split(" / ")))


def dump_schema(tools: Iterable[Tool]) -> str:
    """The browser tool's schema as JSON, for eyeballing (``python -m webhand.surfaces.single_tool``)."""
    single = SingleTool(tools)
    return json.dumps({"description": single.description(), "input_schema": single.input_schema()}, indent=1)


if __name__ == "__main__":
    from webhand.tools import CATALOG

    print(dump_schema(CATALOG.values()))
