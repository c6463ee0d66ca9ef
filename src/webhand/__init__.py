"""webhand: a real headless Chromium for AI agents, as tools.

    from webhand import Webhand

    async with Webhand() as wh:
        tools = wh.conversation("conversation-42")
        reply = await tools.call("browser_navigate", {"url": "http://127.0.0.1:8000"})
        print(reply.text)
"""

# Neither `from __future__` nor importlib here: every `webhand` command imports this module first,
# and a warm CLI call must cost little more than Python's own start.
import sys

__version__ = "0.1.0"

# The public API is these names and the framework adapters (``webhand.adapters.*``), as httpx's is
# what its __init__ exports: every other module is private (each package's docstring says so, and
# tests/test_layout.py checks that the README and examples import nothing else). The public names
# load on first use (PEP 562): `webhand mcp` must answer its client before the
# tool catalog and pydantic models are imported, and the CLI's call to the daemon needs none of them.
_EXPORTS = {
    "Settings": "webhand.config", "load_settings": "webhand.config", "WebhandError": "webhand.errors",
    "Conversation": "webhand.host", "ToolContext": "webhand.host", "Webhand": "webhand.host", "ImageBlock": "webhand.response",
    "ToolResult": "webhand.response", "CATALOG": "webhand.tools", "Tool": "webhand.tools",
    "Browser": "webhand.api", "ToolCallFailed": "webhand.api", "open_browser": "webhand.api",
    "ToolDispatcher": "webhand.surfaces.schemas", "definitions": "webhand.surfaces.schemas",
    "adopt_orphans": "webhand.engine.launch.subreaper", "serve_demo_site": "webhand.surfaces.cli.demo",
}

__all__ = ["CATALOG", "Browser", "Conversation", "ImageBlock", "Settings", "Tool", "ToolCallFailed", "ToolContext",
           "ToolDispatcher", "ToolResult", "Webhand", "WebhandError", "__version__", "adopt_orphans", "definitions", "load_settings",
           "open_browser", "serve_demo_site"]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'webhand' has no attribute {name!r}")
    __import__(module)
    value = getattr(sys.modules[module], name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
