"""What the dashboard shows, as JSON: the sessions, and one session's history, console and network.

Everything that comes from a page or the model goes through the masker every reply goes through
(security/masking.py), so a secret the page echoes never reaches the dashboard either.
"""

from __future__ import annotations

import time
from typing import Any

import psutil

from webhand.host import Webhand
from webhand.response import CHARS_PER_TOKEN, clip_line, page_block
from webhand.security.masking import Masker
from webhand.session.session import Session

#: How many of the newest history entries, console lines and requests one refresh carries.
RECENT = 100
_TEXT_LIMIT = 500
_BLOCK_LINES = 12


def _memory_bytes(session: Session) -> int | None:
    """The proportional set size (PSS) of the session's own browser processes, summed: each
    process's private memory plus its share of what they share, so that the sum is not counted
    twice as resident sizes (RSS) are. None when the session shares a browser."""
    if not session.owns_browser or not session.browser.pid:
        return None
    try:
        root = psutil.Process(session.browser.pid)
        processes = [root, *root.children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    total = 0
    for process in processes:
        try:
            total += process.memory_full_info().pss
        except (psutil.NoSuchProcess, psutil.AccessDenied, AttributeError):
            continue  # a renderer that just ended; AttributeError: no PSS on this system
    return total


def session_summary(session: Session) -> dict[str, Any]:
    tabs = [t for t in session.context.tabs if not t.closed]
    active = session.active_tab
    control = session.control
    return {
        "id": session.public_id, "conversation": session.key.conversation, "name": session.key.name,
        "profile": session.profile,  # the named profile its browser runs on (sign-ins that last), or None
        "status": "human" if control.held else session.status,
        "url": active.url if active is not None and not active.closed else (tabs[0].url if tabs else ""),
        "tabs": len(tabs), "idle_seconds": round(session.idle_for(), 1), "memory_bytes": _memory_bytes(session),
        "actions": session.history.count, "created_at": session.created_at,
        "reply_chars": session.history.reply_chars,
        "reply_tokens": round(session.history.reply_chars / CHARS_PER_TOKEN),
        "human_requested": control.request_reason,
        "control": control.status(),  # who holds control, since when, how it ends; None: nobody
    }


def sessions_list(webhand: Webhand) -> list[dict[str, Any]]:
    masker = Masker(webhand.settings.secrets_file)
    rows = [masker.data(session_summary(s)) for s in webhand.sessions.sessions() if not s.closed]
    return sorted(rows, key=lambda r: (r["conversation"], r["name"]))


def session_details(webhand: Webhand, session: Session, since: int = 0) -> dict[str, Any]:
    """The session's summary, its history entries after index ``since``, recent console and network."""
    masker = Masker(webhand.settings.secrets_file)
    entries = [e.to_dict() for e in session.history.recent(RECENT) if e.index > since]
    for entry in entries:
        entry["thumbnail"] = bool(entry["thumbnail"])  # the path stays on the server
        entry["reply_tokens"] = round(entry.get("reply_chars", 0) / CHARS_PER_TOKEN)
    console = [{"level": c.level, "text": _block(masker.text(c.text)), "tab": c.tab}
               for c in list(session.console)[-RECENT:]]
    network = [{"method": n.method, "url": clip_line(masker.text(n.url), _TEXT_LIMIT), "status": n.status,
                "type": n.resource_type, "failure": n.failure,
                "size": n.size or None,  # 0 bytes over the wire: served from a cache, its size is not known
                "time_ms": round(n.duration * 1000) if n.duration is not None else None}
               for n in list(session.network)[-RECENT:]]
    dialogs = session.open_dialogs()
    dialog = {"kind": dialogs[0].kind, "message": _block(masker.text(dialogs[0].message)),
              "default": clip_line(masker.text(dialogs[0].default_value), _TEXT_LIMIT), "tab": dialogs[0].tab} \
        if dialogs else None
    return masker.data({"session": session_summary(session), "history": entries, "console": console,
                        "network": network, "dialog": dialog, "now": time.time()})


def _block(text: str) -> str:
    """Page text with its own line breaks (a stack trace reads as one), bounded; the page shows it as
    text (``textContent``), never as markup, and indents its later lines itself."""
    return page_block(text, _TEXT_LIMIT, _BLOCK_LINES, lead="")
