"""``stealth = true`` on raw CDP: the disguise of ``engine/stealth.py`` (playwright-stealth's own
evasion script, the user agent without "Headless", matching languages and client hints), set on
each session of a tab while it is still paused: the page's, and each out-of-process iframe's (a
frame in the page's own process runs its page's new-document scripts). The evasion script runs in
documents, not in workers; a dedicated worker takes its page's user agent.

Playwright does the same for a context with ``user_agent``, ``locale``, ``extra_http_headers`` and
an init script; here they are ``Emulation.setUserAgentOverride``, ``Emulation.setLocaleOverride``,
``Network.setExtraHTTPHeaders`` and ``Page.addScriptToEvaluateOnNewDocument``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from webhand.engine.cdp.connection import CdpConnection
from webhand.engine.stealth import LANGUAGES, LAUNCH_FLAGS, StealthProfile

__all__ = ["LAUNCH_FLAGS", "StealthProfile", "session_commands"]


def session_commands(connection: CdpConnection, profile: StealthProfile | None, session_id: str) -> list[Awaitable[Any]]:
    """The commands that disguise one session of a tab (none without stealth), to send before its resume."""
    if profile is None:
        return []
    send = connection.send
    return [
        send.Emulation.setUserAgentOverride(params={"userAgent": profile.user_agent,
                                                    "acceptLanguage": ",".join(LANGUAGES)}, session_id=session_id),
        send.Network.setExtraHTTPHeaders(params={"headers": profile.headers()}, session_id=session_id),
        send.Emulation.setLocaleOverride(params={"locale": LANGUAGES[0]}, session_id=session_id),
        send.Page.addScriptToEvaluateOnNewDocument(params={"source": profile.script}, session_id=session_id),
    ]
