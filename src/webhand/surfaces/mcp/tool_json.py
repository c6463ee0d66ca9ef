"""webhand's MCP results as plain JSON: a tool's entry in ``tools/list`` and a ``tools/call`` result.

One rendering for both stdio paths: the MCP SDK's server validates these into its own models
(``server``), and the early stdio server (``early``) writes them before the SDK is
loaded. Keys whose value would be null are left out, as the SDK leaves them out on the wire.
Standard library only.
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webhand.errors import shorten

if TYPE_CHECKING:
    from webhand.response import ToolResult
    from webhand.surfaces.exposure import ExposedTool


def tool_entry(tool: ExposedTool) -> dict[str, Any]:
    entry = {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema,
             "annotations": annotations(tool)}
    if tool.output_schema is not None:
        entry["outputSchema"] = tool.output_schema
    return entry


def annotations(tool: ExposedTool) -> dict[str, bool]:
    """Only hints that differ from the spec's defaults (readOnly false, destructive true, openWorld
    true) are sent: the list is paid for in tokens on every model request."""
    return {"readOnlyHint": True} if tool.read_only else {"destructiveHint": tool.destructive}


def call_result(result: ToolResult) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": result.text}]
    for image in result.images:
        content.append({"type": "image", "data": base64.b64encode(image.data).decode(), "mimeType": image.mime_type})
    # Each saved file once more as a link the same MCP session can read back (resources.py).
    content.extend(resource_link(path) for path in result.files)
    out: dict[str, Any] = {"content": content, "isError": result.is_error}
    # Structured content only on success: an error's shape would not match the tool's output schema.
    if result.data is not None and not result.is_error:
        out["structuredContent"] = result.data
    return out


def resource_link(path: str) -> dict[str, Any]:
    file = Path(path)
    return {"type": "resource_link", "uri": file.as_uri(), "name": file.name,
            "mimeType": mimetypes.guess_type(file.name)[0] or "application/octet-stream"}


def unknown_tool_result(name: Any, served: list[str]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Error: Tool {shorten(str(name))!r} is not served here. "
                         f"Available: {', '.join(served)}."}], "isError": True}
