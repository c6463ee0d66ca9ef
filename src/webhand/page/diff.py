"""What changed on the page since the model's last snapshot: a few lines instead of the whole page.

After an action, the model needs to see its effect (a message appeared, a checkbox is now
checked, a dialog opened). Re-sending the whole snapshot costs the whole page every step;
sending only the changed lines costs what changed. This module compares two snapshots; what an
action's reply says with it (``Settings.snapshot_diff`` picks the form) is session/changes.py's.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass

from webhand.page.snapshot import Snapshot

_REF = re.compile(r"\[(?:f\d+)?e\d+\]")
#: Beyond this many changed lines the model is better served by a fresh snapshot.
MAX_DIFF_LINES = 40

# A snapshot line, as snapshot.js writes it: `role "name" [ref] states` for a control, `role "name"
# [states]` for a dialog or group. Names and text values are JSON strings, so a page's text cannot
# end one early; a line that does not parse is compared as plain text.
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_CONTROL = re.compile(rf"(?P<role>[a-z][a-z-]*)(?: (?P<name>{_QUOTED}))? \[(?P<ref>(?:f\d+)?e\d+)\](?P<states>.*)")
_CONTEXT = re.compile(rf"(?P<role>[a-z][a-z-]*)(?: (?P<name>{_QUOTED}))?(?: \[(?P<states>[a-z0-9= ]+)\])?")
# One state: a word, or key=value (a JSON string, <hidden>, a slider's `5 (0..100)`, or one bare word).
_STATE = re.compile(rf" (?P<key>[a-z][a-z-]*)"
                    rf"(?:=(?P<value>{_QUOTED}|<hidden>|[^\s\"]+(?: \([^\s()]*\.\.[^\s()]*\))?))?")
#: The words a dialog's or group's brackets may hold: text in brackets is not a state.
_CONTEXT_STATES = {"focused", "expanded", "disabled", "selected", "pressed", "checked", "mixed", "current",
                   "required", "invalid", "readonly", "level"}
#: How a state reads when it is not there (`disabled → enabled`).
_NOT = {"disabled": "enabled", "expanded": "collapsed", "required": "optional", "invalid": "valid",
        "readonly": "editable", "focused": "unfocused"}
_CHECKED = ("checked", "mixed")
#: States in the order snapshot.js writes them (roles.js statesOf); others after them.
_ORDER = {key: at for at, key in enumerate(
    ("level", "disabled", "checked", "mixed", "expanded", "selected", "pressed", "current", "required", "invalid",
     "readonly", "focused", "value", "placeholder", "files", "url", "hint"))}

States = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class Line:
    """One snapshot line, taken apart where it can be."""

    text: str  # without its indentation
    role: str | None = None
    name: str | None = None  # as shown: a JSON string
    ref: str | None = None
    states: States | None = None  # in line order; None: not a control or dialog line
    depth: int = 0  # its indentation: the line above it with less is its parent

    @property
    def focused(self) -> bool:
        return self.states is not None and ("focused", None) in self.states

    @property
    def plain(self) -> str:
        """The line without its focus: focus is compared on its own (it moves with every click)."""
        if not self.focused:
            return self.text
        return _render_head(self) + _render_states(self, [s for s in self.states or () if s[0] != "focused"])

    @property
    def identity(self) -> tuple[str | None, str | None]:
        return self.role, self.name


def _parse_states(text: str) -> States | None:
    states, at = [], 0
    while at < len(text):
        match = _STATE.match(text, at)
        if not match:
            return None
        states.append((match["key"], match["value"]))
        at = match.end()
    return tuple(states)


def parse_line(raw: str) -> Line:
    text = raw.strip()
    depth = len(raw) - len(raw.lstrip())
    if match := _CONTROL.fullmatch(text):
        return Line(text, match["role"], match["name"], match["ref"], _parse_states(match["states"]), depth)
    if _REF.search(text):
        return Line(text, ref=_REF.search(text).group(0)[1:-1], depth=depth)  # a control line that does not parse
    if match := _CONTEXT.fullmatch(text):
        states = _parse_states(" " + match["states"]) if match["states"] else ()
        if states is not None and all(key in _CONTEXT_STATES for key, _ in states):
            return Line(text, match["role"], match["name"], None, states, depth)
    return Line(text, depth=depth)


def _render_head(line: Line) -> str:
    return (line.role or "") + (f" {line.name}" if line.name else "") + (f" [{line.ref}]" if line.ref else "")


def _render_states(line: Line, states: list[tuple[str, str | None]]) -> str:
    words = [key if value is None else f"{key}={value}" for key, value in states]
    if line.ref:
        return "".join(" " + word for word in words)
    return f" [{' '.join(words)}]" if words else ""


def _state_changes(old: States, new: States) -> list[str]:
    """What differs between two lines' states, as `disabled → enabled`, `value="a" → "b"`."""
    before = {key: value for key, value in old if key != "focused"}
    after = {key: value for key, value in new if key != "focused"}
    said: list[str] = []
    keys = dict.fromkeys([k for k, _ in old] + [k for k, _ in new])
    for key in sorted(keys, key=lambda key: _ORDER.get(key, len(_ORDER))):
        if key == "focused" or (key in before and key in after and before[key] == after[key]):
            continue
        if key in _CHECKED:
            was = next((k for k in _CHECKED if k in before), "unchecked")
            now = next((k for k in _CHECKED if k in after), "unchecked")
            if was != now and f"{was} → {now}" not in said:
                said.append(f"{was} → {now}")
        elif before.get(key) is None and after.get(key) is None:  # a word state, gained or lost
            absent = _NOT.get(key, f"not {key}")
            said.append(f"{absent} → {key}" if key in after else f"{key} → {absent}")
        elif key == "placeholder" and ("value" in before) != ("value" in after):
            continue  # a placeholder shows while the field is empty: the value's change says it
        else:
            empty = '""' if key == "value" else "none"
            said.append(f"{key}={before.get(key) or empty} → {after.get(key) or empty}")
    return said


