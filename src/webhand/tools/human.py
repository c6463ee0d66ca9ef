"""Asking a person for help: a login, a CAPTCHA, a second factor the agent cannot handle.

``browser_request_human`` shows the request in the dashboard, and waits until a person has taken
control of the session there and handed it back (session/control.py). When the client can ask its
person itself (MCP elicitation: ``Response.caller.ask_person``), the request also appears there,
with the dashboard link, and the call resumes when the person answers Done in the client. The
session is the same one afterwards: the agent's next snapshot shows the page as the person left it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata

from pydantic import Field

from webhand.caller import AskPerson
from webhand.errors import ActionTimeout, HumanDeclined, HumanInControl, PolicyRefused
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

log = logging.getLogger("webhand")

#: The most of the model's reason a person is shown: a request, not a letter.
MAX_SHOWN_REASON = 200
#: A link with a scheme (``https://…``, ``javascript:…``, ``mailto:…``): removed.
_LINK = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://\S*|\b(?:javascript|vbscript|data|mailto|file|tel|sms|intent|blob):\S*")
#: A bare host name or IPv4 address, which clients turn into a link as well: its dots defanged.
_HOST = re.compile(r"(?i)\b(?:[a-z0-9-]+\.)+[a-z0-9-]+\b")


def reason_for_person(reason: str) -> str:
    """The model's reason as a person is shown it: one line of plain text, at most
    ``MAX_SHOWN_REASON`` characters, with no link of its own. A model led by a page writes this
    text; the prompt the person sees must not carry a second link beside webhand's (which the person
    would follow as webhand's), nor line breaks or invisible characters that make a paragraph of its
    own look like webhand's."""
    text = unicodedata.normalize("NFKC", reason)
    text = "".join(" " if unicodedata.category(c)[0] in "CZ" else c for c in text)
    text = _LINK.sub("[link removed]", text)
    text = _HOST.sub(lambda host: host.group().replace(".", "[.]"), text)
    text = " ".join(text.split())
    return text if len(text) <= MAX_SHOWN_REASON else text[:MAX_SHOWN_REASON - 1].rstrip() + "…"


class RequestHumanArgs(PageArgs):
    reason: str = Field(min_length=1, max_length=500,
                        description="What the person should do, e.g. 'Log in as the test user' or 'Solve the CAPTCHA'.")
    timeout: float = Field(300.0, gt=0, le=3600, description="Seconds to wait for the person to hand the session back.")


@tool("browser_request_human", capability="human")
async def request_human(session: Session, args: RequestHumanArgs, response: Response) -> None:
    """Ask a person to take over this session in the dashboard (login, CAPTCHA); waits until they hand it back."""
    reason = reason_for_person(args.reason)
    url = session.dashboard_link()
    if url is None:
        raise PolicyRefused("No dashboard serves this session, so no person can take it over.",
                            "Ask the user to start this MCP server with `webhand mcp --dashboard` (stdio: it prints the "
                            "dashboard's link on stderr) or over HTTP (`webhand mcp --port N`, dashboard at /dashboard), "
                            "then call again. For the CLI's sessions, `webhand dashboard` serves it.")
    # The model gets the link only with the reply; whoever runs the server sees the request now.
    log.warning("the agent asks for a person on %s: %s (%s)", session.key, reason, url)
    ask = response.caller.ask_person
    if ask is not None:
        await _ask_in_client(session, reason, args.timeout, response, url, ask)
        return
    response.waiting_for("a person to take over in the dashboard and hand the session back")
    outcome = await session.control.request_help(reason, args.timeout)
    if outcome == "untaken":
        raise ActionTimeout(f"Nobody took control of the session within {args.timeout:g} s. The request was shown at {url}.",
                            "Give the user this link, or carry on without help.")
    if outcome == "held":
        raise HumanInControl(f"A person still has control of the session after {args.timeout:g} s ({url}).",
                             "Call browser_request_human again to keep waiting; other calls wait for the release.")
    # How it came back: the person released it, or their page went away (the lease lapsed), or
    # someone forced it back; the last two may mean the task is not done.
    response.add(f"A person took control in the dashboard ({url}); {session.control.ended_how()}. "
                 "The page may have changed: call browser_snapshot before acting.")
    response.data({"dashboard": url, "handed_back": True, "how": session.control.last_end})


async def _ask_in_client(session: Session, reason: str, timeout: float, response: Response, url: str,
                         ask: AskPerson) -> None:
    """Ask the person through the MCP client: they act in the dashboard, then answer Done there."""
    message = (f"The browser agent asks for your help, in its own words (links removed): \"{reason}\"\n"
               f"To help, open webhand's dashboard, take control of the session and do it, then choose Done "
               f"(Accept) here: {url}")
    response.waiting_for("the person to answer in the MCP client")
    session.control.request_reason = reason  # the dashboard shows the request too
    try:
        async with asyncio.timeout(timeout):
            answer = await ask(message, url)
    except TimeoutError:
        raise ActionTimeout(f"The person did not answer the request in the client within {timeout:g} s ({url}).",
                            "Call browser_request_human again to keep waiting, or carry on without help.") from None
    finally:
        session.control.request_reason = None
    if answer != "accept":
        what = "declined" if answer == "decline" else "dismissed"
        raise HumanDeclined(f"The person {what} the request for help ({reason}).",
                            "Do not ask again for the same thing; carry on without it, or tell the user what you need.")
    # Done means done: control a person still holds in the dashboard goes back to the agent.
    session.control.end_takeover()
    response.add(f"The person answered Done in the client (dashboard: {url}). "
                 "The page may have changed: call browser_snapshot before acting.")
    response.data({"dashboard": url, "handed_back": True})
