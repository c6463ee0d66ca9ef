"""The tools a page offers (WebMCP) as the model sees them: the one line a snapshot and a navigation
reply carry when the page has any, and which page tools may not be called because they are named
like one of webhand's own.

The page's tools are page text: every name and description reaches a reply through
``Response.page`` (masked, escaped, cut), never as a line of webhand's own.
"""

from __future__ import annotations

from webhand.engine.driver import PageTool, Tab
from webhand.errors import WebhandError
from webhand.response import Response

#: webhand's own tool names (tools/definition.py adds each as it is declared): a page tool named
#: like one is listed as shadowing and never called, so that no page can pass for webhand.
WEBHAND_TOOL_NAMES: set[str] = set()
#: Most page tool names the one line shows; browser_page_tools lists them all.
LINE_NAMES = 12
#: Each name on that line is cut to this many characters.
LINE_NAME_LIMIT = 60
#: How long the line's look at the page's tools may take (it never fails the reply it is in).
_LINE_TIMEOUT = 2.0


def shadows(tool: PageTool) -> bool:
    """Whether ``tool`` is named like one of webhand's own tools (or takes their ``browser_`` prefix)."""
    return tool.name in WEBHAND_TOOL_NAMES or tool.name.startswith("browser_")


async def add_page_tools_line(tab: Tab, response: Response) -> None:
    """Add ``Page tools: a, b`` when the page offers tools; nothing when it offers none, or the
    browser cannot tell (Firefox, a Chromium without WebMCP): the line costs tokens only where
    there is something to call, and only when the model has the tools to call them (the
    ``page_tools`` group is served): a name it cannot act on is tokens spent for nothing."""
    if response.served is not None and "browser_call_page_tool" not in response.served:
        return
    try:
        tools, over = await tab.page_tools.listing(timeout=_LINE_TIMEOUT, quiet=True)
    except WebhandError:
        return
    if not tools:
        return
    callable_ = [t for t in tools if not shadows(t)]
    names = ", ".join(response.page(t.name, LINE_NAME_LIMIT) for t in callable_[:LINE_NAMES])
    more = len(callable_) - LINE_NAMES + over
    line = f"Page tools: {names or '(none callable)'}"
    if more > 0:
        line += f", and {more:,} more"
    shadowing = len(tools) - len(callable_)
    if shadowing:
        line += f" ({shadowing} named like webhand's own tools, not callable)"
    response.add(line + " (the page's own; browser_page_tools describes them, browser_call_page_tool calls one)")
