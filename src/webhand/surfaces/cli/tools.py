"""``webhand <tool> [args]``: one subcommand per catalog tool, generated from its input model.

The command is the tool name without ``browser_``; required fields are positional, the rest
are ``--flags``; ``ref`` is an optional first positional so that ``webhand click e3`` reads
naturally. Help text is the tool's and the fields' descriptions. The call itself runs in the
daemon, so the browser and its state outlive the command.

The parser is built from ``commands.json``, which ``command_specs()`` generates from the
catalog (``scripts/gen_tool_table.py`` writes it; a test checks it is current): a CLI call
that only forwards to the daemon must not pay for importing the catalog and its models.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

TYPE_CHECKING = False  # typing itself is not imported: a forwarded call must start fast
if TYPE_CHECKING:
    from typing import Any

#: Subcommands that are not tools; a tool whose short name is one of them keeps its full name.
BUILTINS = {"mcp", "demo", "doctor", "schema", "daemon", "help", "dashboard", "export", "replay", "browsers", "extension",
            "profile"}
COMMANDS_FILE = Path(__file__).with_name("commands.json")
#: Fields the CLI sets itself: ``--session`` picks the daemon conversation instead.
_HIDDEN_FIELDS = {"session"}
_TYPES = {"integer": int, "number": float, "string": str}
#: The parts of a field's JSON schema that the parser uses.
_FIELD_KEYS = ("type", "enum", "items", "description")


def command_specs() -> dict[str, Any]:
    """What the CLI needs of the catalog, as JSON data (the content of ``commands.json``)."""
    from webhand.tools import CAPABILITIES, CATALOG

    commands = []
    for tool in CATALOG.values():
        schema = tool.input_schema()
        fields = {name: {k: field[k] for k in _FIELD_KEYS if k in field}
                  for name, field in schema.get("properties", {}).items() if name not in _HIDDEN_FIELDS}
        for field in fields.values():
            if "items" in field:
                field["items"] = {k: v for k, v in field["items"].items() if k in ("type", "enum")}
        commands.append({"command": tool.short_name if tool.short_name not in BUILTINS else tool.name,
                         "tool": tool.name, "group": tool.capability, "description": tool.description, "fields": fields,
                         "required": [n for n in schema.get("required", []) if n in fields]})
    return {"capabilities": list(CAPABILITIES), "commands": commands}


@cache
def load_specs() -> dict[str, Any]:
    return json.loads(COMMANDS_FILE.read_text())


def find_command(name: str) -> dict[str, Any] | None:
    """The spec of the tool command ``name`` (or its dashed alias), if there is one."""
    for spec in load_specs()["commands"]:
        if name in (spec["command"], spec["command"].replace("_", "-")):
            return spec
    return None


#: The options every command takes, before or after its name (``webhand --profile work get_url`` and
#: ``webhand get_url --profile work`` are one command): option -> whether it takes a value. The
#: settings among them have the names of their config keys and ``WEBHAND_*`` variables
#: (``--headed`` is ``headless = false``); they apply when the daemon starts.
GLOBAL_OPTIONS = {"--session": True, "--json": False, "--config": True, "--agent": True, "--profile": True,
                  "--browser": True, "--timeout": True, "--headed": False, "--headless": False, "--storage-state": True}


def add_common_options(parser: argparse.ArgumentParser, *, own: Any = ()) -> None:
    """The global options (``GLOBAL_OPTIONS``) on one command's parser; ``own``: field names the
    command has already, which keep the command's meaning (a tool's ``timeout`` is that call's,
    ``session_create --profile`` the new session's)."""
    options = {
        "session": dict(default=os.environ.get("WEBHAND_SESSION"),
                        help="named browser session (env WEBHAND_SESSION); each has its own browser"),
        "json": dict(action="store_true", help="print the whole reply as JSON, for programs"),
        "config": dict(help="config file (default ./webhand.toml, then the user config dir)"),
        "agent": dict(help="agent profile of the config file ([agents.NAME.browser])"),
        "profile": dict(help="run the default session on this named profile, kept between sessions "
                        "(env WEBHAND_PROFILE; `webhand profile list`)"),
        "browser": dict(choices=["chromium", "firefox"],
                        help="drive Chromium (default) or Firefox (WebDriver BiDi); the same as --driver firefox "
                        "(env WEBHAND_DRIVER; WEBHAND_BROWSER, the old key, still read)"),
        "timeout": dict(type=float, help="default timeout of one operation, in seconds (env WEBHAND_TIMEOUT)"),
        "storage_state": dict(metavar="FILE", help="cookies and localStorage (as `webhand storage_state save FILE` "
                              "wrote them) loaded into each new session (env WEBHAND_STORAGE_STATE)"),
    }
    for name, how in options.items():
        if name not in own:
            parser.add_argument("--" + name.replace("_", "-"), **how)  # type: ignore[arg-type]
    if "headed" not in own:
        parser.add_argument("--headed", dest="headed", action="store_true", default=None,
                            help="show the browser's window (headless = false, env WEBHAND_HEADLESS=false)")
        parser.add_argument("--headless", dest="headed", action="store_false", help=argparse.SUPPRESS)