def describe_change(old: Line, new: Line, *, gained_focus: bool = False, moved: str | None = None) -> str:
    """One `~` line: the element as it is now, what it was called before, each state that changed,
    and (``moved``) where a node of a drawing went."""
    if old.states is None or new.states is None or old.role is None or new.role is None:
        return f"{new.text} (was: {old.text})" + (f": {moved}" if moved else "")
    was = []
    if old.ref and new.ref and old.ref != new.ref:
        was.append(old.ref)  # the page replaced the element: its old ref no longer works
    if old.role != new.role:
        was.append(old.role + (f" {old.name}" if old.name else ""))
    elif old.name != new.name:
        was.append(old.name or "unnamed")
    said = _state_changes(old.states, new.states) + (["focused"] if gained_focus else []) + ([moved] if moved else [])
    if not was and not said:
        return new.plain
    return _render_head(new) + (f" (was {' '.join(was)})" if was else "") + (": " + ", ".join(said) if said else "")


@dataclass(frozen=True)
class SnapshotDiff:
    added: list[str]
    removed: list[str]
    changed: list[str]  # `~` lines: the element now, and what changed

    @property
    def size(self) -> int:
        return len(self.added) + len(self.removed) + len(self.changed)

    def render(self, limit: int = MAX_DIFF_LINES) -> str:
        if not self.size:
            return "The page did not change since the last snapshot."
        head = (f"Page changes since the last snapshot ({len(self.added)} added, {len(self.removed)} removed, "
                f"{len(self.changed)} changed):")
        lines = [f"+ {line}" for line in self.added] + [f"- {line}" for line in self.removed] + \
                [f"~ {line}" for line in self.changed]
        if len(lines) > limit:
            lines = lines[:limit] + [f"… {len(lines) - limit} more: call browser_snapshot to see the whole page."]
        return "\n".join([head, *lines])


