"""How much the tool list costs a model: ``webhand schema --stats``.

Every tool definition is sent with every model request, so its size is a running cost. This
measures the MCP ``tools/list`` result as sent on the wire (compact JSON) for the default
groups, for all groups and for the single-tool style. Tokens are estimated offline from the
characters, calibrated on Playwright MCP 0.0.83: its 25 default tools are 20,296 characters of
tools/list, reported as about 4,300 tokens, so 4.7 characters per token.
"""

from __future__ import annotations

import json

from webhand.config import Settings
from webhand.response import CHARS_PER_TOKEN
from webhand.surfaces.exposure import exposed_tools
from webhand.surfaces.mcp.server import mcp_tool
from webhand.tools import enabled_tools

PLAYWRIGHT_MCP_CHARS = 20_296  # 25 tools, measured with bench/node_modules/@playwright/mcp 0.0.83


def tools_list_chars(settings: Settings, capabilities: list[str] | None, style: str) -> tuple[int, int]:
    """(number of tools, characters of the tools/list result) for one configuration."""
    tools = [mcp_tool(t) for t in exposed_tools(enabled_tools(settings, capabilities), style)]
    wire = {"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]}
    return len(tools), len(json.dumps(wire, separators=(",", ":"), ensure_ascii=False))


def size_report(settings: Settings) -> str:
    rows = [("default (" + ",".join(settings.capabilities) + ")", None, "multi"),
            ("all groups", ["all"], "multi"),
            ("single tool, default groups", None, "single"),
            ("single tool, all groups", ["all"], "single")]
    lines = [f"{'configuration':32} {'tools':>5} {'chars':>7} {'~tokens':>8}"]
    for label, caps, style in rows:
        count, chars = tools_list_chars(settings, caps, style)
        lines.append(f"{label:32} {count:>5} {chars:>7,} {round(chars / CHARS_PER_TOKEN):>8,}")
    lines.append(f"{'Playwright MCP 0.0.83 default':32} {25:>5} {PLAYWRIGHT_MCP_CHARS:>7,} "
                 f"{round(PLAYWRIGHT_MCP_CHARS / CHARS_PER_TOKEN):>8,}")
    return "\n".join(lines)
