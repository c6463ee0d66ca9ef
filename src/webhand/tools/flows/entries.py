"""Private: a session's history entries as data, and which of them a replay runs.

A history file (session/history.py) is data and may be crafted: ``validate_entries`` checks each
entry against the schema ``HistoryEntry.to_dict`` writes (unknown fields and wrong types refused,
tool names from the catalog, roles single words) before anything reads it, naming the field that
does not fit, never quoting its value. ``replayable`` picks the calls a replay needs: the exports
(surfaces/cli/export.py) and the flows saved from a history (tools/flows/save.py) both start from it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from webhand.errors import InvalidArgument
from webhand.tools.flows.format import TEXT_LIMIT, Ancestor, catalog
from webhand.response import page_line

#: Tools that change nothing a replay needs, or that manage sessions and people, not the page.
LEFT_OUT = {"browser_close", "browser_request_human", "browser_wait_for_download"}

_ROLE = Field("", pattern=r"^([a-z][a-z-]{0,39})?$")  # a role is one word (page/roles.js)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RecordedPoint(_Strict):
    x: float = Field(ge=0, le=1)
    y: float = Field(ge=0, le=1)


class RecordedTarget(_Strict):
    """What ``record_call`` keeps of one element a call named (session/recording.py): the ways of
    tools/flows/format.py's Target, and ``selector``, the CSS path an export uses."""

    role: str = _ROLE
    name: str = Field("", max_length=2_000)
    selector: str = Field("", max_length=2_000)
    ancestors: list[Ancestor] = Field(default_factory=list, max_length=3)
    label: str = Field("", max_length=TEXT_LIMIT)
    placeholder: str = Field("", max_length=TEXT_LIMIT)
    attributes: dict[Literal["id", "data-testid", "name", "href"], str] = Field(default_factory=dict)
    text: str = Field("", max_length=TEXT_LIMIT)
    css: str = Field("", max_length=2_000)
    frame: list[str] = Field(default_factory=list, max_length=10)
    point: RecordedPoint | None = None


class RecordedExpect(_Strict):
    new_page: bool = False
    download: str = Field("", max_length=TEXT_LIMIT)
    dialog: str = Field("", pattern=r"^(|alert|confirm|prompt|beforeunload)$")
    changes: list[str] = Field(default_factory=list, max_length=50)


class RecordedEntry(_Strict):
    """One history entry as ``HistoryEntry.to_dict`` writes it (the dashboard sends ``thumbnail``
    as a flag)."""

    index: int = Field(ge=1)
    tool: str
    arguments: dict[str, Any]
    started_at: float = 0.0
    url_before: str = ""
    outcome: Literal["ok", "error", "timeout", "cancelled", "running"]
    message: str = ""
    duration_ms: int = Field(0, ge=0)
    url_after: str = ""
    reply_chars: int = Field(0, ge=0)
    thumbnail: str | bool | None = None
    targets: dict[str, RecordedTarget] = Field(default_factory=dict)
    unchanged: bool = False
    expect: RecordedExpect = Field(default_factory=RecordedExpect)

    @field_validator("tool")
    @classmethod
    def _known_tool(cls, name: str) -> str:
        if name not in catalog():
            raise ValueError("not a webhand tool")
        return name


def validate_entries(entries: Any) -> list[dict[str, Any]]:
    """``entries`` checked against the entry schema; the first that does not fit is refused, naming
    its field (never quoting its value: the file may be crafted)."""
    if not isinstance(entries, list):
        raise InvalidArgument("The history is not a list of entries.", "Give a history file webhand wrote.")
    checked = []
    for number, raw in enumerate(entries, 1):
        try:
            checked.append(RecordedEntry.model_validate(raw).model_dump())
        except ValidationError as error:
            raise InvalidArgument(f"Entry {number} of the history is not one webhand records: {first_problem(error)}.",
                                  "Export from a history file webhand wrote (history/*.jsonl), unedited.") from None
    return checked


def first_problem(error: ValidationError, whole: str = "the entry") -> str:
    """Where a validation failed and why, naming the field (its value is never quoted)."""
    problem = error.errors()[0]
    where = ".".join(page_line(str(part), 60) for part in problem["loc"]) or whole
    return f"{where}: {problem['msg']}"


def replayable(entries: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """The calls of a history a replay runs, as (number in the history, validated entry): the
    successful calls that changed the page, each preceded by the calls it depends on
    (``Tool.needs_before``: the screenshot a coordinate click is measured on), which are kept
    although they change nothing themselves. Reading tools, session tools, failed calls and
    actions whose reply said nothing changed (and that opened no tab, download or dialog) are left out."""
    tools = catalog()
    kept: list[tuple[int, dict[str, Any]]] = []
    last_call: dict[str, tuple[int, dict[str, Any]]] = {}  # tool -> its last successful call so far
    numbers: set[int] = set()
    for number, entry in enumerate(validate_entries(entries), 1):
        tool = tools[entry["tool"]]
        if entry["outcome"] != "ok":
            continue
        expect = entry.get("expect") or {}
        did = any(expect.get(k) for k in ("new_page", "download", "dialog"))  # a reply may say "no change" of the page
        if tool.read_only or tool.kind != "page" or tool.name in LEFT_OUT or (entry.get("unchanged") and not did):
            last_call[tool.name] = (number, entry)
            continue
        for needed in tool.needs_before:
            earlier = last_call.get(needed)
            if earlier is not None and earlier[0] not in numbers:
                kept.append(earlier)
                numbers.add(earlier[0])
        kept.append((number, entry))
        numbers.add(number)
        last_call[tool.name] = (number, entry)
    return kept
