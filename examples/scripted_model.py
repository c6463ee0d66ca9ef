"""The part a model would play in the examples, scripted: it reads the tool replies and picks the
next call, so the examples run end to end with no API key.

The task is the one `webhand demo` does on the bundled site: open it, read it, fill in the ticket
form using the refs the snapshot gave, submit it and read the result. Like a model, it knows no ref
in advance: it finds them in the snapshot text.
"""

from __future__ import annotations

import re
from typing import Any

TASK = "Open the support site, create a ticket for Ada Lovelace (ada@example.org) and tell me what the page says."


def _ref(snapshot: str, role: str, name: str) -> str:
    found = re.search(rf'{role} "{re.escape(name)}" \[(\w+)\]', snapshot)
    if not found:
        raise RuntimeError(f"the snapshot has no {role} named {name!r}:\n{snapshot}")
    return found.group(1)


def next_calls(url: str, replies: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls to make after ``replies`` (the text of every tool reply so far, in order);
    an empty list once the task is done."""
    step = len(replies)
    if step == 0:
        return [("browser_navigate", {"url": url})]
    if step == 1:
        return [("browser_snapshot", {})]
    if step == 2:
        page = replies[-1]
        return [("browser_type", {"ref": _ref(page, "textbox", "Your name"), "text": "Ada Lovelace"}),
                ("browser_type", {"ref": _ref(page, "textbox", "Email"), "text": "ada@example.org"}),
                ("browser_click", {"ref": _ref(page, "button", "Create ticket")})]
    if step == 5:
        return [("browser_snapshot", {"mode": "interactive"})]
    return []


def final_answer(replies: list[str]) -> str:
    found = re.search(r"^\s*status: (.*)$", replies[-1], re.MULTILINE)
    return f"The page says: {found.group(1)}" if found else "The ticket form gave no status."
