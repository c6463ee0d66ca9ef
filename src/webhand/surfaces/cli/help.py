"""The CLI's own help: a short overview grouped by capability (``webhand --help``), one topic's
(``webhand help GROUP`` or ``webhand help COMMAND``), and the closest commands to a mistyped one.

argparse's help lists every subcommand with its description, about 200 lines for the catalog;
people scan a page grouped by what they want to do, as ``git help`` shows it."""

from __future__ import annotations

import difflib
import textwrap

from webhand.surfaces.cli.tools import BUILTINS, GLOBAL_OPTIONS, load_specs

#: The catalog's capability groups as the help titles them, in the order it shows them.
_GROUP_TITLES = {
    "core": "Read and act on the page",
    "extra": "More actions",
    "vision": "Act at screenshot coordinates",
    "tabs": "Tabs",
    "storage": "Cookies, storage and saved logins",
    "files": "Files",
    "network": "Network",
    "inspect": "The page as data",
    "pdf": "PDF",
    "sessions": "Sessions",
    "human": "Hand over to a person",
    "debug": "Debugging",
    "fetch": "Without the browser",
    "page_tools": "The page's own tools (WebMCP)",
    "flows": "Flows: a task saved and run again",
}
#: The commands that are not tools, by what they are for; "setup" is a help topic as a group is.
_OWN_GROUPS = {
    "setup": ("Set-up, the daemon and servers", ["daemon", "doctor", "demo", "browsers", "profile", "dashboard",
                                                 "extension", "mcp", "schema"]),
    "history": ("Replay what a session did", ["export", "replay"]),
}
_WIDTH = 100


def _commands_by_group() -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for spec in load_specs()["commands"]:
        groups.setdefault(spec.get("group", "extra"), []).append(spec)
    return groups


def command_names() -> list[str]:
    """Every command a user may type (a tool's dashed alias too)."""
    names = sorted(BUILTINS)
    for spec in load_specs()["commands"]:
        names += [spec["command"], spec["command"].replace("_", "-")]
    return names


def overview() -> str:
    """``webhand --help``: the groups with their commands, the global options, where to read more."""
    lines = ["usage: webhand [OPTIONS] COMMAND [ARGS]   (options may come before or after the command)", "",
             "A real browser for AI agents, as commands; a background daemon keeps it between calls.",
             "Start with: webhand navigate URL, webhand snapshot, webhand click REF, webhand type REF TEXT", ""]
    groups = _commands_by_group()
    titled = [(title, group, [s["command"] for s in groups.get(group, [])]) for group, title in _GROUP_TITLES.items()]
    titled += [(title, group, names) for group, (title, names) in _OWN_GROUPS.items()]
    for title, group, names in titled:
        if names:  # a short group on its title's line, a long one wrapped under it
            heading = f"{title} ({group}):"
            one_line = f"{heading:<46}{'  '.join(names)}"
            lines += [one_line] if len(one_line) <= _WIDTH else \
                [heading, *textwrap.wrap("  ".join(names), _WIDTH, initial_indent="   ", subsequent_indent="   ")]
    lines += ["", "Global options (the names of the webhand.toml keys and WEBHAND_* variables):",
              *textwrap.wrap("  ".join(_option_usage(o) for o in GLOBAL_OPTIONS if o != "--headless"), _WIDTH,
                             initial_indent="   ", subsequent_indent="   "),
              "", "webhand help GROUP lists a group's commands with what each does; webhand help COMMAND (or",
              "webhand COMMAND --help) shows one command's arguments.", ""]
    return "\n".join(lines)


def _option_usage(option: str) -> str:
    values = {"--session": "NAME", "--config": "FILE", "--agent": "NAME", "--profile": "NAME",
              "--browser": "chromium|firefox", "--timeout": "SECONDS", "--storage-state": "FILE"}
    return f"{option} {values.get(option, 'VALUE')}" if GLOBAL_OPTIONS[option] else option


def topic_help(topic: str | None) -> tuple[str, int]:
    """``webhand help [TOPIC]`` for no topic or a group: (the text, the exit status); a command's
    help is its parser's (``main._cmd_help``)."""
    if not topic:
        return overview(), 0
    groups = _commands_by_group()
    if topic in groups:
        lines = [f"{_GROUP_TITLES.get(topic, topic)} ({topic}):"]
        for spec in groups[topic]:
            first = spec["description"].split(". ", 1)[0].rstrip(".")
            lines += textwrap.wrap(f"{spec['command']:<22}{first}.", _WIDTH, initial_indent="  ",
                                   subsequent_indent=" " * 24)
        return "\n".join(lines) + "\n\nwebhand help COMMAND shows a command's arguments.\n", 0
    if topic in _OWN_GROUPS:
        title, names = _OWN_GROUPS[topic]
        return f"{title} ({topic}): {', '.join(names)}\n\nwebhand help COMMAND shows one.\n", 0
    return unknown_command(topic, what="help topic") or "", 2


def unknown_command(word: str, what: str = "command") -> str:
    """"" when ``word`` is a command; else the refusal, with the closest few (``did you mean``)."""
    names = command_names()
    if what == "command" and word in names:
        return ""
    close = difflib.get_close_matches(word, names + ([*_commands_by_group(), *_OWN_GROUPS] if what != "command"
                                                      else []), n=4, cutoff=0.6)
    unique = list(dict.fromkeys(name.replace("-", "_") if name.replace("-", "_") in names else name for name in close))
    hint = f" Did you mean {', '.join(unique)}?" if unique else ""
    return f"webhand: {word!r} is not a webhand {what}.{hint} (webhand --help lists them.)\n"
