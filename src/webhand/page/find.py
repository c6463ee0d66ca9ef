"""Finding elements by a plain description: "the login button", "link Truth Value Testing".

A snapshot is capped (``max_refs``) so that a huge page stays readable; ``find`` is how a model
reaches what the cap left out. It walks the whole page (every frame, no cap) with the same page
agent, so the refs it returns are the refs a snapshot gives, and ranks the lines against the
description. The reply stays small whatever the page size: only the best lines, each with the
heading of its section as context.

A description is what a person would say, so it is read the way a person means it:

- filler is dropped: articles, "please", a leading "click"/"press"/"tap", "button to", "my";
- role words name the kind of element and are not part of its name: "button", "link", "field",
  "box", "text box", "checkbox", "dropdown", "menu"… A line of a named role ranks above others;
- compound words match their spaced forms both ways: "login" finds "Log in", "sign up" finds
  "Signup", "checkout" finds "Check out" (the words are compared with their spaces taken out,
  on word boundaries);
- a typo of one edit (a letter added, dropped, changed or two swapped) in a word of five letters
  or more (four for an added or dropped letter) still matches, ranked below the exact spelling,
  and the reply says how it was read. Numbers never match fuzzily ("1999" is not "1998").

Every word of the name must be found (of three words or more, all but one), so a description of
something the page does not have finds nothing rather than its nearest neighbour: "delete
account" on a page with "Delete pet" is no match. Ranking is deterministic (score, then page
order), and bounded: the description is cut to ``MAX_QUERY_WORDS`` words and only the first
``MAX_LINES`` lines of a page are ranked.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from webhand.engine.break_hints import without_break_hints
from webhand.engine.driver import Tab
from webhand.page.snapshot import take_snapshot

#: Most words of a description that are read; the rest are ignored (a description, not an essay).
MAX_QUERY_WORDS = 12
#: Most page lines ranked; a page longer than this is ranked on its first lines only.
MAX_LINES = 100_000
#: Words longer than this are compared exactly, never fuzzily (cost and sense both).
_MAX_FUZZY_LEN = 40

# Words a person uses for a role, mapped to the roles the snapshot prints.
_TEXT_ROLES = {"textbox", "searchbox"}
_FIELD_ROLES = {"textbox", "searchbox", "combobox", "spinbutton"}
_ROLE_WORDS: dict[str, set[str]] = {
    "link": {"link", "doc-noteref", "doc-backlink", "doc-biblioref", "doc-glossref"},
    "links": {"link"},
    "hyperlink": {"link"},
    "button": {"button"},
    "buttons": {"button"},
    "btn": {"button"},
    "textbox": _TEXT_ROLES,
    "textarea": _TEXT_ROLES,
    "textfield": _TEXT_ROLES,
    "field": _FIELD_ROLES,
    "fields": _FIELD_ROLES,
    "input": _FIELD_ROLES | {"checkbox", "radio"},
    "box": _TEXT_ROLES | {"checkbox", "combobox"},
    "searchbox": {"searchbox", "textbox"},
    "search": {"searchbox"},
    "checkbox": {"checkbox"},
    "checkboxes": {"checkbox"},
    "tickbox": {"checkbox"},
    "radio": {"radio"},
    "dropdown": {"combobox", "listbox"},
    "select": {"combobox", "listbox"},
    "combobox": {"combobox"},
    "listbox": {"listbox"},
    "option": {"option"},
    "tab": {"tab"},
    "menu": {"menu", "menuitem", "menubar", "combobox"},
    "slider": {"slider"},
    "switch": {"switch"},
    "toggle": {"switch", "checkbox"},
    "heading": {"#"},
    "title": {"#"},
    "section": {"#"},
}
# Two words that together are one role word: "text box" is a textbox, not a box named "text".
_ROLE_PAIRS = {("text", "box"): "textbox", ("text", "field"): "textfield", ("text", "area"): "textarea",
               ("text", "input"): "textbox", ("check", "box"): "checkbox", ("tick", "box"): "tickbox",
               ("drop", "down"): "dropdown", ("combo", "box"): "combobox", ("search", "box"): "searchbox",
               ("search", "field"): "searchbox", ("radio", "button"): "radio", ("list", "box"): "listbox"}
_STOP_WORDS = {"the", "a", "an", "to", "of", "for", "on", "in", "with", "and", "that", "this", "which", "named",
               "called", "labelled", "labeled", "find", "me", "element", "my", "your", "our", "please", "says",
               "saying", "is", "it", "at", "where", "there", "one", "some"}
# Said before the description of what to act on, not part of it: dropped at the start only.
_LEADING_VERBS = {"click", "press", "tap", "hit", "please", "push"}
# "in", "up", "out", "on", "off" after a word make a compound with it ("log in", "sign up"), so
# there they are part of the name, never filler.
_PARTICLES = {"in", "up", "out", "on", "off"}
_REF = re.compile(r"\[((?:f\d+)?e\d+)\]")
_CONTROL = re.compile(r'^(\S+)(?: "((?:[^"\\]|\\.)*)")? \[')
_HINT = re.compile(r'\bhint="((?:[^"\\]|\\.)*)"')
_WORD = re.compile(r"\w+", re.UNICODE)

# How well one word of the description was found (the weakest word sets the match's quality).
_EXACT, _JOINED, _FUZZY = 1.0, 0.95, 0.8


@dataclass(frozen=True)
class Match:
    line: str
    context: str  # the heading of the line's section, or "" at the top of the page
    score: float
    why: str = ""  # how a description's word was read when not spelled as on the page ("" when exact)


@dataclass(frozen=True)
class Description:
    """A description read as a person means it: the name's words and the roles asked for."""
    terms: tuple[str, ...]
    role_words: tuple[str, ...]  # "button", "field": the kinds of element asked for


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def read_description(query: str) -> Description:
    words = _words(without_break_hints(query))[:MAX_QUERY_WORDS]
    merged: list[str] = []
    for word in words:  # "text box" -> "textbox"
        if merged and (merged[-1], word) in _ROLE_PAIRS:
            merged[-1] = _ROLE_PAIRS[(merged[-1], word)]
        else:
            merged.append(word)
    while len(merged) > 1 and merged[0] in _LEADING_VERBS:
        merged.pop(0)
    kept: list[str] = []
    for i, word in enumerate(merged):
        compound = word in _PARTICLES and i > 0 and merged[i - 1] not in _STOP_WORDS | _ROLE_WORDS.keys()
        if compound or word not in _STOP_WORDS:
            kept.append(word)
    if not kept:  # "the one" - nothing but filler: read it as it is
        kept = merged
    role_words = [w for w in kept if w in _ROLE_WORDS]
    terms = [w for w in kept if w not in _ROLE_WORDS]
    if not terms and role_words:
        # Only role words ("search button", "menu"): the last names the kind, the others the name.
        terms = role_words[:-1] or role_words
        role_words = role_words[-1:]
    return Description(tuple(terms), tuple(role_words))


