"""Every spelling of a secret a reply might carry, compiled once per secret into one pattern.

A page (or the model, through ``browser_eval``) can hand a typed secret back encoded: in a URL
(percent- or form-encoded, upper- or lower-case hex, encoded twice inside a ``next=`` parameter),
in HTML source (named, decimal or hex entities), in JSON or JavaScript (``\\"``, ``\\\\``,
``\\u00e9``, ``\\x40``), or in base64 (``btoa``, a Basic auth header, a token blob). Redaction must
catch all of them, and it runs on every reply, so the work is done here once per secret:

- the *textual* encodings act one character at a time, so each character of the secret becomes
  an alternation of its spellings, and one pattern matches every encoder's output (each encoder
  escapes a different set of characters: encodeURIComponent, form encoding, Python's quote …);
- base64 acts on 3-byte groups, so a secret inside a longer blob is spelled one of three ways,
  depending on where it starts within a group. Only the characters made of the secret's bits
  alone are stable whatever surrounds it; those middles, and the standalone encodings, are
  literal alternatives (standard and URL-safe alphabets, with and without padding).
"""

from __future__ import annotations

import base64
import re
from html.entities import html5

# Named HTML entities per character (``&amp;``, ``&quot;`` …), including the legacy forms without
# the semicolon that browsers still accept (``&amp``).
_NAMED_ENTITIES: dict[str, list[str]] = {}
for _name, _char in html5.items():
    if len(_char) == 1:
        _NAMED_ENTITIES.setdefault(_char, []).append(_name)
# Short JSON / JavaScript escapes.
_SHORT_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "'": "'", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}


# A spelling is a list of atoms: a one-character string is a literal character (which a URL may
# carry percent-encoded), anything longer is regex source taken as is (e.g. a hex digit "[Ee]").
Atom = str


def _hex(value: int, width: int) -> list[Atom]:
    """``value`` in hex digits matching either case, with optional extra leading zeros."""
    digits = [f"[{d}{d.lower()}]" if d.isalpha() else d for d in f"{value:0{width}X}"]
    return ["0*+", *digits] if width == 1 else digits


def _percent(data: bytes) -> list[Atom]:
    return [atom for byte in data for atom in ["%", *_hex(byte, 2)]]


# Possessive quantifiers (*+) never backtrack, so a page full of "%25%25…" cannot make
# redaction slow; backslashes come in a few fixed counts for the same reason.
_PERCENT = "%(?:25)*+"  # "%", or "%25" (encoded again), "%2525" …


def _backslashes(*counts: int) -> str:
    unit = "(?:\\\\|" + _PERCENT + "5[Cc])"  # a backslash, or %5C in a URL
    return "(?:" + "|".join(f"{unit}{{{n}}}" if n > 1 else unit for n in counts) + ")"


# A string JSON-encoded again (JSON inside JSON) doubles its backslashes and escapes each one:
# up to three levels deep, a backslash is 1, 2, 4 or 8 of them, the one of \" is 1, 3 or 7, and
# the one of \u00e9 is 1, 2 or 4.
_RAW_BACKSLASH = _backslashes(8, 4, 2, 1)
_ESCAPE = _backslashes(7, 3, 1)
_CODE_ESCAPE = _backslashes(4, 2, 1)


def _in_url(atom: Atom) -> str:
    """A regex for one atom as it may stand inside a URL: a literal character as is or
    percent-encoded (any number of times, either hex case), and ``/`` also as JSON's ``\\/``.
    Letters and digits are never encoded, and regex atoms are kept."""
    if len(atom) != 1 or (atom.isascii() and atom.isalnum()):
        return atom
    if atom == "%":
        return _PERCENT
    if atom == "\\":
        return _RAW_BACKSLASH
    options = [re.escape(atom), "".join(_PERCENT if part == "%" else part for part in _percent(atom.encode("utf-8")))]
    if atom == "/":
        options.append(_ESCAPE + "/")
    return "(?:" + "|".join(options) + ")"


def url_carried(spelling: str | list[Atom]) -> str:
    """A regex for ``spelling`` with any of its characters percent-encoded once more: the same
    spelling carried in a URL (JSON or an HTML entity in a query parameter, a URL inside a URL,
    base64 whose + / = were encoded). It covers the spelling itself too."""
    return "".join(map(_in_url, spelling))


