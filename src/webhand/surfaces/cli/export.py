"""``webhand export``: a session's history as a script that runs again on a fresh page.

The history (session/history.py) keeps every call with its arguments. Exporting keeps the calls
that succeeded and changed something (reading tools, session tools, failed calls and actions whose
reply said nothing changed are left out) with the calls they depend on (the screenshot a
coordinate click is measured on, ``Tool.needs_before``), and turns each ref into the CSS selector recorded for it when the call ran: a ref is only
good for the page that gave it, a selector finds the element on a fresh load. A ref that has no
selector (an element inside a frame) stays, and the step is marked ``unresolved``.

Three forms: ``json`` (what ``webhand replay`` runs, with what each step should end with),
``python`` (a script on webhand's API) and ``cli`` (a shell script of ``webhand`` commands).

A history file is data, and may be crafted: it is validated against the entry's schema before
use (unknown fields and wrong types refused, tool names from the catalog, roles single words, each
step's arguments valid for its tool), and every recorded value reaches a script only through the
language's own quoting (``repr`` for Python, ``shlex.quote`` for the shell, after a ``--`` that ends
the options), or, in a comment, with its line breaks escaped (``response.page_line``).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from webhand.errors import InvalidArgument
from webhand.tools.flows.entries import RecordedEntry, RecordedTarget, first_problem, replayable, validate_entries  # noqa: F401
from webhand.session.recording import REF_FIELDS
from webhand.response import NAME_LIMIT, page_line

__all__ = ["RecordedEntry", "RecordedTarget", "load_entries", "render", "steps_of", "validate_entries"]

EXPORT_VERSION = 1


def load_entries(path: Path) -> list[dict[str, Any]]:
    """History entries from a file: a JSON export, a history spill file (.jsonl), or the JSON of
    browser_session_history's data (``{"entries": [...]}``) or of the dashboard's history."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidArgument(f"Cannot read {path}: {getattr(error, 'strerror', None) or error}.",
                              "Give a history file (.jsonl) or a JSON export.") from None
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        data = json.loads(text)
    except ValueError as error:
        raise InvalidArgument(f"{path} is not valid JSON: {error}.", "Give a history file or a JSON export.") from None
    if isinstance(data, dict) and isinstance(data.get("entries"), list):
        return data["entries"]
    if isinstance(data, list):
        return data
    raise InvalidArgument(f"{path} holds no history entries.", "Give a .jsonl history file or browser_session_history's JSON.")


