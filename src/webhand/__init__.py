"""webhand: a real headless Chromium for AI agents, as tools.

    from webhand import Webhand

    async with Webhand() as wh:
        tools = wh.context("conversation-42")
        reply = await tools.call("browser_navigate", {"url": "http://127.0.0.1:8000"})
        print(reply.text)
"""

__version__ = "0.1.0"  # first: modules imported below read it

from webhand.config import Settings, load_settings
from webhand.engine.subreaper import adopt_orphans
from webhand.errors import WebhandError
from webhand.host import ToolContext, Webhand
from webhand.response import ImageBlock, ToolResult
from webhand.tools import CATALOG, Tool
from webhand.api import Browser, ToolCallFailed, open_browser  # noqa: E402 - needs the names above
from webhand.surfaces.schemas import ToolDispatcher, definitions  # noqa: E402

__all__ = ["CATALOG", "Browser", "ImageBlock", "Settings", "Tool", "ToolCallFailed", "ToolContext", "ToolDispatcher",
           "ToolResult", "Webhand", "WebhandError", "__version__", "adopt_orphans", "definitions", "load_settings",
           "open_browser"]
