"""What changed on the page since the model's last snapshot: a few lines instead of the whole page.

After an action, the model needs to see its effect (a message appeared, a checkbox is now
checked, a dialog opened). Re-sending the whole snapshot costs the whole page every step;
sending only the changed lines costs what changed. ``report_snapshot_changes`` is the hook an
action's reply calls last (see session/changes.py); ``Settings.snapshot_diff`` picks the form.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from webhand.errors import WebhandError
from webhand.page.snapshot import Snapshot, SnapshotOptions, omitted_notice, take_snapshot
from webhand.response import Response
from webhand.session.session import Session

_REF = re.compile(r"\[(?:f\d+)?e\d+\]")
# Focus moves with every click; on its own it is not news, so it is left out of the comparison.
_FOCUS = re.compile(r" focused(?= |$)")
#: Beyond this many changed lines the model is better served by a fresh snapshot.
MAX_DIFF_LINES = 40


@dataclass(frozen=True)
class SnapshotDiff:
    added: list[str]
    removed: list[str]
    changed: list[str]  # the new form of lines whose ref stayed but whose text changed

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


def _ref(line: str) -> str | None:
    match = _REF.search(line)
    return match.group(0) if match else None


def diff_snapshots(old: Snapshot, new: Snapshot) -> SnapshotDiff:
    """Lines with refs are matched by ref (so a changed state is one ``~`` line); the rest by text."""
    old_lines = [_FOCUS.sub("", line.strip()) for line in old.lines]
    new_lines = [_FOCUS.sub("", line.strip()) for line in new.lines]
    old_by_ref = {ref: line for line in old_lines if (ref := _ref(line))}
    new_by_ref = {ref: line for line in new_lines if (ref := _ref(line))}
    old_text = Counter(line for line in old_lines if not _ref(line))
    new_text = Counter(line for line in new_lines if not _ref(line))
    more, fewer = new_text - old_text, old_text - new_text  # text lines that appeared / went away
    added: list[str] = []
    changed: list[str] = []
    removed: list[str] = []
    for line in new_lines:  # page order
        ref = _ref(line)
        if ref is None:
            if more[line] > 0:
                added.append(line)
                more[line] -= 1
        elif ref not in old_by_ref:
            added.append(line)
        elif old_by_ref[ref] != line:
            changed.append(line)
    for line in old_lines:
        ref = _ref(line)
        if ref is None:
            if fewer[line] > 0:
                removed.append(line)
                fewer[line] -= 1
        elif ref not in new_by_ref:
            removed.append(line)
    return SnapshotDiff(added, removed, changed)


def _same_document(old: Snapshot, new: Snapshot) -> bool:
    """Whether a diff means anything: some ref survived (refs never outlive their document)."""
    old_refs = {r for line in old.lines if (r := _ref(line))}
    new_refs = {r for line in new.lines if (r := _ref(line))}
    if old_refs:
        return bool(old_refs & new_refs)
    return old.url == new.url


async def report_snapshot_changes(session: Session, response: Response, *, title: str | None = None,
                                  unchanged: str | None = None) -> None:
    """Add what the action changed on the page, in the form ``Settings.snapshot_diff`` asks for.

    ``diff``: the changed lines, or the new page's snapshot after a navigation; nothing when the
    model has not looked at the page yet. ``full``: the whole snapshot. ``none``: nothing.
    Never fails the action: a page that cannot be read right now only costs the model a note.
    ``title``: the tab's title, when the caller has just read it. ``unchanged``: the line to give
    instead of "did not change" (what the wait for the action's effects saw, session/changes.py).
    """
    form = session.settings.snapshot_diff
    last: Snapshot | None = session.last_snapshot
    if form == "none" or (form == "diff" and last is None):
        return
    tab = await session.tab()
    options = last.options if last is not None and last.tab == tab.index else SnapshotOptions()
    try:
        new = await take_snapshot(tab, mode=options.mode, scope=options.scope, depth=options.depth,
                                  max_refs=options.max_refs, title=title)
    except WebhandError:
        try:
            options = SnapshotOptions()  # the scope went away with the change: look at the whole page
            new = await take_snapshot(tab, max_refs=options.max_refs, title=title)
        except WebhandError:
            response.add("The page could not be read after the action; call browser_snapshot to see it.")
            return
    session.last_snapshot = new
    if form == "diff" and last is not None and last.tab == tab.index and _same_document(last, new):
        changes = diff_snapshots(last, new)
        text = changes.render() if changes.size or unchanged is None else unchanged
        if changes.size <= MAX_DIFF_LINES and len(text) < len(new.text):
            response.add(text)
            return
    if form == "full":
        heading = "Snapshot of the page now:"
    elif last is not None and last.tab != tab.index:
        heading = f"Tab {tab.index} (not the one of your last snapshot); its snapshot:"
    elif last is not None and _same_document(last, new):
        heading = "The page changed a lot; its snapshot now:"
    else:
        heading = "A new page (old refs no longer work); its snapshot:"
    response.add(f"{heading} ({new.url})")
    response.large(new.text or "(no visible content)", what="snapshot", limit=session.settings.snapshot_max_chars,
                   hint="Call browser_snapshot with scope (a ref or CSS selector) to see part of it.")
    if new.omitted:
        response.add(omitted_notice(new))
