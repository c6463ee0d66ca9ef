"""Private: a flow made from a session's history (``browser_save_flow``, ``webhand flow save``).

The calls kept are those a replay needs (tools/flows/entries.py's ``replayable``: successful calls that
changed the page, with the screenshot a coordinate click is measured on); each ref becomes a
target key (``"@1"``) naming the ways recorded to find its element (session/recording.py), and the
call's outcome its ``Expect``. A typed value the model wrote as ``<secret>NAME</secret>`` stays so
(the history keeps what the model sent, masked). A typed literal the caller names becomes a
parameter: ``params={"email": "dan@example.org"}`` writes ``{{email}}`` wherever that literal was
typed (or navigated to), so the flow runs again with another value.
"""

from __future__ import annotations

from typing import Any

from webhand.errors import InvalidArgument
from webhand.tools.flows.entries import replayable
from webhand.tools.flows.format import TEXT_LIMIT, Flow, Param, Target, catalog
from webhand.tools.flows.store import check_name, parse_flow
from webhand.response import page_line
from webhand.session.recording import POINT_ARGUMENTS, REF_FIELDS

#: The Target fields a history entry's target carries (its ``selector`` is the export's copy of ``css``).
_TARGET_FIELDS = set(Target.model_fields)


def flow_from_history(entries: list[dict[str, Any]], name: str, *, first: int | None = None, last: int | None = None,
                      params: dict[str, str] | None = None, description: str = "") -> Flow:
    """The flow of ``entries`` (a session's history, ``SessionHistory.all()``), from history index
    ``first`` to ``last`` (both kept; None: the ends)."""
    check_name(name)
    params = params or {}
    picked = [(n, e) for n, e in replayable(entries)
              if (first is None or e["index"] >= first) and (last is None or e["index"] <= last)]
    if not picked:
        raise InvalidArgument("No call of that part of the history changed the page: there is nothing to save.",
                              "Act on the page first (browser_navigate, browser_click ...), or widen from/to "
                              "(browser_session_history shows the calls' numbers).")
    tools = catalog()
    steps: list[dict[str, Any]] = []
    for _, entry in picked:
        keys: dict[str, str] = {}
        targets: dict[str, dict[str, Any]] = {}

        def key_of(ref: str, entry: dict[str, Any] = entry, keys: dict[str, str] = keys,
                   targets: dict[str, dict[str, Any]] = targets) -> str:
            if ref not in keys:
                keys[ref] = f"@{len(keys) + 1}"
                recorded = entry["targets"].get(ref) or {}
                target = {k: _bounded(k, v) for k, v in recorded.items()
                          if k in _TARGET_FIELDS and v not in ("", [], {}, None)}
                if not target.get("css") and recorded.get("selector"):
                    target["css"] = recorded["selector"]
                targets[keys[ref]] = target
            return keys[ref]

        arguments = _with_keys(entry["arguments"], key_of)
        for point in POINT_ARGUMENTS.get(entry["tool"], {}):  # in order: a drag's start, then its end
            if point in entry["targets"]:
                key_of(point)  # the element under the point: acted on again at the same place of its box
        expect = {k: v for k, v in (entry.get("expect") or {}).items() if v}
        if entry.get("url_after"):
            expect["url"] = entry["url_after"]
        steps.append({"tool": entry["tool"], "arguments": arguments, "targets": targets, "expect": expect,
                      "note": _note(tools[entry["tool"]].name, targets)})
    start = picked[0][1].get("url_before", "") if picked[0][1]["tool"] != "browser_navigate" else ""
    unused = [p for p, literal in params.items()
              if not any(_mentions(s["arguments"], literal) for s in steps) and not _mentions(start, literal)]
    if unused:
        raise InvalidArgument(f"The parameter {page_line(unused[0], 64)} names a value no kept call typed or opened.",
                              "Give params as {\"name\": \"the value as it was typed\"}.")
    for param, literal in params.items():
        start = _replace(start, literal, "{{" + param + "}}")
        for step in steps:
            step["arguments"] = _replace(step["arguments"], literal, "{{" + param + "}}")
    return parse_flow({"name": name, "description": description, "start_url": start,
                       "params": {p: Param().model_dump() for p in params}, "steps": steps}, "being saved")


def _bounded(field: str, value: Any) -> Any:
    """A recorded way cut to what a flow keeps (a name read from a long snapshot line)."""
    if isinstance(value, str):
        return value[:2_000 if field == "css" else TEXT_LIMIT]
    return value


def _with_keys(value: Any, key_of: Any) -> Any:
    if isinstance(value, dict):
        return {k: key_of(v) if k in REF_FIELDS and isinstance(v, str) else _with_keys(v, key_of)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_with_keys(v, key_of) for v in value]
    return value


def _mentions(value: Any, literal: str) -> bool:
    if isinstance(value, str):
        return bool(literal) and literal in value
    if isinstance(value, dict):
        return any(_mentions(v, literal) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, literal) for v in value)
    return False


def _replace(value: Any, literal: str, placeholder: str) -> Any:
    if isinstance(value, str):
        return value.replace(literal, placeholder) if literal else value
    if isinstance(value, dict):
        return {k: _replace(v, literal, placeholder) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, literal, placeholder) for v in value]
    return value


def _note(tool: str, targets: dict[str, dict[str, Any]]) -> str:
    described = [f"{t.get('role', '')} {t.get('name', '')!r}".strip() for t in targets.values() if t.get("role")]
    return page_line(tool.removeprefix("browser_") + (" " + ", ".join(described) if described else ""), 300)
