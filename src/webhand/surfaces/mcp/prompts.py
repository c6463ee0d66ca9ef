"""Saved flows as MCP prompts: a person picks one in the client, and the model runs it.

Each flow in the user's flows folder (tools/flows/store.py) is a prompt of its name whose arguments are
the flow's parameters; getting it gives the model one message: run the flow with browser_run_flow
and these values, and carry on from its account if it stops. Listed only where browser_run_flow is
served. A flow's description and the values given are data: quoted, each on one line.
"""

from __future__ import annotations

import json

import mcp_types as types
from mcp.shared.exceptions import MCPError

from webhand.errors import WebhandError
from webhand.tools.flows.format import Flow
from webhand.tools.flows.store import list_flows, load_flow
from webhand.response import page_line

#: The most flows listed as prompts.
MAX_LISTED = 100


def listed(served: bool) -> types.ListPromptsResult:
    if not served:
        return types.ListPromptsResult(prompts=[])
    try:
        flows = [flow for flow in list_flows() if isinstance(flow, Flow)][:MAX_LISTED]
    except WebhandError:  # the flows folder is not safe to read: no prompts rather than a broken list
        flows = []
    return types.ListPromptsResult(prompts=[types.Prompt(
        name=flow.name, title=f"Run the flow {flow.name}",
        description=page_line(flow.description, 300) or f"A saved flow of {len(flow.steps)} steps.",
        arguments=[types.PromptArgument(name=name, description=page_line(param.description, 300) or None,
                                        required=param.default is None) for name, param in flow.params.items()])
        for flow in flows])


def get(served: bool, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    if not served:
        raise MCPError(code=types.INVALID_PARAMS, message="Flows are not served here (the flows capability is off).")
    try:
        flow = load_flow(name)
    except WebhandError as error:
        raise MCPError(code=types.INVALID_PARAMS, message=f"{error.message} {error.hint}") from None
    call = json.dumps({"name": flow.name, "params": dict(arguments or {})}, ensure_ascii=False)
    text = (f"Run the saved flow {flow.name!r} with browser_run_flow {call}. If it stops, read what it expected and "
            "what the page shows, and carry on from there with the ordinary browser tools.")
    return types.GetPromptResult(description=f"Run the flow {flow.name}", messages=[
        types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])