def _char_spellings(char: str) -> str:
    """One character of the secret in every textual encoding, as a regex alternation."""
    code = ord(char)
    # The raw character; url_carried adds its percent-encoding, and that of "%40" (twice encoded).
    spellings: list[list[Atom]] = [[char]] if char == "%" else [[char], _percent(char.encode("utf-8"))]
    if char == " ":
        spellings.append(["+"])  # form encoding
    spellings.append(["&", "#", "0*+", *str(code), ";"])
    spellings.append(["&", "#", "[xX]", *_hex(code, 1), ";"])
    spellings.extend(["&", *name] for name in _NAMED_ENTITIES.get(char, ()))
    if char in _SHORT_ESCAPES and char != "\\":  # an escaped backslash is two raw ones, covered above
        spellings.append([_ESCAPE, _SHORT_ESCAPES[char]])
    if code <= 0xFFFF:
        spellings.append([_CODE_ESCAPE, "u", *_hex(code, 4)])
    else:  # JSON spells a character outside the BMP as a surrogate pair
        high, low = divmod(code - 0x10000, 0x400)
        spellings.append([_CODE_ESCAPE, "u", *_hex(0xD800 + high, 4), _CODE_ESCAPE, "u", *_hex(0xDC00 + low, 4)])
    if code <= 0xFF:
        spellings.append([_CODE_ESCAPE, "x", *_hex(code, 2)])  # JavaScript string escape
    options = list(dict.fromkeys(url_carried(spelling) for spelling in spellings))
    # Longest first: at one position the alternation takes the first option that matches.
    options.sort(key=len, reverse=True)
    return "(?:" + "|".join(options) + ")"


def _stable_base64(data: bytes, lead: int) -> str:
    """The base64 characters of ``data`` that stay the same whatever bytes surround it, when it
    starts ``lead`` bytes (0, 1 or 2) into a 3-byte group of a longer blob."""
    encoded = base64.b64encode(bytes(lead) + data).decode()
    # Character i holds bits 6i..6i+5 of the blob; keep those that lie wholly inside ``data``.
    first = -(-8 * lead // 6)
    last = 8 * (lead + len(data)) // 6
    return encoded[first:last]


def base64_forms(value: str) -> set[str]:
    """The base64 spellings of ``value``: standalone (padded or not) and the three stable middles,
    of its UTF-8 bytes (and of its Latin-1 bytes, what ``btoa`` takes, when those differ)."""
    payloads = [value.encode("utf-8")]
    try:
        latin = value.encode("latin-1")
        if latin != payloads[0]:
            payloads.append(latin)
    except UnicodeEncodeError:
        pass
    forms: set[str] = set()
    for data in payloads:
        standard = {base64.b64encode(data).decode()}
        standard |= {form.rstrip("=") for form in standard}
        standard |= {_stable_base64(data, lead) for lead in range(3)}
        forms |= standard | {form.translate(str.maketrans("+/", "-_")) for form in standard}
    return {form for form in forms if form}


def secret_pattern(value: str) -> str:
    """A regex (source) matching ``value`` in any of the encodings above."""
    textual = "".join(_char_spellings(char) for char in value)
    literals = sorted(base64_forms(value) - {value}, key=len, reverse=True)
    return "|".join([textual, *map(url_carried, literals)])


def _first_characters(value: str) -> set[str]:
    """Every character a match of ``secret_pattern(value)`` can start with."""
    # "+" is a space in form encoding; "%", "&" and "\\" open an escape of any character.
    return {value[0], "+", "%", "&", "\\"} | {form[0] for form in base64_forms(value)}


def masking_pattern(values: list[str]) -> re.Pattern[str]:
    """One pattern for several secrets; the group ``s<i>`` says that ``values[i]`` matched, so give
    the longest first (a secret containing another is then masked whole)."""
    starts = set().union(*map(_first_characters, values))
    # The lookahead turns most positions down with one character test instead of trying every
    # spelling there: a reply is scanned several times faster.
    first = "[" + "".join(re.escape(char) for char in sorted(starts)) + "]"
    alternatives = "|".join(f"(?P<s{i}>{secret_pattern(value)})" for i, value in enumerate(values))
    return re.compile(f"(?={first})(?:{alternatives})")
