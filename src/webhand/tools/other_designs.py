"""Other designs' calls, read as webhand's: their tool names, argument names and argument forms.

Models and integrators copy calls from other browser tools' designs (Playwright MCP, Chrome
DevTools MCP, browser-use, Playwright's Python API); every refusal of such a call costs the model a
turn. So webhand takes them as written, without advertising them: a schema shows one name per
argument and tools/list only webhand's tool names (tests/test_schemas.py checks), and
tests/test_design_calls.py replays each design's example calls.

Two readings live here, each done in one place:
- a call's tool name: ``our_call`` (every surface goes through it, via ``surfaces/exposure.by_name``
  or ``Conversation.call`` for a Python caller);
- its arguments: ``read_other_forms``, run by every input model (``ToolArgs`` in definition.py)
  before validation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container
from typing import Any, get_origin

from pydantic import BaseModel


#: The other designs' names for webhand's arguments -> webhand's names, the first one the tool
#: has. They are accepted by every tool that has the field, and never shown in a schema (one name
#: per argument for the model).
#: camelCase forms of our snake_case names (``fullPage``, ``textGone``) need no entry here.
OTHER_NAMES: dict[str, tuple[str, ...]] = {
    "element_ref": ("ref",),
    "uid": ("ref",),  # Chrome DevTools MCP
    "script": ("expression",),
    "await": ("await_promise",),
    "target_id": ("index",),
    "pageIdx": ("index",),  # Chrome DevTools MCP's select_page / close_page
    "session_name": ("session", "name"),  # a page tool's session; browser_session_create's name
    "viewport_width": ("width",),
    "viewport_height": ("height",),
    "actions": ("steps",),
    "static": ("include_static",),
    "value": ("text",),  # Chrome DevTools MCP's fill {uid, value}
    "dblClick": ("double_click",),
    "pageSize": ("limit",),
}

#: The other designs' tool names -> (webhand's tool, arguments the name implies). A call by one
#: of these names runs webhand's tool; tools/list shows only webhand's names.
OTHER_TOOL_NAMES: dict[str, tuple[str, dict[str, Any]]] = {
    # Playwright MCP (its other tools have webhand's names)
    "browser_evaluate": ("browser_eval", {}),
    "browser_navigate_back": ("browser_back", {}),
    "browser_navigate_forward": ("browser_forward", {}),
    "browser_console_messages": ("browser_recent_console_logs", {}),
    "browser_file_upload": ("browser_upload_file", {}),
    # Chrome DevTools MCP
    "navigate_page": ("browser_navigate", {}),
    "new_page": ("browser_tabs", {"action": "open"}),
    "list_pages": ("browser_tabs", {"action": "list"}),
    "select_page": ("browser_tabs", {"action": "focus"}),
    "close_page": ("browser_tabs", {"action": "close"}),
    "take_snapshot": ("browser_snapshot", {}),
    "take_screenshot": ("browser_take_screenshot", {}),
    "click": ("browser_click", {}),
    "hover": ("browser_hover", {}),
    "fill": ("browser_type", {}),
    "press_key": ("browser_press_key", {}),
    "evaluate_script": ("browser_eval", {}),
    "list_console_messages": ("browser_recent_console_logs", {}),
    "list_network_requests": ("browser_network_requests", {}),
    "resize_page": ("browser_resize", {}),
}

#: Arguments of other designs that webhand has no use for: accepted and left out. ``element`` is
#: Playwright MCP's human-readable description of the element a ``ref`` names (for permission
#: prompts); ``filename`` asks for a file name, where webhand names its files itself and the reply
#: says where each one went.
UNUSED_ARGUMENTS: dict[str, str] = {
    "element": "",
    "filename": "`filename` is not used: webhand names the files it saves itself (the reply says where).",
    "filePath": "`filePath` is not used: webhand names the files it saves itself (the reply says where).",
    "includeSnapshot": "`includeSnapshot` is not used: the reply says what the action changed; call "
                       "browser_snapshot for the page's refs.",
}

#: ``target`` (Playwright MCP) is a ref from a snapshot or a selector: which one, by its form.
_REF_FORM = re.compile(r"(?:f\d+)?e\d+")
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])([A-Z])")


def read_other_forms(model: type[BaseModel], data: Any, notes: list[str] | None) -> Any:
    """The arguments as webhand names them: other designs' names renamed (a name the model has
    itself is never touched), ``target`` split into ref or selector, a list given as a JSON string
    decoded, unused arguments of other designs dropped (with a note when that matters)."""
    if not isinstance(data, dict):
        return data
    fields = model.model_fields
    names: dict[str, tuple[str, ...]] = {**OTHER_NAMES, **getattr(model, "other_names", {})}
    unused = {**UNUSED_ARGUMENTS, **getattr(model, "unused_arguments", {})}
    out: dict[str, Any] = {}
    for key, value in data.items():
        # A name the model has is its own, unless it is a hidden field standing in for the other
        # name elsewhere (``viewport_width`` is browser_resize's ``width``).
        if not isinstance(key, str) or (key in fields and not (
                fields[key].exclude and any(n in fields for n in names.get(key, ())))):
            out[key] = value
            continue
        if key == "target" and "ref" in fields and isinstance(value, str):
            ours: str | None = "ref" if _REF_FORM.fullmatch(value.strip()) else "selector"
        else:
            snake = _CAMEL_HUMP.sub(lambda m: "_" + m.group(1).lower(), key)
            candidates = names.get(key, ()) + ((snake,) if snake != key else ())
            ours = next((name for name in candidates if name in fields), None)
        if ours is not None and (ours in data or ours in out):
            raise ValueError(f"`{key}` and `{ours}` name the same argument; give one")
        if ours is not None:
            out[ours] = value
        elif key in unused:
            if unused[key] and notes is not None:
                notes.append(unused[key])
        else:
            out[key] = value  # refused below as unknown, or as two names of one argument
    for name, value in out.items():
        if isinstance(value, str) and name in fields and get_origin(fields[name].annotation) is list \
                and value.lstrip().startswith("["):
            try:
                out[name] = json.loads(value)
            except ValueError:
                pass  # refused by the field's own check, which says what it wants
    return out


def our_call(name: str, arguments: dict[str, Any] | None,
             served: Container[str]) -> tuple[str, dict[str, Any] | None]:
    """The call as webhand runs it: another design's tool name (``OTHER_TOOL_NAMES``) whose tool is
    ``served`` becomes webhand's name, with the arguments that name implies added (``new_page`` is
    ``browser_tabs`` with ``action: "open"``). Any other call comes back as it is: webhand's own
    names, and names nobody serves (refused by the caller, which knows how to say so)."""
    if name in served:
        return name, arguments
    ours, implied = OTHER_TOOL_NAMES.get(name, ("", {}))
    if ours not in served:
        return name, arguments
    given = arguments if isinstance(arguments, dict) else {}
    return ours, ({**given, **implied} if implied else arguments)
