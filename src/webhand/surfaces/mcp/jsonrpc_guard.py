"""A JSON-RPC error reply for every malformed message posted to the HTTP MCP server.

The SDK (mcp 2.3) reads a request whose ``id`` is null, fractional (``1.5``, ``NaN``) or of the
wrong type (``true``, ``{}``, ``[]``) as a notification: it answers 202 with no body, and the
client waits for a reply that never comes. Other malformed messages (a batch, a wrong
``jsonrpc``, no ``method``, ``params`` that are not an object) get a pydantic validation dump,
Python reprs included. This guard checks the envelope first and answers those with a short
JSON-RPC error (HTTP 400); everything else, unparsable JSON included, goes to the SDK unchanged.
The checks themselves are shared with the stdio server (``jsonrpc_envelope``).
"""

from __future__ import annotations

from typing import Any

import pydantic_core
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webhand.surfaces.mcp.jsonrpc_envelope import envelope_problem, error_reply, valid_id


def jsonrpc_error_response(request_id: Any, code: int, message: str, *, status_code: int = 400,
                           headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_reply(request_id, code, message), status_code=status_code, headers=headers)


async def read_body(receive: Receive) -> list[Message]:
    """A request's body messages, to replay to the app (the body is already capped in size upstream)."""
    messages: list[Message] = []
    while True:
        messages.append(await receive())
        if messages[-1]["type"] != "http.request" or not messages[-1].get("more_body", False):
            return messages


class JsonRpcGuard:
    """ASGI wrapper that answers malformed JSON-RPC posts itself (see the module docstring)."""

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings) -> None:
        self.app = app
        # Host, Origin and Content-Type are checked first, as the SDK would, so that a refused
        # request gets the SDK's refusal and not a JSON-RPC error.
        self.security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages = await read_body(receive)
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        problem = None
        if await self.security.validate_request(Request(scope), is_post=True) is None:
            try:
                parsed = pydantic_core.from_json(body)
            except ValueError:
                parsed = None  # the SDK answers unparsable JSON with a parse error (-32700)
            else:
                problem = envelope_problem(parsed)
        if problem is None:
            await self.app(scope, replay, send)
            return
        code, text = problem
        request_id = parsed.get("id") if isinstance(parsed, dict) and valid_id(parsed.get("id")) else None
        await jsonrpc_error_response(request_id, code, text)(scope, replay, send)
