"""The error taxonomy.

Every failure a tool can meet is one of these. Each carries a message a model can act on:
what failed, why, and what to call next. Surfaces render ``str(error)``; nothing else about
an error reaches the model.

Private module: import its public names from ``webhand`` (``webhand.__all__``); the module's path may
change in any release.
"""

from __future__ import annotations

import re

#: The most of one value (an argument, a URL, a selector) an error quotes. A model that sent a
#: 1 MB argument must not get it back in the error: that is ~250k tokens of its context.
QUOTE_LIMIT = 200
#: The longest message (and hint) an error carries, whatever it quotes.
MESSAGE_LIMIT = 2000


def shorten(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text) - limit:,} more characters)"


# A value quoted into a message shows as a long run without spaces ('xxxx', a URL, a selector).
_LONG_RUN = re.compile(r"\S{%d,}" % (QUOTE_LIMIT + 1))
_OPENING = "'\"([{"
_CLOSING = "'\").,;:]}"


def _shorten_run(match: re.Match[str]) -> str:
    run = match.group()
    # Keep the quotes or brackets around the value, unless the run is mostly made of them.
    body = run.lstrip(_OPENING)
    opening = run[: len(run) - len(body)]
    stripped = body.rstrip(_CLOSING)
    closing = body[len(stripped):]
    if len(opening) > 3 or len(closing) > 3:
        return shorten(run)
    return opening + shorten(stripped) + closing


# Page text is data, never structure (docs/design.md, "Replies"): where a page-made value enters a
# line, every line break (\n, \r, VT, FF, NEL, U+2028/U+2029), other control and bidi control is
# escaped, so that it can neither end the line nor start one of webhand's own, nor reorder it.
_OTHER_BREAKING = "\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
UNSAFE_IN_LINE = re.compile(f"[\x00-\x1f{_OTHER_BREAKING}]")
#: The same but \n and \t, which webhand itself writes between and inside its lines.
UNSAFE_IN_REPLY = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHER_BREAKING}]")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def one_line(text: str) -> str:
    """``text`` with its line breaks, controls and bidi controls escaped (``\\n``, ``\\u2028``)."""
    return UNSAFE_IN_LINE.sub(escape_char, text)


def capped(text: str) -> str:
    """``text`` on one line (an error quotes page values: a JavaScript exception, an option's
    value), every long quoted value cut to ``QUOTE_LIMIT``, then at most ``MESSAGE_LIMIT``
    characters (keeping its start and end: what failed, and why)."""
    text = _LONG_RUN.sub(_shorten_run, one_line(text))
    if len(text) <= MESSAGE_LIMIT:
        return text
    head, tail = MESSAGE_LIMIT * 2 // 3, MESSAGE_LIMIT // 4
    return f"{text[:head]}…({len(text) - head - tail:,} characters left out)…{text[-tail:]}"


class WebhandError(Exception):
    """Base of every error webhand raises on purpose.

    ``message`` says what failed and why; ``hint`` says what to do next. They are kept apart so
    that callers (and tests) can tell them apart, and joined for the model. Both are capped here,
    once for every surface, so that no error echoes a huge argument back (see ``capped``).
    """

    def __init__(self, message: str, hint: str = "") -> None:
        message, hint = capped(message), capped(hint)
        self.message = message
        self.hint = hint
        super().__init__(f"{message} {hint}".strip())


class InvalidArgument(WebhandError):
    """The model sent arguments the tool cannot use."""


class UnknownTool(WebhandError):
    """No tool of that name is served."""


class BrowserNotFound(WebhandError):
    """No Chromium or Chrome binary could be found."""


class NotOnFirefox(WebhandError):
    """What was asked is not built on the Firefox (WebDriver BiDi) driver yet."""

    def __init__(self, what: str, hint: str = 'Use driver = "cdp" (WEBHAND_DRIVER=cdp) for it.', *,
                 lacking: str | None = None) -> None:
        # ``lacking``: what Firefox or WebDriver BiDi lacks, when it is not merely unbuilt.
        super().__init__(f"{what} is not available on Firefox: {lacking}." if lacking else
                         f"{what} is not available on Firefox yet.", hint)


class BrowserLaunchFailed(WebhandError):
    """A browser binary was found but did not start or could not be reached."""


class SessionLimitReached(WebhandError):
    """Starting another session would pass ``max_sessions``."""


class TabLimitReached(WebhandError):
    """Opening another tab would pass ``max_tabs`` for the session."""


class SessionNotFound(WebhandError):
    """A page tool named a session that is not open (named sessions are started on purpose)."""


class SessionClosed(WebhandError):
    """The session (or its browser) is gone, e.g. the browser crashed."""


class PageCrashed(WebhandError):
    """The renderer of a page crashed (or was killed); its tab was replaced by a fresh one."""


class PageUnresponsive(WebhandError):
    """A page stopped answering (e.g. a script that never ends); webhand ended it and opened a fresh tab."""


class RefNotFound(WebhandError):
    """A ref names no element of the current page: stale, from another page, or never issued."""


class ElementNotActionable(WebhandError):
    """The element exists but cannot take the action: hidden, disabled, covered, detached."""


class NavigationFailed(WebhandError):
    """A navigation did not reach a page: bad URL, refused connection, DNS, TLS."""


class ActionTimeout(WebhandError):
    """An operation did not finish within its timeout."""


class EvaluationDisabled(WebhandError):
    """JavaScript evaluation is turned off by configuration."""


class EvaluationFailed(WebhandError):
    """The page threw while evaluating the model's JavaScript."""


class PolicyRefused(WebhandError):
    """A configured rule (origins, file roots, capabilities) refused the request."""


class DialogPending(WebhandError):
    """A JavaScript dialog blocks the page until it is answered."""


class FileNotReadable(WebhandError):
    """A file the tool should read is missing, unreadable or of an unsupported kind."""


class FileNotWritable(WebhandError):
    """A file the tool should write cannot be written there (a bad name, no space, no permission)."""


class ConfigError(WebhandError):
    """A configuration value is invalid."""


class HumanInControl(WebhandError):
    """A person has taken control of the session in the dashboard, and did not hand it back in time."""


class HumanDeclined(WebhandError):
    """The person asked for help in the MCP client declined or dismissed the request."""


class PoolFull(SessionLimitReached):
    """Every pool endpoint a new session may use is full (or down), and the wait for a place ended."""


class DocumentTooLarge(WebhandError):
    """A document is too large to convert to text within webhand's bounds (tags, memory)."""


class ProfileInUse(WebhandError):
    """A named profile is held by another session (one browser per profile folder)."""