def diff_snapshots(old: Snapshot, new: Snapshot) -> SnapshotDiff:
    """Compare two snapshots of one document.

    Lines with refs are matched by ref, so a changed state is one ``~`` line; a dialog's or group's
    line by its role and name; other lines by text. An element the page replaced by a look-alike
    (same role and name, new ref) is one ``~`` line giving the new ref. Focus is said once, on the
    element that gained it, unless it went where the last pointer press went (the click's own
    focus) or the element's line says a change already (typing focuses its field).
    """
    old_lines = [parse_line(line) for line in old.lines]
    new_lines = [parse_line(line) for line in new.lines]
    old_order = {id(line): at for at, line in enumerate(old_lines)}
    old_by_ref = {line.ref: line for line in old_lines if line.ref}
    new_refs = {line.ref for line in new_lines if line.ref}
    pairs: dict[int, Line] = {}  # index in new_lines -> its line in the old snapshot
    added: list[int] = []
    for at, line in enumerate(new_lines):
        if line.ref:
            if line.ref in old_by_ref:
                pairs[at] = old_by_ref[line.ref]
            else:
                added.append(at)
    removed = [line for line in old_lines if line.ref and line.ref not in new_refs]

    # Lines without refs: the same text (focus aside) is the same line, under the same parent when
    # the text is there more than once; then a dialog whose states changed.
    old_parents, new_parents = _parents(old_lines), _parents(new_lines)
    waiting: dict[str, list[int]] = {}
    for at, line in enumerate(old_lines):
        if not line.ref:
            waiting.setdefault(line.plain, []).append(at)
    unmatched: list[int] = []
    for at, line in enumerate(new_lines):
        if not line.ref:
            candidates = waiting.get(line.plain)
            if candidates:
                same_place = [i for i in candidates if old_parents[i] == new_parents[at]]
                chosen = (same_place or candidates)[0]
                candidates.remove(chosen)
                pairs[at] = old_lines[chosen]
            else:
                unmatched.append(at)
    gone = [old_lines[at] for ats in waiting.values() for at in ats]
    _pair_look_alikes(new_lines, unmatched, gone, pairs)
    added += unmatched
    removed += gone
    # An element the page replaced by a look-alike: the same role and name under a new ref.
    _pair_look_alikes(new_lines, added, removed, pairs)

    focus_at = next((at for at, line in enumerate(new_lines) if line.focused), None)
    shown_added = [new_lines[at].plain if at != focus_at else new_lines[at].text for at in sorted(added)]
    removed.sort(key=lambda line: old_order[id(line)])
    shown_removed = [line.plain for line in removed]
    # A line whose text is elsewhere on the page too ("stage" in a list and in a field's chip) says
    # where it is, so that "+ stage" then "- stage" never reads as one element coming and going.
    others = Counter(line.plain for line in old_lines) + Counter(line.plain for line in new_lines)
    shown_added = _told_apart(shown_added, sorted(added), new_lines, others)
    shown_removed = _told_apart(shown_removed, [old_order[id(line)] for line in removed], old_lines, others)
    changed: list[str] = []
    for at in sorted(pairs):
        old_line, line = pairs[at], new_lines[at]
        gained_focus = at == focus_at and not old_line.focused and not new.focus_followed_press
        moved = _moved(old.positions.get(old_line.ref or ""), new.positions.get(line.ref or ""))
        if old_line.plain != line.plain or old_line.ref != line.ref or moved:
            changed.append(describe_change(old_line, line, moved=moved))
        elif gained_focus:
            changed.append(describe_change(old_line, line, gained_focus=True))
    return SnapshotDiff(shown_added, shown_removed, changed)


