"""Navigation: go to a URL."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from webhand.errors import NavigationFailed
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

_SCHEMES = ("http://", "https://", "about:", "data:", "file:", "chrome:", "view-source:", "blob:")


class NavigateArgs(PageArgs):
    url: str = Field(description="URL to open; http:// is assumed for localhost, https:// otherwise.")
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"] = Field(
        "load", description="Page event that counts as loaded.")
    timeout: float | None = Field(None, gt=0, le=600, description="Seconds to wait (default 15).")


def normalize_url(url: str) -> str:
    url = url.strip()
    if not url:
        raise NavigationFailed("The URL is empty.", "Give a URL such as https://example.com.")
    if url.lower().startswith(_SCHEMES):
        return url
    if "://" in url:
        scheme = url.split("://", 1)[0]
        raise NavigationFailed(f"The URL scheme '{scheme}' is not supported.", "Use http:// or https://.")
    host = url.split("/", 1)[0].split(":", 1)[0].lower()
    local = host in ("localhost", "[::1]") or host.startswith("127.") or host.endswith(".localhost")
    return ("http://" if local else "https://") + url


@tool("browser_navigate")
async def navigate(session: Session, args: NavigateArgs, response: Response) -> None:
    """Open a URL in the current tab. Replies with the final URL, title and HTTP status."""
    tab = await session.tab()
    result = await tab.navigate(normalize_url(args.url), wait_until=args.wait_until,
                                timeout=args.timeout or session.settings.timeout)
    status = f" (HTTP {result.status})" if result.status else ""
    response.add(f"Opened {result.url}{status}")
    if result.title:
        response.add(f"Title: {result.title}")
    if result.status and result.status >= 400:
        response.add(f"The server answered {result.status}: the page is an error page.")
    response.data({"url": result.url, "title": result.title, "status": result.status})
