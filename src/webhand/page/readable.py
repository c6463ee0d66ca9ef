"""Readable text of a page: the article as Markdown, not the menus; and a page's HTML.

trafilatura finds the main content of the page's rendered HTML (what scripts built, not what
the server first sent), in a worker process bounded in size, time and memory (``convert``).
When it finds no article (a form, an app), the page's visible text is returned instead, so the
model always gets something it can read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from webhand.engine.driver import Frame, Tab
from webhand.errors import InvalidArgument, RefNotFound
from webhand.page.convert import article_markdown
from webhand.engine.break_hints import without_break_hints

_REF = re.compile(r"^(f\d+)?(e\d+)$")

# Returns {html, text} of the document or of one element, or {error} saying why there is none.
_READ = """([how, target]) => {
  let el = document.documentElement;
  if (how === 'selector') {
    try { el = document.querySelector(target); } catch (e) { return { error: 'invalid', message: String(e.message || e) }; }
    if (!el) return { error: 'missing' };
  } else if (how === 'ref') {
    el = window.__webhand ? window.__webhand.resolve(target) : 'unknown';
    if (typeof el === 'string') return { error: el };
  }
  const doctype = how === 'page' && document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\\n' : '';
  const shown = el === document.documentElement ? (document.body || el) : el;
  return { html: doctype + el.outerHTML, text: shown.innerText || shown.textContent || '' };
}"""


@dataclass(frozen=True)
class Extract:
    html: str
    text: str  # innerText: what a user sees, as a fallback when no article is found


async def read_html(tab: Tab, *, selector: str | None = None, ref: str | None = None) -> Extract:
    """The HTML (and visible text) of the page, of the element a CSS selector matches, or of a ref."""
    frames = await tab.refs.frames()
    frame_key, how, target = "", "page", ""
    if ref:
        match = _REF.match(ref.strip())
        if not match:
            raise RefNotFound(f"'{ref}' is not a ref.", "Refs look like e12 or f1e3; call browser_snapshot and use the new refs.")
        frame_key, how, target = match.group(1) or "", "ref", match.group(2)
    elif selector:
        how, target = "selector", selector
    frame = _frame(frames, frame_key, ref)
    result = await frame.evaluate(_READ, [how, target])
    error = result.get("error")
    if error == "invalid":
        raise InvalidArgument(f"The selector {selector!r} is not valid: {result.get('message', '')}",
                              "Pass a CSS selector such as 'main' or '#content', or a ref from browser_snapshot.")
    if error == "missing":
        raise RefNotFound(f"No element matches the selector {selector!r}.",
                          "Call browser_snapshot to see the page, then pass a matching selector or a ref.")
    if error == "removed":
        raise RefNotFound(f"Ref {ref} is stale: its element was removed or replaced since the snapshot.",
                          "Call browser_snapshot and use the new refs.")
    if error:
        raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated or the ref was never issued).",
                          "Call browser_snapshot and use the new refs.")
    # The HTML stays as the page has it; the text is what a reader sees, without break hints.
    return Extract(result["html"], without_break_hints(result["text"]))


def _frame(frames: list[Frame], key: str, ref: str | None) -> Frame:
    for frame in frames:
        if frame.key == key:
            return frame
    raise RefNotFound(f"Ref {ref} is stale: its frame is gone.", "Call browser_snapshot and use the new refs.")


async def readable_markdown(tab: Tab, *, timeout: float, selector: str | None = None,
                            ref: str | None = None) -> tuple[str, bool]:
    """The main text as Markdown, and whether it is the article (False: the visible text instead).
    The conversion runs in a worker process, bounded in time (``timeout``) and memory (``convert``)."""
    page = await read_html(tab, selector=selector, ref=ref)
    narrower = ("Read one part: browser_text with a selector (such as 'main' or 'article'), browser_snapshot with "
                "scope, or browser_find to locate text.")
    markdown = without_break_hints(await article_markdown(page.html, tab.url, timeout=timeout, narrower=narrower))
    if markdown.strip():
        return markdown.strip(), True
    visible = re.sub(r"\n\s*\n+", "\n\n", page.text).strip()
    return visible, False