def _roles(role_words: tuple[str, ...], label: list[str]) -> set[str]:
    """The roles asked for, for a line with these label words. A role word the label also holds is
    part of the name there ("link Tab #3": "tab" names the link), unless it is the only one."""
    naming = [w for w in role_words if w not in label] or list(role_words[-1:])
    return set().union(*(_ROLE_WORDS[w] for w in naming)) if naming else set()


@functools.lru_cache(maxsize=65_536)  # a page repeats its words: each pair is compared once
def within_one_edit(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by one letter added, dropped, changed, or two neighbours swapped
    (and they differ). Substitutions and swaps need five letters, additions four: short words are
    too close to each other ("card"/"cart") to guess."""
    if a == b or not (a.isalpha() and b.isalpha()) or max(len(a), len(b)) > _MAX_FUZZY_LEN:
        return False
    if len(a) == len(b):
        if len(a) < 5:
            return False
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diffs) == 1:
            return True
        return len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if len(long) - len(short) != 1 or len(short) < 4:
        return False
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1:]


@dataclass
class _Found:
    quality: float      # the weakest word's quality
    matched: int        # description words found
    used: set[int]      # the label words they used
    contiguous: bool    # found in the description's order, side by side
    why: str


def _align(terms: tuple[str, ...], label: list[str]) -> _Found | None:
    """Find each description word in the label's words: exactly, as a compound (words joined with
    their spaces taken out, either side), or within one edit. Greedy, left to right."""
    quality, matched, why = 1.0, 0, ""
    used: set[int] = set()
    positions: list[int] = []
    i = 0
    while i < len(terms):
        hit = _find_term(terms, i, label, used)
        if hit is None:
            i += 1
            continue
        consumed, start, width, q, note = hit
        used.update(range(start, start + width))
        positions.append(start)
        matched += consumed
        quality = min(quality, q)
        why = why or note
        i += consumed
    if not matched:
        return None
    # Side by side: in order, and nothing but filler between them ("Table of Contents").
    contiguous = positions == sorted(positions) and \
        all(j in used or label[j] in _STOP_WORDS for j in range(min(used), max(used) + 1))
    return _Found(quality, matched, used, contiguous, why)


def _find_term(terms: tuple[str, ...], i: int, label: list[str], used: set[int]) -> tuple[int, int, int, float, str] | None:
    """(description words consumed, first label word, label words used, quality, note) or None."""
    term = terms[i]
    free = [j for j in range(len(label)) if j not in used]
    for j in free:
        if label[j] == term:
            return 1, j, 1, _EXACT, ""
    # Compounds: "login" against "log in" (one description word, 2-3 label words) ...
    for j in free:
        for width in (2, 3):
            run = label[j:j + width]
            if len(run) == width and all(j + k not in used for k in range(width)) and "".join(run) == term:
                return 1, j, width, _JOINED, f'"{term}" read as "{" ".join(run)}"'
    # ... and "log in" against "login" (2-3 description words, one label word).
    for width in (2, 3):
        joined = "".join(terms[i:i + width])
        if i + width <= len(terms):
            for j in free:
                if label[j] == joined:
                    return width, j, 1, _JOINED, f'"{" ".join(terms[i:i + width])}" read as "{label[j]}"'
    for j in free:
        if within_one_edit(term, label[j]):
            return 1, j, 1, _FUZZY, f'"{term}" read as "{label[j]}" (one letter off)'
    for j in free:  # a typo in a compound: "chekout" against "Check out"
        run = label[j:j + 2]
        if len(run) == 2 and j + 1 not in used and within_one_edit(term, "".join(run)):
            return 1, j, 2, _FUZZY, f'"{term}" read as "{" ".join(run)}" (one letter off)'
    return None


def _needed(terms: int) -> int:
    """Description words that must be found: all of one or two, all but one of three or more."""
    return terms if terms <= 2 else terms - 1


def _could_match(terms: tuple[str, ...], label: list[str]) -> bool:
    """A quick test that rules out most lines before the word-by-word alignment: enough words of the
    description appear as a label word, inside the label's words joined (a compound), or one edit
    from a label word or two joined. Stops at the first word that makes a match impossible."""
    words = set(label)
    joined = "".join(label)
    allowed_missing = len(terms) - _needed(len(terms))
    for i, term in enumerate(terms):
        if term in words or term in joined or "".join(terms[i:i + 2]) in words:
            continue
        size = len(term)
        if size >= 4 and term.isalpha() and (
                any(abs(len(w) - size) <= 1 and within_one_edit(term, w) for w in words)
                or any(abs(len(a) + len(b) - size) <= 1 and within_one_edit(term, a + b)
                       for a, b in zip(label, label[1:]))):
            continue
        allowed_missing -= 1
        if allowed_missing < 0:
            return False
    return True


def _score(description: Description, label: list[str]) -> tuple[float, str]:
    terms = description.terms
    if not terms or not label or not _could_match(terms, label):
        return 0.0, ""
    found = _align(terms, label)
    if found is None or found.matched < _needed(len(terms)):
        return 0.0, ""
    # Label words left over, not counting filler ("of" in "Table of Contents" is no extra word).
    extra = sum(1 for j, word in enumerate(label) if j not in found.used and word not in _STOP_WORDS)
    if found.matched == len(terms) and not extra and found.contiguous:
        base = 100.0  # the whole name, nothing more
    elif found.matched == len(terms):
        base = 70.0 - min(extra, 20) - (0 if found.contiguous else 5)  # the tighter the label, the better
    else:
        base = 40.0 * found.matched / len(terms)
    return base * found.quality, found.why


def rank(lines: list[str], query: str, limit: int) -> list[Match]:
    """The ``limit`` lines that best match ``query``; lines with refs win ties over plain text."""
    description = read_description(query)
    matches: list[Match] = []
    heading = ""
    for raw in lines[:MAX_LINES]:
        line = raw.strip()
        if not line:
            continue
        is_heading = line.startswith("#")
        control = _CONTROL.match(line) if _REF.search(line) else None
        role = "#" if is_heading else (control.group(1) if control else "")
        if control:
            # A control's name; an unnamed field goes by its hint ("Username"), as a person reads it.
            hint = _HINT.search(line)
            label = control.group(2) or (hint.group(1) if hint else "")
        else:
            label = line.lstrip("# ")
        label_words = _words(label)
        score, why = _score(description, label_words)
        if not score:
            score, why = _score(description, _words(line))
            score *= 0.5
        if score:
            if description.role_words:
                score += 30 if role in _roles(description.role_words, label_words) else -20
            if control:
                score += 5
            if score > 0:
                matches.append(Match(line, heading, score, why))
        if is_heading:
            heading = line
    matches.sort(key=lambda m: -m.score)  # stable: page order among equals
    return matches[:limit]


async def find(tab: Tab, query: str, *, limit: int = 10) -> tuple[list[Match], int]:
    """Rank every line of the whole page (all frames, no ref cap) against ``query``."""
    shot = await take_snapshot(tab, max_refs=None)
    return rank(shot.lines, query, limit), shot.refs

