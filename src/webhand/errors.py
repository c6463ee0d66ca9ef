"""The error taxonomy.

Every failure a tool can meet is one of these. Each carries a message a model can act on:
what failed, why, and what to call next. Surfaces render ``str(error)``; nothing else about
an error reaches the model.
"""

from __future__ import annotations


class WebhandError(Exception):
    """Base of every error webhand raises on purpose.

    ``message`` says what failed and why; ``hint`` says what to do next. They are kept apart so
    that callers (and tests) can tell them apart, and joined for the model.
    """

    def __init__(self, message: str, hint: str = "") -> None:
        self.message = message
        self.hint = hint
        super().__init__(f"{message} {hint}".strip())


class InvalidArgument(WebhandError):
    """The model sent arguments the tool cannot use."""


class UnknownTool(WebhandError):
    """No tool of that name is served."""


class BrowserNotFound(WebhandError):
    """No Chromium or Chrome binary could be found."""


class BrowserLaunchFailed(WebhandError):
    """A browser binary was found but did not start or could not be reached."""


class SessionLimitReached(WebhandError):
    """Starting another session would pass ``max_sessions``."""


class SessionClosed(WebhandError):
    """The session (or its browser) is gone, e.g. the browser crashed."""


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
