"""``webhand <tool> [args]``: one subcommand per catalog tool, generated from its input model.

The command is the tool name without ``browser_``; required fields are positional, the rest
are ``--flags``; ``ref`` is an optional first positional so that ``webhand click e3`` reads
naturally. Help text is the tool's and the fields' descriptions. The call itself runs in the
daemon, so the browser and its state outlive the command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from webhand.tools import CATALOG, Tool

#: Fields the CLI sets itself: ``--session`` picks the daemon conversation instead.
_HIDDEN_FIELDS = {"session"}
_TYPES = {"integer": int, "number": float, "string": str}


def command_name(tool: Tool, reserved: set[str]) -> str:
    return tool.short_name if tool.short_name not in reserved else tool.name


def add_common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", default=os.environ.get("WEBHAND_SESSION"),
                        help="named browser session (env WEBHAND_SESSION); each has its own browser")
    parser.add_argument("--json", action="store_true", help="print the whole reply as JSON, for programs")
    parser.add_argument("--config", help="config file (default ./webhand.toml, then the user config dir)")
    parser.add_argument("--agent", help="agent profile of the config file ([agents.NAME.browser])")


def add_tool_commands(sub: Any, reserved: set[str]) -> None:
    for tool in CATALOG.values():
        name = command_name(tool, reserved)
        aliases = [name.replace("_", "-")] if "_" in name else []
        parser = sub.add_parser(name, aliases=aliases, help=_escape(tool.description),
                                description=_escape(tool.description))
        _add_fields(parser, tool)
        add_common_options(parser)
        parser.set_defaults(tool=tool.name, run=None)


def _add_fields(parser: argparse.ArgumentParser, tool: Tool) -> None:
    schema = tool.input_schema()
    required = set(schema.get("required", []))
    properties = {k: v for k, v in schema.get("properties", {}).items() if k not in _HIDDEN_FIELDS}
    if "ref" in properties and "ref" not in required:
        parser.add_argument("ref", nargs="?", help=_escape(properties.pop("ref").get("description", "")))
    for name, field in properties.items():
        help_text = _escape(field.get("description", ""))
        kind = field.get("type")
        if kind == "array" and field.get("items", {}).get("type") not in _TYPES:
            kind = None  # a list of objects is given as one JSON argument
        if name in required and kind is None:
            parser.add_argument(name, type=_json_value, help=help_text + " (JSON)")
            continue
        if name in required:
            parser.add_argument(name, type=_TYPES.get(kind, str) if kind != "array" else str,
                                nargs="+" if kind == "array" else None, choices=field.get("enum"), help=help_text,
                                metavar=name.upper() if field.get("enum") else None)
            continue
        flag = "--" + name.replace("_", "-")
        if kind == "boolean":
            parser.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        elif kind == "array":
            items = field.get("items", {})
            parser.add_argument(flag, dest=name, nargs="+", type=_TYPES.get(items.get("type"), str),
                                choices=items.get("enum"), default=None, help=help_text)
        elif kind in _TYPES:
            parser.add_argument(flag, dest=name, type=_TYPES[kind], choices=field.get("enum"), default=None,
                                help=help_text)
        else:  # objects and unions: given as JSON
            parser.add_argument(flag, dest=name, type=_json_value, default=None, help=help_text + " (JSON)")


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # a plain string is a valid value of many unions


def _escape(text: str) -> str:
    return text.replace("%", "%%")


def _is_path_field(name: str) -> bool:
    return name in ("path", "paths") or name.endswith(("_path", "_paths", "_file", "_dir"))


def _absolute(value: Any) -> Any:
    if isinstance(value, list):
        return [_absolute(v) for v in value]
    if isinstance(value, str) and value and not os.path.isabs(value):  # absolute ones (a cookie's "/") stay
        return os.path.abspath(os.path.expanduser(value))
    return value


def tool_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The call's arguments; file paths are made absolute here, because the daemon runs in the
    directory it was first started from, not in this command's."""
    tool = CATALOG[args.tool]
    fields = set(tool.input_schema().get("properties", {})) - _HIDDEN_FIELDS
    given = {name: getattr(args, name) for name in fields if getattr(args, name, None) is not None}
    return {name: _absolute(value) if _is_path_field(name) else value for name, value in given.items()}


def run_tool_command(args: argparse.Namespace, start_args: list[str], launch_timeout: float, timeout: float,
                     origin: str = "") -> int:
    """Send the call to the daemon (starting it if needed), print the reply, return the exit status."""
    from webhand.surfaces.daemon_client import request

    arguments = tool_arguments(args)
    wait = float(arguments.get("timeout") or timeout) + 30.0  # the daemon enforces the real timeout
    reply = request({"op": "call", "session": args.session, "tool": args.tool, "arguments": arguments,
                     "origin": origin}, timeout=wait, start=start_args, launch_timeout=launch_timeout)
    if reply.get("warning"):
        print(f"webhand: warning: {reply['warning']}", file=sys.stderr)
    if not reply.get("ok"):
        print(f"webhand: {reply.get('error')}", file=sys.stderr)
        return 1
    result = reply["result"]
    if args.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return 1 if result["is_error"] else 0
    if result["is_error"]:
        print(result["text"], file=sys.stderr)
        return 1
    print(result["text"])
    for image in result["images"]:  # screenshots already say where they went; other images may not
        if image.get("path") and image["path"] not in result["text"]:
            print(image["path"])
    return 0
