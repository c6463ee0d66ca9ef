"""URL globs as browser_route takes them (``**/api/user``, ``https://example.com/*.png``), with the
meaning Playwright gives them, so that a route matches the same requests on every driver.

A port of Playwright's ``globToRegexPattern`` (packages/isomorphic/urlMatch.ts, 1.5x): ``*`` is any
run of characters but ``/``; ``**`` any run at all (``**/`` also matches nothing); ``{a,b}`` either;
``\\`` escapes the next character; everything else, ``?`` included, is itself. A pattern that does
not start with ``*`` is an absolute URL whose scheme and host match in any case, as a URL parser
normalises them (Playwright resolves it with ``new URL``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from webhand.errors import InvalidArgument

_ORIGIN = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/*?{}\\]*)")


def glob_to_regex(glob: str) -> str:
    tokens = ["^"]
    in_group = False
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "\\" and i + 1 < len(glob):
            i += 1
            tokens.append(re.escape(glob[i]))
        elif c == "*":
            before = glob[i - 1] if i > 0 else ""
            stars = 1
            while i + 1 < len(glob) and glob[i + 1] == "*":
                stars += 1
                i += 1
            if stars > 1:
                after = glob[i + 1] if i + 1 < len(glob) else ""
                if after == "/":
                    tokens.append("((.+/)|)" if before == "/" else "(.*/)")
                    i += 1
                else:
                    tokens.append("(.*)")
            else:
                tokens.append("([^/]*)")
        elif c == "{":
            if in_group:
                raise _invalid(glob, "nested '{' is not supported")
            in_group = True
            tokens.append("(")
        elif c == "}":
            if not in_group:
                raise _invalid(glob, "unmatched '}'")
            in_group = False
            tokens.append(")")
        elif c == "," and in_group:
            tokens.append("|")
        else:
            tokens.append(re.escape(c))
        i += 1
    if in_group:
        raise _invalid(glob, "unmatched '{'")
    tokens.append("$")
    return "".join(tokens)


@lru_cache(maxsize=256)
def compiled(glob: str) -> re.Pattern[str]:
    """The pattern's regular expression; ``InvalidArgument`` for a malformed glob."""
    if not glob.startswith("*"):
        # An absolute URL: its scheme and host as a URL parser writes them (lower case).
        glob = _ORIGIN.sub(lambda m: m.group(1).lower() + m.group(2).lower(), glob, count=1)
    return re.compile(glob_to_regex(glob), re.DOTALL)


def url_matches(glob: str, url: str) -> bool:
    return compiled(glob).match(url) is not None


def _invalid(glob: str, why: str) -> InvalidArgument:
    return InvalidArgument(f"The URL pattern {glob[:200]!r} is not a valid glob: {why}.",
                           "Use * within a path part, ** across parts and {a,b} for either, e.g. **/api/{user,team}.")
