"""Asking a person for help: a login, a CAPTCHA, a second factor the agent cannot handle.

``browser_request_human`` shows the request in the dashboard, and waits until a person has taken
control of the session there and handed it back (session/control.py). The session is the same
one afterwards: the agent's next snapshot shows the page as the person left it.
"""

from __future__ import annotations

import logging

from pydantic import Field

from webhand.errors import ActionTimeout, HumanInControl, PolicyRefused
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

log = logging.getLogger("webhand")


class RequestHumanArgs(PageArgs):
    reason: str = Field(min_length=1, max_length=500,
                        description="What the person should do, e.g. 'Log in as the test user' or 'Solve the CAPTCHA'.")
    timeout: float = Field(300.0, gt=0, le=3600, description="Seconds to wait for the person to hand the session back.")


@tool("browser_request_human", capability="human")
async def request_human(session: Session, args: RequestHumanArgs, response: Response) -> None:
    """Ask a person to take over this session in the dashboard (login, CAPTCHA); waits until they hand it back."""
    url = session.dashboard_link()
    if url is None:
        raise PolicyRefused("No dashboard is being served, so no person can take over this session.",
                            "Ask the user to run `webhand dashboard` (CLI) or to serve MCP over HTTP "
                            "(`webhand mcp --port N`, which serves /dashboard), then call again.")
    # The model gets the link only with the reply; whoever runs the server sees the request now.
    log.warning("the agent asks for a person on %s: %s (%s)", session.key, args.reason, url)
    outcome = await session.control.request_help(args.reason, args.timeout)
    if outcome == "untaken":
        raise ActionTimeout(f"Nobody took control of the session within {args.timeout:g} s. The request was shown at {url}.",
                            "Give the user this link, or carry on without help.")
    if outcome == "held":
        raise HumanInControl(f"A person still has control of the session after {args.timeout:g} s ({url}).",
                             "Call browser_request_human again to keep waiting; other calls wait for the release.")
    response.add(f"A person took control in the dashboard ({url}) and handed the session back. "
                 "The page may have changed: call browser_snapshot before acting.")
    response.data({"dashboard": url, "handed_back": True})