def steps_of(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The replayable steps of a history (tools/flows/entries.py's ``replayable``: successful calls that
    changed the page, with the calls they depend on), refs made selectors."""
    return [_step(number, entry) for number, entry in replayable(entries)]


def _step(number: int, entry: dict[str, Any]) -> dict[str, Any]:
    """One history entry as a step of the export: its arguments checked against its tool's, refs
    made selectors, with what it should end with."""
    from webhand.tools import CATALOG

    tool = CATALOG[entry["tool"]]
    try:  # the arguments must be ones the tool takes: no unknown field becomes a flag or a key
        tool.input_model.model_validate(entry["arguments"])
    except ValidationError as error:
        raise InvalidArgument(f"Entry {number} of the history has arguments {tool.name} does not take: "
                              f"{first_problem(error)}.", "Export from a history file webhand wrote, unedited.") \
            from None
    fields = set(tool.input_model.model_fields)
    arguments, unresolved = _without_refs(entry["arguments"], entry["targets"], fields)
    step: dict[str, Any] = {"tool": tool.name, "arguments": arguments,
                            "expect": {"outcome": "ok", "url": entry.get("url_after", "")}}
    described = [f"{t['role']} {t['name']!r}" for t in (entry.get("targets") or {}).values() if t.get("role")]
    if described:
        step["target"] = ", ".join(described)
    if unresolved:
        step["unresolved"] = unresolved
    return step


def _without_refs(arguments: dict[str, Any], targets: dict[str, dict[str, str]],
                  fields: set[str]) -> tuple[dict[str, Any], list[str]]:
    out: dict[str, Any] = {}
    unresolved: list[str] = []
    for key, value in arguments.items():
        selector_field = REF_FIELDS.get(key)
        if selector_field and isinstance(value, str):
            selector = targets.get(value, {}).get("selector")
            if selector and (selector_field in fields or not fields):
                out[selector_field] = selector
                continue
            unresolved.append(value)
        if isinstance(value, list):  # fill_form's fields, each with its own ref
            items = []
            for item in value:
                if isinstance(item, dict):
                    converted, missing = _without_refs(item, targets, set())
                    items.append(converted)
                    unresolved += missing
                else:
                    items.append(item)
            out[key] = items
            continue
        out[key] = value
    return out, unresolved


def render(steps: list[dict[str, Any]], form: str, session: str) -> str:
    if form == "json":
        return json.dumps({"webhand_export": EXPORT_VERSION, "session": session, "steps": steps}, indent=1,
                          ensure_ascii=False) + "\n"
    if form == "python":
        return _python(steps, session)
    if form == "cli":
        return _cli(steps, session)
    raise InvalidArgument(f"Unknown export format {form!r}.", "Use python, cli or json.")


def _python(steps: list[dict[str, Any]], session: str) -> str:
    lines = [
        f"# Replays the webhand session {_comment(session)} on a fresh browser (made by `webhand export`).",
        "", "import asyncio", "", "import webhand", "", "",
        "async def main() -> None:",
        "    async with webhand.open_browser() as browser:",
    ]
    for number, step in enumerate(steps, 1):
        note = f"  # {_comment(step['target'])}" if step.get("target") else ""
        lines.append(f"        # step {number}{note}")
        lines.append(f"        reply = await browser.call({step['tool']!r}, {step['arguments']!r})")
        lines.append(f"        if reply.is_error:\n            raise SystemExit(f'step {number} failed: {{reply.text}}')")
        lines.append(f"        print('step {number}:', reply.text.splitlines()[0])")
    if not steps:
        lines.append("        pass")
    lines += ["", "", 'if __name__ == "__main__":', "    asyncio.run(main())", ""]
    return "\n".join(lines)


def _cli(steps: list[dict[str, Any]], session: str) -> str:
    from webhand.surfaces.cli.tools import load_specs

    specs = {c["tool"]: c for c in load_specs()["commands"]}
    lines = ["#!/bin/sh", f"# Replays the webhand session {_comment(session)} on a fresh browser (made by `webhand export`).",
             "set -e", 'S="replay-$$"', 'trap \'webhand close --session "$S" >/dev/null 2>&1 || true\' EXIT', ""]
    for number, step in enumerate(steps, 1):
        spec = specs[step["tool"]]
        if step.get("target"):
            lines.append(f"# step {number}: {_comment(step['target'])}")
        options, positionals = _cli_arguments(spec, step["arguments"])
        # Options first, then `--`: a typed text or a value that starts with "-" stays a value.
        lines.append(" ".join(["webhand", shlex.quote(spec["command"]), *options, '--session "$S"', "--", *positionals]))
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """A recorded value inside a comment line: its line breaks escaped, so it ends no line."""
    return page_line(text, NAME_LIMIT)


def _cli_arguments(spec: dict[str, Any], arguments: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The command's arguments as the CLI parser reads them: the flags, and the positional words
    (an unresolved ref, then the required fields in order), each quoted for the shell."""
    words: list[str] = []
    positionals: list[str] = []
    if "ref" in spec["fields"] and "ref" not in spec["required"]:
        ref = arguments.get("ref")
        # The parser's optional ref comes first and takes the first word when there are more than
        # the rest need: an empty one (no ref) keeps a list of values whole.
        if isinstance(ref, str) or any(spec["fields"].get(n, {}).get("type") == "array" for n in spec["required"]):
            positionals.append(shlex.quote(ref if isinstance(ref, str) else ""))
    for name in spec["required"]:
        if name in arguments:
            field = spec["fields"].get(name, {})
            scalar_list = field.get("type") == "array" and field.get("items", {}).get("type") in ("string", "number")
            positionals += [shlex.quote(str(v)) for v in arguments[name]] if scalar_list else \
                [shlex.quote(_word(arguments[name]))]
    for name, value in arguments.items():
        if name in spec["required"] or value is None or (name == "ref" and "ref" not in spec["required"]):
            continue
        field = spec["fields"].get(name, {})
        flag = "--" + name.replace("_", "-")
        if field.get("type") == "boolean":
            words.append(shlex.quote(flag if value else "--no-" + name.replace("_", "-")))
        elif field.get("type") == "array" and field.get("items", {}).get("type") in ("string", "number", "integer"):
            words += [shlex.quote(flag), *(shlex.quote(str(v)) for v in value)]
        else:
            words.append(shlex.quote(f"{flag}={_word(value)}"))  # one word: a value may start with "-"
    return words, positionals


def _word(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