def add_tool_commands(sub: Any, only: str | None = None) -> None:
    """One subcommand per tool; with ``only``, just that command (the CLI's fast path)."""
    for spec in load_specs()["commands"]:
        name = spec["command"]
        if only is not None and only != name:
            continue
        aliases = [name.replace("_", "-")] if "_" in name else []
        parser = sub.add_parser(name, aliases=aliases, help=_escape(spec["description"]),
                                description=_escape(spec["description"]))
        _add_fields(parser, spec)
        add_common_options(parser, own=spec["fields"])
        parser.set_defaults(tool=spec["tool"], run=None)


def _add_fields(parser: argparse.ArgumentParser, spec: dict[str, Any]) -> None:
    required = set(spec["required"])
    properties = dict(spec["fields"])
    if "ref" in properties and "ref" not in required:
        parser.add_argument("ref", nargs="?", help=_escape(properties.pop("ref").get("description", "")))
    for name, field in properties.items():
        help_text = _escape(field.get("description", ""))
        kind = field.get("type")
        if kind == "array" and field.get("items", {}).get("type") not in _TYPES:
            kind = None  # a list of objects is given as one JSON argument
        if kind == "boolean":
            _add_boolean(parser, name, help_text, positional=name in required)
            continue
        if name in required and kind is None:
            parser.add_argument(name, type=_json_value, help=help_text + " (JSON)")
            continue
        if name in required:
            parser.add_argument(name, type=_TYPES.get(kind, str) if kind != "array" else str,
                                nargs="+" if kind == "array" else None, choices=field.get("enum"), help=help_text,
                                metavar=name.upper() if field.get("enum") else None)
            continue
        flag = "--" + name.replace("_", "-")
        if kind == "array":
            items = field.get("items", {})
            parser.add_argument(flag, dest=name, nargs="+", type=_TYPES.get(items.get("type"), str),
                                choices=items.get("enum"), default=None, help=help_text)
        elif kind in _TYPES:
            parser.add_argument(flag, dest=name, type=_TYPES[kind], choices=field.get("enum"), default=None,
                                help=help_text)
        else:  # objects and unions: given as JSON
            parser.add_argument(flag, dest=name, type=_json_value, default=None, help=help_text + " (JSON)")


_TRUE_WORDS = ("true", "yes", "on", "1")
_FALSE_WORDS = ("false", "no", "off", "0")


def _truth(text: str) -> bool:
    word = text.strip().lower()
    if word in _TRUE_WORDS or word in _FALSE_WORDS:
        return word in _TRUE_WORDS
    raise argparse.ArgumentTypeError(f"{text!r} is not true or false")


def _add_boolean(parser: argparse.ArgumentParser, name: str, help_text: str, *, positional: bool) -> None:
    """A yes/no field, in every form people type: ``--accept``, ``--no-accept``, ``--accept false``,
    ``--accept=no`` and, for a required one, a bare ``true``/``false`` word."""
    flag = name.replace("_", "-")
    parser.add_argument(f"--{flag}", dest=name, nargs="?", const=True, type=_truth, default=None,
                        metavar="true|false", help=help_text)
    parser.add_argument(f"--no-{flag}", dest=name, action="store_false", help=f"the same as --{flag} false")
    if positional:  # read into a field of its own: a positional's absent value would undo the flag's
        parser.add_argument(_POSITIONAL + name, nargs="?", type=_truth, metavar=name.upper(),
                            help=f"true or false (or --{flag} / --no-{flag})")


