"""Navigation: go to a URL, back, forward, reload, and where am I."""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from webhand.durations import Timeout
from webhand.engine.driver import Tab
from webhand.errors import NavigationFailed, shorten
from webhand.security.origins import INTERNAL_SCHEMES
from webhand.response import TITLE_LIMIT, URL_LIMIT, WHOLE_TITLE, WHOLE_URL, Response
from webhand.session.changes import loaded, settle_changes, settle_load
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool
from webhand.tools.waiting import WaitArgs, perform_wait

#: The browser's own schemes pass too: the origin policy refuses them, saying how to opt in.
_SCHEMES = ("http://", "https://", "about:", "data:", "file:", "view-source:", "blob:",
            *(f"{scheme}:" for scheme in sorted(INTERNAL_SCHEMES)))


class NavigateArgs(PageArgs):
    url: str = Field(description="URL to open; http:// is assumed for localhost, https:// otherwise.")
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"] = Field(
        "load", description="Page event that counts as loaded.")
    timeout: Timeout = None
    # The Python/Playwright design's navigate takes a selector to wait for once the page loaded
    # (or a load state). Accepted, not advertised: browser_wait_for is the tool for it.
    wait_for: SkipJsonSchema[str | None] = Field(None, min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _chrome_devtools_type(cls, data: Any) -> Any:
        """Chrome DevTools MCP's navigate_page has ``type`` "url" (this tool), or "back", "forward",
        "reload": tools of their own here, which the refusal names."""
        if isinstance(data, dict) and "type" in data:
            kind = data.get("type")
            if kind != "url":
                raise ValueError(f"type={kind!r}: this tool opens a URL; call browser_back, browser_forward or "
                                 "browser_reload to move in the history")
            data = {k: v for k, v in data.items() if k != "type"}
        return data

    @model_validator(mode="after")
    def _load_state_given_as_wait_for(self) -> "NavigateArgs":
        if self.wait_for in ("load", "domcontentloaded", "networkidle", "commit"):
            self.wait_until, self.wait_for = self.wait_for, None  # type: ignore[assignment]
        return self


_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*):")


def normalize_url(url: str) -> str:
    """The URL to open, with a scheme; a typed error for one that no browser could open."""
    url = url.strip()
    if not url:
        raise NavigationFailed("The URL is empty.", "Give a URL such as https://example.com.")
    if not url.lower().startswith(_SCHEMES):
        scheme = _SCHEME.match(url)
        if "://" in url or (scheme and not _is_port(url[scheme.end():])):  # "javascript:…", "mailto:…"
            name = url.split("://", 1)[0] if "://" in url else scheme.group(1)  # type: ignore[union-attr]
            hint = "Run JavaScript with browser_eval." if name.lower() == "javascript" else "Use http:// or https://."
            raise NavigationFailed(f"The URL scheme '{name[:40]}' is not supported.", hint)
        host = url.split("/", 1)[0].split(":", 1)[0].lower()
        local = host in ("localhost", "[::1]") or host.startswith("127.") or host.endswith(".localhost")
        url = ("http://" if local else "https://") + url
    try:
        urlsplit(url).port  # noqa: B018 - raises for a port that is not a number from 0 to 65535
    except ValueError as error:
        raise NavigationFailed(f"The URL is not valid: {error}.",
                               "Give a URL such as https://example.com:8443/path.") from None
    return url


def _is_port(rest: str) -> bool:
    """Whether what follows "host:" is a port ("8000", "8000/path"), as in "localhost:8000/path"."""
    digits = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return digits.isdigit()


# browser_navigate's structured result (MCP structuredContent with this output schema; --json).
class PageLoaded(BaseModel):
    url: str = Field(description="Final URL, after redirects.")
    title: str = Field(description="Page title.")
    status: int | None = Field(description="HTTP status of the document; null without one (data:, about:).")


