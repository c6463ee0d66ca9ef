"""Other views of a page: its readable text, its HTML, and its state as JSON for programs."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, model_validator

from webhand.page.readable import read_html, readable_markdown
from webhand.page.snapshot import take_snapshot, viewport
from webhand.response import HTML_LIMIT, URL_LIMIT, WHOLE_URL, Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

#: browser_content replies with at most this much HTML (the rest goes to a file).
MAX_HTML_BYTES = HTML_LIMIT


class TextArgs(PageArgs):
    selector: str | None = Field(None, description="CSS selector: read only that part of the page.")


@tool("browser_text", read_only=True)
async def text(session: Session, args: TextArgs, response: Response) -> None:
    """Read the page's main text (the article, not the menus) as Markdown. Cheaper than a snapshot for reading."""
    tab = await session.tab()
    markdown, is_article = await readable_markdown(tab, selector=args.selector, timeout=session.settings.timeout)
    response.add(f"Page: {response.page(tab.url, URL_LIMIT, WHOLE_URL)}")
    if not is_article:
        response.add("No article found; this is the visible text:" if markdown else "The page shows no text.")
    add_long_text(response, markdown, session.settings.text_max_chars,
                  "or call browser_text with a selector to read one part")


def add_long_text(response: Response, text: str, limit: int, narrower: str) -> None:
    """``text`` in the reply up to ``limit`` characters; the whole of it in a file when longer."""
    if len(text) <= limit:
        response.add(text)
        return
    path = response.write_file(text, "text", ".md")
    response.add(text[:limit].rstrip())
    response.add(f"[Cut at {limit:,} of {len(text):,} characters. The whole text is in {path}; {narrower}.]")


class ContentArgs(PageArgs):
    ref: str | None = Field(None, description="Element ref from browser_snapshot: only that element's HTML.")
    selector: str | None = Field(None, description="CSS selector: only that element's HTML.")

    @model_validator(mode="after")
    def _one_target(self) -> "ContentArgs":
        if self.ref and self.selector:
            raise ValueError("give `ref` or `selector`, not both")
        return self


@tool("browser_content", capability="inspect", read_only=True)
async def content(session: Session, args: ContentArgs, response: Response) -> None:
    """Get the HTML of the page or of one element (as rendered now, after scripts ran)."""
    tab = await session.tab()
    html = (await read_html(tab, selector=args.selector, ref=args.ref)).html
    size = len(html.encode())
    if size <= MAX_HTML_BYTES:
        response.add(html)
        return
    path = response.write_file(html, "content", ".html")
    response.add(html.encode()[:MAX_HTML_BYTES].decode(errors="ignore"))
    response.add(f"[Cut at {MAX_HTML_BYTES:,} of {size:,} bytes. The whole HTML is in {path}; "
                 "or pass a ref or selector to get one element.]")


class StateArgs(PageArgs):
    scope: str | None = Field(None, description="Ref or CSS selector: only elements inside it.")
    max_refs: int = Field(500, ge=1, le=10_000, description="Most elements to list.")


@tool("browser_state", capability="inspect", read_only=True)
async def state(session: Session, args: StateArgs, response: Response) -> None:
    """Page state as JSON for programs: viewport and the interactive elements, with the same refs as browser_snapshot."""
    tab = await session.tab()
    shot = await take_snapshot(tab, scope=args.scope, max_refs=args.max_refs, records=True)
    value = {"url": shot.url, "title": shot.title, "viewport": await viewport(tab),
             "elements": shot.records, "omitted": shot.omitted}
    response.data(value)
    response.large(_one_element_per_line(value), what="page state", limit=session.settings.snapshot_max_chars, suffix=".json",
                   hint="Call browser_state with scope (a ref or CSS selector) to get part of it.")
    if shot.omitted:
        response.add(f"{shot.omitted} more elements were left out (max_refs={args.max_refs}): raise max_refs or narrow with scope.")


def _one_element_per_line(value: dict[str, Any]) -> str:
    """Compact JSON with one element per line: valid JSON, cheap in tokens, easy to scan."""
    head = json.dumps({k: v for k, v in value.items() if k != "elements"}, ensure_ascii=False, separators=(",", ":"))
    rows = ",\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in value["elements"])
    return head[:-1] + ',"elements":[\n' + rows + "\n]}"
