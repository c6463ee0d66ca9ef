"""What a session did: one entry per tool call, bounded in memory, older entries spilled to a file.

The host records every call that reaches a session (``host.Conversation``), once for every surface.
An entry holds the tool, its arguments as the model sent them with secrets masked (by the
masker every reply goes through, security/masking.py), the outcome, the duration, the time, and
the URL of the active tab before and after. The dashboard's timeline, ``browser_session_history`` and
``webhand export`` read it.

Only the newest ``keep`` entries stay in memory; older ones are appended, one JSON object per
line, to ``history/<session>.jsonl`` in the conversation's own folder (owner-only, like every file
webhand writes there), so a long session never grows the server and its whole story stays on disk.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from webhand.errors import shorten

#: Longest string argument kept in an entry: a 1 MB `text` must not live in memory per call.
ARGUMENT_LIMIT = 500
#: Longest outcome line kept (the first line of the reply or the error).
OUTCOME_LIMIT = 300


@dataclass
class HistoryEntry:
    index: int  # 1 for the session's first call
    tool: str
    arguments: dict[str, Any]
    started_at: float  # Unix time
    url_before: str
    outcome: str = "running"  # ok, error, timeout, cancelled, running
    message: str = ""  # first line of the reply, or the error
    duration_ms: int = 0
    url_after: str = ""
    reply_chars: int = 0  # the size of the reply's text the model got, in characters
    thumbnail: str | None = None  # path of a small JPEG of the page after the call, when a dashboard runs
    # The ways to find each element the call named, read before the call (for exports and flows that
    # run on a fresh page): its role and name, named ancestors, label, attributes, CSS path ...
    # (tools/flows/format.py's Target, plus ``selector``, the CSS path when the element is in the main frame).
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)
    unchanged: bool = False  # the action's reply said it changed nothing on the page (exports leave it out)
    # What the call was seen to do beyond its URL after: new_page, download, dialog, changes (its
    # reply's lines after the first), masked and bounded (tools/flows/format.py's Expect).
    expect: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def clip_arguments(value: Any) -> Any:
    """Arguments cut to a size worth keeping: long strings are shortened, saying by how much."""
    if isinstance(value, str):
        return shorten(value, ARGUMENT_LIMIT)
    if isinstance(value, dict):
        return {str(k): clip_arguments(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clip_arguments(v) for v in value[:100]]
    return value


class SessionHistory:
    def __init__(self, keep: int, spill_file: Path, make_folder: Any = None) -> None:
        self.keep = keep
        self.spill_file = spill_file
        self._make_folder = make_folder  # creates the conversation's owner-only folders first
        self.entries: deque[HistoryEntry] = deque()
        self.count = 0  # calls ever recorded
        self.reply_chars = 0  # the characters of every reply so far: what the session cost the model
        self.spilled = 0

    def begin(self, tool: str, arguments: dict[str, Any], url_before: str) -> HistoryEntry:
        self.count += 1
        entry = HistoryEntry(self.count, tool, clip_arguments(arguments), round(time.time(), 3), url_before)
        self.entries.append(entry)
        while len(self.entries) > self.keep:
            self._spill(self.entries.popleft())
        return entry

    @staticmethod
    def finish(entry: HistoryEntry, outcome: str, message: str, url_after: str, started: float) -> None:
        entry.outcome = outcome
        entry.message = shorten(message.split("\n", 1)[0], OUTCOME_LIMIT)
        entry.url_after = url_after
        entry.duration_ms = round((time.monotonic() - started) * 1000)

    def recent(self, limit: int) -> list[HistoryEntry]:
        return list(self.entries)[-limit:] if limit > 0 else []

    def all(self) -> list[dict[str, Any]]:
        """Every entry, the spilled ones first (read back from the file)."""
        older: list[dict[str, Any]] = []
        if self.spilled:
            try:
                with open(self.spill_file, encoding="utf-8") as file:
                    older = [json.loads(line) for line in file if line.strip()]
            except (OSError, ValueError):
                older = []  # the user removed or broke the file: what is in memory still counts
        return older + [e.to_dict() for e in self.entries]

    def _spill(self, entry: HistoryEntry) -> None:
        try:
            if self._make_folder is not None:
                self._make_folder()
            self.spill_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor = os.open(self.spill_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
                                 0o600)
            with os.fdopen(descriptor, "a", encoding="utf-8") as file:
                file.write(json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
            self.spilled += 1
        except OSError:
            pass  # a full disk must not fail the agent's call; the entry is only lost from the record