#: Where a required yes/no field typed as a bare word lands before it joins the call's arguments.
_POSITIONAL = "given_"


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # a plain string is a valid value of many unions


def _escape(text: str) -> str:
    return text.replace("%", "%%")


def _is_path_field(name: str) -> bool:
    return name in ("path", "paths") or name.endswith(("_path", "_paths", "_file", "_dir"))


def _absolute(value: Any, cwd: str) -> Any:
    if isinstance(value, list):
        return [_absolute(v, cwd) for v in value]
    if isinstance(value, str) and value and not os.path.isabs(value):  # absolute ones (a cookie's "/") stay
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(value)))
    return value


def tool_arguments(args: argparse.Namespace, cwd: str | None = None) -> dict[str, Any]:
    """The call's arguments; file paths are made absolute against the command's directory
    (``cwd``, default this process's), because the daemon runs in the one it was first started from."""
    fields = next(spec["fields"] for spec in load_specs()["commands"] if spec["tool"] == args.tool)
    given = {name: getattr(args, name) for name in fields if getattr(args, name, None) is not None}
    for name in fields:
        word = getattr(args, _POSITIONAL + name, None)
        if word is not None and name not in given:
            given[name] = word
    if given.get("ref") == "":  # an export's placeholder: no ref, the words after it are the values
        del given["ref"]
    base = cwd or os.getcwd()
    return {name: _absolute(value, base) if _is_path_field(name) else value for name, value in given.items()}


class CommandLineError(Exception):
    """A forwarded command line the parser refused; the text is what argparse would have printed."""


class _ForwardedParser(argparse.ArgumentParser):
    # Parsing runs inside the daemon for another process: report, never print or exit.
    def error(self, message: str) -> None:  # type: ignore[override]
        raise CommandLineError(f"{self.format_usage()}{self.prog}: error: {message}\n")

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        raise CommandLineError(message or "")


@dataclass(frozen=True)
class ForwardedCall:
    session: str | None
    tool: str
    arguments: dict[str, Any]
    origin: dict[str, str]
    json: bool


def parse_forwarded(argv: list[str], cwd: str, env: dict[str, str]) -> ForwardedCall | None:
    """A tool command line typed in ``cwd`` with ``env``, parsed by the daemon for the thin client
    (``forward``); None when ``argv`` is no tool command. Raises ``CommandLineError``."""
    spec = find_command(argv[0]) if argv else None
    if spec is None:
        return None
    args = _forwarded_parser(spec["command"]).parse_args(argv)
    if not any(a == "--session" or a.startswith("--session=") for a in argv):
        args.session = env.get("WEBHAND_SESSION")  # the caller's environment, not the daemon's
    return ForwardedCall(args.session, args.tool, tool_arguments(args, cwd), settings_origin(args, cwd, env), args.json)


