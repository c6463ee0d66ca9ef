"""web_fetch: read a page over plain HTTP, and open it in the browser only when that is needed.

A documentation page, an article or a JSON API needs no browser: one GET and trafilatura give
its text in a fraction of a navigate's time and memory. When the server refuses plain clients
or the page needs JavaScript (``fetching.needs_browser``), the page is opened in the
conversation's browser session instead, with browser_navigate and browser_text, and the reply
says so.
"""

from __future__ import annotations

import time

from pydantic import Field

from webhand.durations import Timeout
from webhand.errors import ActionTimeout, InvalidArgument
from webhand.page.convert import html_document
from webhand.page.http_fetch import Fetched, fetch, needs_browser
from webhand.response import Response
from webhand.security.origins import OriginRules
from webhand.session.conversation import ConversationSessions
from webhand.session.session import Session
from webhand.tools.definition import ToolArgs, tool
from webhand.tools.navigation import NavigateArgs, navigate, normalize_url
from webhand.tools.reading import TextArgs, add_long_text, text


class FetchArgs(ToolArgs):
    url: str = Field(description="http(s) URL to read.")
    fallback: bool = Field(True, description="Open the page in the browser when the server refuses plain clients "
                                             "(403, 429, a bot challenge) or the page needs JavaScript.")
    session: str | None = Field(None, description="Browser session for the fallback; omit for the default one.")
    timeout: Timeout = None


@tool("web_fetch", capability="fetch", read_only=True)
async def web_fetch(sessions: ConversationSessions, args: FetchArgs, response: Response) -> None:
    """Read a URL over plain HTTP, without the browser: its main text as Markdown with title and links. Much cheaper than browser_navigate for documentation and articles; falls back to the browser when the page needs it."""
    settings = sessions.settings
    timeout = args.timeout or settings.timeout
    url = normalize_url(args.url)
    if not url.lower().startswith(("http://", "https://")):
        raise InvalidArgument(f"web_fetch reads http:// and https:// URLs only, not {url[:80]}.",
                              "Open other URLs with browser_navigate.")
    rules = OriginRules.from_settings(settings)
    started = time.monotonic()
    response.waiting_for(f"{response.page(url, 200)} to answer")
    try:
        page = await fetch(url, rules, max_bytes=settings.fetch_max_bytes, timeout=timeout)
    except TimeoutError:
        raise ActionTimeout(f"Fetching {url} did not finish within {timeout:g} s.",
                            "Call web_fetch with a larger timeout, or open the page with browser_navigate.") from None
    reason = needs_browser(page)
    if reason and args.fallback:
        left = max(1.0, timeout - (time.monotonic() - started))
        await _in_browser(sessions, args, page, reason, response, left)
        return
    await _reply(page, response, settings.text_max_chars, max(1.0, timeout - (time.monotonic() - started)))
    if reason:
        response.add(f"[Not opened in the browser (fallback=false), though {reason}.]")


async def _reply(page: Fetched, response: Response, limit: int, timeout: float) -> None:
    size = f"{len(page.body):,} bytes" + (", cut at fetch_max_bytes" if page.truncated else "")
    response.add(f"Fetched {page.url} (HTTP {page.status}, {page.content_type or 'no content type'}, {size}) "
                 "without the browser.")
    if page.redirects:
        response.add("Redirected from " + " → ".join(page.redirects) + ".")
    if page.status >= 400:
        response.add(f"The server answered {page.status}: this is an error page.")
    if not page.is_text:
        response.add("It is not text, so nothing is shown. Open it with browser_navigate (a file is downloaded).")
        response.data({"url": page.url, "status": page.status, "title": "", "fell_back": False})
        return
    title = ""
    if page.is_html:
        # In a worker process, bounded in time (what is left of the call's) and memory (page/convert.py).
        document = await html_document(page.text, page.url, timeout=timeout, narrower=(
            "Open it with browser_navigate and read one part with browser_text and a selector, or browser_find; "
            "or fetch a smaller page."))
        title, body = document.title, document.markdown or document.text
        if title:
            response.add(f"Title: {title}")
        if not document.markdown:
            response.add("No article found; this is the visible text:" if body else "The page shows no text.")
    else:
        body = page.text
    add_long_text(response, body, limit, "or open the page in the browser and read one part with browser_text")
    response.data({"url": page.url, "status": page.status, "title": title, "fell_back": False})


async def _in_browser(sessions: ConversationSessions, args: FetchArgs, page: Fetched, reason: str,
                      response: Response, timeout: float) -> None:
    response.add(f"Fell back to the browser: {reason}.")

    read_at = {"url": page.url}

    async def read(session: Session) -> None:
        # The catalog's own tools, so that the fallback reads exactly as browser_navigate + browser_text.
        await navigate(session, NavigateArgs(url=args.url, session=args.session, timeout=timeout), response)
        await text(session, TextArgs(session=args.session), response)
        read_at["url"] = (await session.tab()).url

    await sessions.run(args.session, read, response, timeout=timeout)
    response.data({"url": read_at["url"], "status": None, "title": "", "fell_back": True})
