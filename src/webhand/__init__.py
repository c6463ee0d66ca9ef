"""webhand: a real headless Chromium for AI agents, as tools.

    from webhand import Webhand

    async with Webhand() as wh:
        tools = wh.context("conversation-42")
        reply = await tools.call("browser_navigate", {"url": "http://127.0.0.1:8000"})
        print(reply.text)
"""

from webhand.config import Settings
from webhand.errors import WebhandError
from webhand.host import ToolContext, Webhand
from webhand.response import ImageBlock, ToolResult
from webhand.tools import CATALOG, Tool

__version__ = "0.1.0"

__all__ = ["CATALOG", "ImageBlock", "Settings", "Tool", "ToolContext", "ToolResult", "Webhand", "WebhandError",
           "__version__"]
