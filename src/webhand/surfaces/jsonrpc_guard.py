"""A JSON-RPC error reply for every malformed message posted to the HTTP MCP server.

The SDK (mcp 2.3) reads a request whose ``id`` is null, fractional (``1.5``, ``NaN``) or of the
wrong type (``true``, ``{}``, ``[]``) as a notification: it answers 202 with no body, and the
client waits for a reply that never comes. Other malformed messages (a batch, a wrong
``jsonrpc``, no ``method``, ``params`` that are not an object) get a pydantic validation dump,
Python reprs included. This guard checks the envelope first and answers those with a short
JSON-RPC error (HTTP 400); everything else, unparsable JSON included, goes to the SDK unchanged.
"""

from __future__ import annotations

from typing import Any

import pydantic_core
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def jsonrpc_error_response(request_id: Any, code: int, message: str, *, status_code: int = 400,
                           headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}},
                        status_code=status_code, headers=headers)


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def envelope_problem(message: Any) -> tuple[int, str] | None:
    """What is wrong with one parsed JSON-RPC message, as (error code, text); None if nothing."""
    if isinstance(message, list):
        return INVALID_REQUEST, ("JSON-RPC batches are not supported (MCP has no batching since protocol "
                                 "2025-06-18): send each message in its own request.")
    if not isinstance(message, dict):
        return INVALID_REQUEST, "The body must be one JSON-RPC message: a JSON object."
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'The message must have "jsonrpc": "2.0".'
    if "method" in message:
        if not isinstance(message["method"], str):
            return INVALID_REQUEST, 'The "method" must be a string.'
        if "id" in message and not _valid_id(message["id"]):
            return INVALID_REQUEST, ('The "id" of a request must be a string or an integer (not null, a fraction, '
                                     'a boolean, an array or an object); a notification has no "id" at all.')
        if message.get("params") is not None and not isinstance(message["params"], dict):
            return (INVALID_PARAMS if "id" in message else INVALID_REQUEST), 'The "params" must be a JSON object.'
        return None
    if "result" in message or "error" in message:
        if "result" in message and "error" in message:
            return INVALID_REQUEST, 'A response has either "result" or "error", not both.'
        if "result" in message and not (_valid_id(message.get("id")) and isinstance(message["result"], dict)):
            return INVALID_REQUEST, 'A response needs a string or integer "id" and an object "result".'
        error = message.get("error", {})
        if "error" in message and not (isinstance(error, dict) and isinstance(error.get("code"), int)
                                       and isinstance(error.get("message"), str)):
            return INVALID_REQUEST, 'An error response needs an "error" object with an integer "code" and a string "message".'
        return None
    return INVALID_REQUEST, ('The message has no "method" (needed by a request or a notification) and no '
                             '"result" or "error" (needed by a response).')


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
        request_id = parsed.get("id") if isinstance(parsed, dict) and _valid_id(parsed.get("id")) else None
        await jsonrpc_error_response(request_id, code, text)(scope, replay, send)
