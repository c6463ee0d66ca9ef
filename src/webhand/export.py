"""``webhand export``: a session's history as a script that runs again on a fresh page.

The history (session/history.py) keeps every call with its arguments. Exporting keeps the calls
that changed something and succeeded (reading tools, session tools and failed calls are left
out), and turns each ref into the CSS selector recorded for it when the call ran: a ref is only
good for the page that gave it, a selector finds the element on a fresh load. A ref that has no
selector (an element inside a frame) stays, and the step is marked ``unresolved``.

Three forms: ``json`` (what ``webhand replay`` runs, with what each step should end with),
``python`` (a script on webhand's API) and ``cli`` (a shell script of ``webhand`` commands).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from webhand.errors import InvalidArgument
from webhand.session.recording import REF_FIELDS

EXPORT_VERSION = 1
#: Tools that change nothing a replay needs, or that manage sessions and people, not the page.
_LEFT_OUT = {"browser_close", "browser_request_human", "browser_wait_for_download"}


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
    """The replayable steps of a history: successful calls that act on the page, refs made selectors."""
    from webhand.tools import CATALOG

    steps = []
    for entry in entries:
        tool = CATALOG.get(entry.get("tool", ""))
        if tool is None or entry.get("outcome") != "ok" or tool.read_only or tool.manages_sessions \
                or not tool.needs_session or tool.name in _LEFT_OUT:
            continue
        fields = set(tool.input_model.model_fields)
        arguments, unresolved = _without_refs(entry.get("arguments") or {}, entry.get("targets") or {}, fields)
        step: dict[str, Any] = {"tool": tool.name, "arguments": arguments,
                                "expect": {"outcome": "ok", "url": entry.get("url_after", "")}}
        described = [f"{t['role']} {t['name']!r}" for t in (entry.get("targets") or {}).values() if t.get("role")]
        if described:
            step["target"] = ", ".join(described)
        if unresolved:
            step["unresolved"] = unresolved
        steps.append(step)
    return steps


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
        '"""Replays the webhand session ' + repr(session) + ' on a fresh browser (made by `webhand export`)."""',
        "", "import asyncio", "", "import webhand", "", "",
        "async def main() -> None:",
        "    async with webhand.open_browser() as browser:",
    ]
    for number, step in enumerate(steps, 1):
        note = f"  # {step['target']}" if step.get("target") else ""
        lines.append(f"        # step {number}{note}")
        lines.append(f"        reply = await browser.call({step['tool']!r}, {step['arguments']!r})")
        lines.append(f"        if reply.is_error:\n            raise SystemExit(f'step {number} failed: {{reply.text}}')")
        lines.append(f"        print('step {number}:', reply.text.splitlines()[0])")
    if not steps:
        lines.append("        pass")
    lines += ["", "", 'if __name__ == "__main__":', "    asyncio.run(main())", ""]
    return "\n".join(lines)


def _cli(steps: list[dict[str, Any]], session: str) -> str:
    from webhand.surfaces.cli_tools import load_specs

    specs = {c["tool"]: c for c in load_specs()["commands"]}
    lines = ["#!/bin/sh", f"# Replays the webhand session {session!r} on a fresh browser (made by `webhand export`).",
             "set -e", 'S="replay-$$"', 'trap \'webhand close --session "$S" >/dev/null 2>&1 || true\' EXIT', ""]
    for number, step in enumerate(steps, 1):
        spec = specs[step["tool"]]
        if step.get("target"):
            lines.append(f"# step {number}: {step['target']}")
        lines.append(" ".join(["webhand", spec["command"], *_cli_arguments(spec, step["arguments"]), '--session "$S"']))
    return "\n".join(lines) + "\n"


def _cli_arguments(spec: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """The command's arguments as the CLI parser reads them: required fields in order, then flags."""
    words: list[str] = []
    for name in spec["required"]:
        if name in arguments:
            field = spec["fields"].get(name, {})
            scalar_list = field.get("type") == "array" and field.get("items", {}).get("type") in ("string", "number")
            words += [shlex.quote(str(v)) for v in arguments[name]] if scalar_list else \
                [shlex.quote(_word(arguments[name]))]
    for name, value in arguments.items():
        if name in spec["required"] or value is None:
            continue
        field = spec["fields"].get(name, {})
        flag = "--" + name.replace("_", "-")
        if field.get("type") == "boolean":
            words.append(flag if value else "--no-" + name.replace("_", "-"))
        elif field.get("type") == "array" and field.get("items", {}).get("type") in ("string", "number", "integer"):
            words += [flag, *(shlex.quote(str(v)) for v in value)]
        else:
            words += [flag, shlex.quote(_word(value))]
    return words


def _word(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