@tool("browser_navigate", output=PageLoaded)
async def navigate(session: Session, args: NavigateArgs, response: Response) -> None:
    """Open a URL in the current tab. Replies with the final URL, title and HTTP status."""
    # The reply ends with the page opened (URL, status, title, failed requests: LoadChanges). With
    # "load", the settling starts before the navigation, so that the requests of the page's loading
    # are known; the page then counts as ready once they finished and no new one started for a while.
    response.waiting_for(f"the page at {response.page(args.url, 200)} to load")
    url = normalize_url(args.url)
    opening = await settle_load(session, response, settle_after=args.wait_until == "load",
                               same_document=_same_document(session.active_tab, url))
    result = await opening.tab.navigate(url, wait_until=args.wait_until,
                                        timeout=args.timeout or session.settings.timeout,
                                        title=opening.settling is None)  # else read once the page settled
    if result.download:  # the URL was a file: the tab stays put and the download line follows
        response.report_changes(None)  # no page was opened: nothing to report
        response.add(f"{shorten(args.url, URL_LIMIT)} is a file download, not a page; the tab stays at "
                     f"{response.page(result.url, URL_LIMIT, WHOLE_URL)}.")
        response.data(loaded(result.url, result.title, result.status))
        return
    opening.opened = result
    if args.wait_for:
        response.add(await perform_wait(session, WaitArgs(selector=args.wait_for, timeout=args.timeout)))


def _same_document(tab: Tab | None, url: str) -> bool:
    """Whether opening ``url`` only moves to another fragment of the page ``tab`` shows (a hash
    route): the browser then loads nothing and the page's app renders the new view itself."""
    if tab is None or tab.closed or "#" not in url:
        return False
    current = tab.url
    return current.split("#", 1)[0] == url.split("#", 1)[0] and current != url and current.startswith(("http:", "https:"))


class HistoryArgs(PageArgs):
    timeout: Timeout = None


async def _history(session: Session, args: HistoryArgs, response: Response, step: str) -> None:
    tab = await session.tab()
    timeout = args.timeout or session.settings.timeout
    # Back and forward within a single-page app move in its history (same document): the app
    # re-renders on popstate, so the work that sets off is followed as an action's.
    before = await settle_changes(session, response, action=None if step == "reload" else f"move {step}")
    if step == "reload":
        # A reload keeps the URL, so the reply tells a new title by comparing titles: the one from
        # before must be read before the reload starts. (Through Playwright the read, left to run
        # beside the action, could reach the reloaded page first, and the change went unsaid.)
        await before.title_read
        result = await tab.history.reload(timeout=timeout)
        response.add(f"Reloaded {response.page(result.url, URL_LIMIT, WHOLE_URL)}" + (f" (HTTP {result.status})" if result.status else ""))
    else:
        result = await (tab.history.go_back(timeout=timeout) if step == "back" else tab.history.go_forward(timeout=timeout))
        if result is None:
            response.report_changes(None)  # the tab did not move: nothing to report
            response.add(f"There is no {'previous' if step == 'back' else 'next'} page in this tab's history; "
                         f"the tab stays at {response.page(tab.url, URL_LIMIT, WHOLE_URL)}.")
            return
        response.add(f"Went {step}.")
    response.data(loaded(result.url, result.title, result.status))


@tool("browser_back")
async def back(session: Session, args: HistoryArgs, response: Response) -> None:
    """Go back to the previous page of the current tab."""
    await _history(session, args, response, "back")


@tool("browser_forward", capability="extra")
async def forward(session: Session, args: HistoryArgs, response: Response) -> None:
    """Go forward to the next page of the current tab's history."""
    await _history(session, args, response, "forward")


@tool("browser_reload", capability="extra")
async def reload(session: Session, args: HistoryArgs, response: Response) -> None:
    """Reload the current page."""
    await _history(session, args, response, "reload")


@tool("browser_get_url", capability="extra", read_only=True)
async def get_url(session: Session, args: PageArgs, response: Response) -> None:
    """Say the current tab's URL and title, and list the open tabs."""
    active = await session.tab()
    tabs = [t for t in session.context.tabs if not t.closed]
    listed = []
    for tab in tabs:
        title = await tab.title()
        listed.append({"index": tab.index, "url": shorten(tab.url, URL_LIMIT), "title": shorten(title, TITLE_LIMIT),
                       "active": tab is active})
    response.add(f"URL: {response.page(active.url, URL_LIMIT, WHOLE_URL)}")
    current = next((t["title"] for t in listed if t["active"]), "")
    if current:
        response.add(f"Title: {response.page(current, TITLE_LIMIT, WHOLE_TITLE)}")
    if len(listed) > 1:
        response.add(f"{len(listed)} tabs are open:")
        for item in listed:
            mark = "*" if item["active"] else " "
            response.add(f"{mark} tab {item['index']}: {response.page(item['url'], URL_LIMIT)}"
                         + (f" — {response.page(item['title'], TITLE_LIMIT)}" if item["title"] else ""))
    response.data({"url": shorten(active.url, URL_LIMIT), "title": current, "tabs": listed})