@cache
def _forwarded_parser(command: str) -> _ForwardedParser:
    """One parser per command, built on its first use: parsing leaves the parser as it was."""
    parser = _ForwardedParser(prog="webhand")
    add_tool_commands(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"), command)
    return parser


def settings_origin(args: argparse.Namespace, cwd: str, env: Mapping[str, str]) -> dict[str, str]:
    """The settings a command asks for that a running daemon may not have: the config file it would
    read (given, or found from ``cwd``), and the agent, profile, browser and window it names (flags,
    else their ``WEBHAND_*`` variables). Only what was asked is listed: a command that names no
    profile runs in the daemon's, whatever it is (``daemon.settings_difference`` compares)."""
    from webhand.security.locations import find_config_file

    explicit = getattr(args, "config", None) or env.get("WEBHAND_CONFIG")
    path = find_config_file(os.path.join(cwd, os.path.expanduser(explicit)) if explicit else None, env=dict(env),
                            cwd=Path(cwd))
    asked = {"config": str(path.resolve())} if path else {}
    for key in ("agent", "profile", "browser", "storage_state"):
        value = getattr(args, key, None) or env.get(f"WEBHAND_{key.upper()}")
        if value:
            asked[key] = os.path.join(cwd, os.path.expanduser(value)) if key == "storage_state" else value
    spec = find_command(args.command) if getattr(args, "tool", None) else None
    if getattr(args, "timeout", None) and (spec is None or "timeout" not in spec["fields"]):
        asked["timeout"] = f"{float(args.timeout):g}"  # a tool's own timeout is that call's, not a setting
    headed = getattr(args, "headed", None)
    if headed is None and env.get("WEBHAND_HEADLESS"):
        headed = env["WEBHAND_HEADLESS"].strip().lower() in _FALSE_WORDS
    if headed is not None:
        asked["window"] = "shown" if headed else "headless"
    return asked


#: The longest timeout a config allows (``Settings.timeout``'s bound). The fast path does not load
#: the settings, so this bounds its wait for a daemon that never answers; the daemon itself ends
#: every call at the call's own timeout.
_LONGEST_TIMEOUT = 600.0


def run_tool_command(args: argparse.Namespace, start_args: list[str], launch_timeout: float, timeout: float,
                     origin: dict[str, str] | None = None) -> int:
    """Send the call to the daemon (starting it if needed), print the reply, return the exit status."""
    from webhand.surfaces.cli.daemon_client import request

    arguments = tool_arguments(args)
    wait = float(arguments.get("timeout") or timeout) + 30.0  # the daemon enforces the real timeout
    reply = request({"op": "call", "session": args.session, "tool": args.tool, "arguments": arguments,
                     "origin": origin or {}, "cwd": os.getcwd()}, timeout=wait, start=start_args,
                    launch_timeout=launch_timeout)
    return print_reply(args, reply)


def forward_to_running_daemon(args: argparse.Namespace, origin: dict[str, str]) -> int | None:
    """The CLI's fast path: send the call to a daemon that is already running, print the reply
    and return the exit status; None when no daemon runs (the caller starts one)."""
    from webhand.surfaces.cli.daemon_client import DaemonNotRunning, request

    arguments = tool_arguments(args)
    wait = float(arguments.get("timeout") or _LONGEST_TIMEOUT) + 30.0
    try:
        reply = request({"op": "call", "session": args.session, "tool": args.tool, "arguments": arguments,
                         "origin": origin, "cwd": os.getcwd()}, timeout=wait)
    except DaemonNotRunning:
        return None
    return print_reply(args, reply)


def print_reply(args: argparse.Namespace, reply: dict[str, Any]) -> int:
    out, err, code = render_reply(args.json, reply)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


@cache
def _tool_mention() -> Any:
    """A pattern for a catalog tool named in a reply, with the verb that asks for it ("Call browser_snapshot")."""
    import re

    names = sorted((spec["tool"] for spec in load_specs()["commands"]), key=len, reverse=True)
    argument = r"""[a-z_]+=(?:"[^"]*"|'[^']*'|[^\s,;)]+)"""
    return re.compile(r"(?:\b([Cc]all|[Uu]se) )?\b(" + "|".join(map(re.escape, names)) + r")\b((?: " + argument + ")*)")


def cli_wording(text: str) -> str:
    """A reply as a CLI user reads it: the tools its hints name ("Call browser_snapshot") become
    the commands to run ("run `webhand snapshot`"). Replies are written once, for every surface,
    in the catalog's names; this is the CLI's one rendering of them."""
    commands = {spec["tool"]: spec["command"] for spec in load_specs()["commands"]}

    def command(match: Any) -> str:
        verb, arguments = match.group(1), match.group(3).split()
        flags = [f"--{name.replace('_', '-')} {value}" for name, _, value in (a.partition("=") for a in arguments)]
        said = f"`{' '.join(['webhand', commands[match.group(2)], *flags])}`"
        return f"{'Run' if verb[0] == verb[0].upper() else 'run'} {said}" if verb else said

    return _tool_mention().sub(command, text)


def render_reply(as_json: bool, reply: dict[str, Any]) -> tuple[str, str, int]:
    """What the CLI prints for a daemon's reply: (stdout, stderr, exit status)."""
    err = f"webhand: warning: {reply['warning']}\n" if reply.get("warning") else ""
    if not reply.get("ok"):
        return "", err + f"webhand: {cli_wording(str(reply.get('error')))}\n", 1
    result = dict(reply["result"], text=cli_wording(reply["result"]["text"]))
    if as_json:
        return json.dumps(result, indent=1, ensure_ascii=False) + "\n", err, 1 if result["is_error"] else 0
    if result["is_error"]:
        return "", err + result["text"] + "\n", 1
    lines = [result["text"]]
    lines += [image["path"] for image in result["images"]  # screenshots already say where they went
              if image.get("path") and image["path"] not in result["text"]]
    return "\n".join(lines) + "\n", err, 0