def _parents(lines: list[Line]) -> list[str | None]:
    """Each line's parent (the nearest line above it with less indentation), as its text."""
    parents: list[str | None] = []
    stack: list[Line] = []
    for line in lines:
        while stack and stack[-1].depth >= line.depth:
            stack.pop()
        parents.append(stack[-1].plain if stack else None)
        stack.append(line)
    return parents


def _told_apart(shown: list[str], where: list[int], lines: list[Line], seen: Counter[str]) -> list[str]:
    """``shown`` (the lines at ``where`` in ``lines``), each line whose text appears more than once
    in the two snapshots followed by where it is: `(in listbox "Tags" [e5])`, the line it is under;
    at the top level `(after "Tags:")`, the line before it; and `(2nd of 3)` among lines of one text
    that still read alike."""
    said = []
    for text, at in zip(shown, where):
        line = lines[at]
        if seen[line.plain] < 2:
            said.append(text)
            continue
        parent = next((lines[i] for i in range(at - 1, -1, -1) if lines[i].depth < line.depth), None)
        if parent is not None:
            said.append(f"{text} (in {_briefly(parent)})")
        else:
            before = next((lines[i] for i in range(at - 1, -1, -1) if lines[i].plain != line.plain), None)
            said.append(f"{text} (after {_briefly(before)})" if before is not None else f"{text} (at the top)")
    repeated = Counter(said)
    for i, text in enumerate(said):
        if repeated[text] > 1:  # the same place too: which of the lines of this text it is, in page order
            alike = [at for at in range(len(lines)) if lines[at].plain == lines[where[i]].plain]
            said[i] = f"{text} ({_ordinal(alike.index(where[i]) + 1)} of {len(alike)})"
    return said


def _briefly(line: Line) -> str:
    """A line named in a few words: a control by role, name and ref; text by its first words, quoted."""
    if line.ref or line.name:
        return _render_head(line)
    if line.text.startswith("#"):
        return json.dumps(line.text.lstrip("# ")[:40], ensure_ascii=False)
    return json.dumps(line.text[:40], ensure_ascii=False)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


#: How far a node of a drawing must go to be said to have moved (CSS pixels): less is a hover's nudge.
MOVE_MIN = 8


def _moved(before: tuple[int, int] | None, after: tuple[int, int] | None) -> str | None:
    """`moved from 90,80 to 320,180` when a drawn node's centre went at least ``MOVE_MIN`` away."""
    if before is None or after is None or math.dist(before, after) < MOVE_MIN:
        return None
    return f"moved from {before[0]},{before[1]} to {after[0]},{after[1]}"


def _pair_look_alikes(new_lines: list[Line], added: list[int], removed: list[Line], pairs: dict[int, Line]) -> None:
    """Pair added and removed lines of one role and name (both taken apart), first with first;
    what is paired leaves ``added`` and ``removed``."""
    by_identity: dict[tuple[str | None, str | None, bool], list[Line]] = {}
    for line in removed:
        if line.states is not None:
            by_identity.setdefault((*line.identity, line.ref is None), []).append(line)
    paired: list[int] = []
    for at in added:
        line = new_lines[at]
        twins = by_identity.get((*line.identity, line.ref is None)) if line.states is not None else None
        if twins:
            pairs[at] = twins.pop(0)
            paired.append(at)
    used = {id(pairs[at]) for at in paired}
    added[:] = [at for at in added if at not in pairs]
    removed[:] = [line for line in removed if id(line) not in used]


def one_document(old: Snapshot, new: Snapshot) -> bool:
    """Whether the two snapshots are of one document (the page agent's identity), so a diff means something."""
    if old.document and new.document:
        return old.document == new.document
    old_refs = {r for line in old.lines if (r := _ref(line))}  # without it: some ref survived
    new_refs = {r for line in new.lines if (r := _ref(line))}
    if old_refs:
        return bool(old_refs & new_refs)
    return old.url == new.url


def _ref(line: str) -> str | None:
    match = _REF.search(line)
    return match.group(0) if match else None
