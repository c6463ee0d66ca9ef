"""A Firefox tab's ``page_tools`` component (``driver.PageTools``): Firefox offers no page tools.

WebMCP (a page's ``document.modelContext`` and its forms' ``toolname``) exists in Chromium only, behind
a feature; Firefox has neither the page API nor a WebDriver BiDi module that reports or runs the
tools. The page's own controls do the same tasks there.
"""

from __future__ import annotations

from typing import Any

from webhand.engine.driver import PageTool, PageToolAnswer
from webhand.errors import NotOnFirefox

_LACKING = ("it has no WebMCP: no document.modelContext, no form tools, and WebDriver BiDi has nothing that "
            "lists or runs a page's tools")
_HINT = ("Use the page's own controls (browser_snapshot, browser_click, browser_fill_form), or "
         "driver = \"cdp\" (WEBHAND_DRIVER=cdp) for the page's tools.")


class NoPageTools:
    async def listing(self, *, timeout: float, quiet: bool = False) -> tuple[list[PageTool], int]:
        if quiet:
            return [], 0
        raise NotOnFirefox("The page's own tools (WebMCP)", _HINT, lacking=_LACKING)

    async def call(self, tool: PageTool, arguments: dict[str, Any], *, timeout: float) -> PageToolAnswer:
        raise NotOnFirefox("The page's own tools (WebMCP)", _HINT, lacking=_LACKING)
