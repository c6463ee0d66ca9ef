"""Finding elements by description: "link Truth Value Testing", "the login button".

A snapshot is capped (``max_refs``) so that a huge page stays readable; ``find`` is how a model
reaches what the cap left out. It walks the whole page (every frame, no cap) with the same page
agent, so the refs it returns are the refs a snapshot gives, and ranks the lines against the
query. The reply stays small whatever the page size: only the best lines, each with the heading
of its section as context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from webhand.engine.driver import Tab
from webhand.page.snapshot import take_snapshot
from webhand.engine.break_hints import without_break_hints

# Words a person uses for a role, mapped to the roles the snapshot prints.
_ROLE_WORDS: dict[str, set[str]] = {
    "link": {"link", "doc-noteref", "doc-backlink", "doc-biblioref", "doc-glossref"},
    "links": {"link"},
    "button": {"button"},
    "buttons": {"button"},
    "textbox": {"textbox", "searchbox"},
    "field": {"textbox", "searchbox", "combobox", "spinbutton"},
    "input": {"textbox", "searchbox", "combobox", "spinbutton"},
    "box": {"textbox", "searchbox", "checkbox", "combobox"},
    "search": {"searchbox"},
    "checkbox": {"checkbox"},
    "radio": {"radio"},
    "dropdown": {"combobox", "listbox"},
    "select": {"combobox", "listbox"},
    "combobox": {"combobox"},
    "option": {"option"},
    "tab": {"tab"},
    "menu": {"menu", "menuitem", "menubar"},
    "slider": {"slider"},
    "switch": {"switch"},
    "heading": {"#"},
    "section": {"#"},
}
_STOP_WORDS = {"the", "a", "an", "to", "of", "for", "on", "in", "with", "and", "that", "this", "which", "named",
               "called", "labelled", "labeled", "find", "me", "element"}
_REF = re.compile(r"\[((?:f\d+)?e\d+)\]")
_CONTROL = re.compile(r'^(\S+)(?: "((?:[^"\\]|\\.)*)")? \[')
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Match:
    line: str
    context: str  # the heading of the line's section, or "" at the top of the page
    score: float


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def rank(lines: list[str], query: str, limit: int) -> list[Match]:
    """The ``limit`` lines that best match ``query``; lines with refs win ties over plain text."""
    words = _words(without_break_hints(query))  # a name copied with its break hints still matches
    roles = set().union(*(_ROLE_WORDS[w] for w in words if w in _ROLE_WORDS)) if words else set()
    terms = [w for w in words if w not in _STOP_WORDS and w not in _ROLE_WORDS] or \
        [w for w in words if w not in _STOP_WORDS]
    phrase = " ".join(terms)
    matches: list[Match] = []
    heading = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        is_heading = line.startswith("#")
        control = _CONTROL.match(line) if _REF.search(line) else None
        role = "#" if is_heading else (control.group(1) if control else "")
        label = (control.group(2) or "") if control else line.lstrip("# ")
        score = _score(_words(label), phrase, terms) or _score(_words(line), phrase, terms) * 0.5
        if score:
            if roles:
                score += 30 if role in roles else -20
            if control:
                score += 5
            if score > 0:
                matches.append(Match(line, heading, score))
        if is_heading:
            heading = line
    matches.sort(key=lambda m: -m.score)  # stable: page order among equals
    return matches[:limit]


def _score(label_words: list[str], phrase: str, terms: list[str]) -> float:
    if not terms or not label_words:
        return 0.0
    label = " ".join(label_words)
    if label == phrase:
        return 100.0
    if f" {phrase} " in f" {label} ":
        return 70.0 - min(len(label_words) - len(terms), 20)  # the tighter the label, the better
    found = sum(1 for t in terms if t in label_words)
    return 40.0 * found / len(terms) if found else 0.0


async def find(tab: Tab, query: str, *, limit: int = 10) -> tuple[list[Match], int]:
    """Rank every line of the whole page (all frames, no ref cap) against ``query``."""
    shot = await take_snapshot(tab, max_refs=None)
    return rank(shot.lines, query, limit), shot.refs
