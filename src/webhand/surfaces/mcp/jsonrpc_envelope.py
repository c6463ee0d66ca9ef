"""What is wrong with a JSON-RPC message, checked before the MCP SDK sees it (HTTP and stdio).

The SDK answers some malformed messages in no way at all: over stdio, a line it cannot parse
(not JSON, not UTF-8, NaN) is logged and dropped, a request whose ``id`` is null, fractional or
an object is read as a notification, and a deeply nested argument raised ``RecursionError`` in
the early server (which ended the process). The client then waits out its own timeout. So both
transports check each message here first and answer the spec's error themselves: -32700 (parse
error, id null) for what is not one JSON value, -32600 (invalid request) for a wrong envelope,
with the request's id when it has a usable one, else null. A notification (no id) is never
answered, as the spec says: it is dropped with a log line.

The nesting depth is counted on the bytes before any parser runs (``nests_deeper``), so no
parser can recurse on a hostile message. Standard library only: stdio loads this first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

#: Deepest nesting a message may have: an envelope takes 3 levels (message, params, arguments);
#: the SDK's own parser stops at 200, Python's json recursed until the interpreter's limit.
MAX_DEPTH = 64
#: Request ids a client can echo exactly: JavaScript clients lose integers past 2**53.
MAX_ID_INTEGER = 2**53 - 1
MAX_ID_CHARS = 1000
#: Longest stdio line (one message), as the HTTP server's default body cap: larger content
#: belongs in a file the tool reads, not in a message.
MAX_LINE_BYTES = 4 * 1024 * 1024

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_OPENERS = (ord("["), ord("{"))


def nests_deeper(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the arrays and objects of ``data`` nest deeper than ``limit`` (brackets inside
    strings do not count). Counted on the bytes, without recursion; on a malformed text (an
    unclosed string) it may count deeper than a parser would go, which refuses it all the same."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False  # the common case, at the speed of two byte counts
    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", data))
    depth = 0
    for bracket in brackets:  # stops at the first level too deep
        depth += 1 if bracket in _OPENERS else -1
        if depth > limit:
            return True
    return False


def valid_id(value: Any) -> bool:
    """A request id webhand answers with: a string or integer a client can match exactly."""
    if isinstance(value, str):
        return len(value) <= MAX_ID_CHARS
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_ID_INTEGER


def envelope_problem(message: Any) -> tuple[int, str] | None:
    """What is wrong with one parsed JSON-RPC message, as (error code, text); None if nothing."""
    if isinstance(message, list):
        return INVALID_REQUEST, ("JSON-RPC batches are not supported (MCP has no batching since protocol "
                                 "2025-06-18): send each message on its own.")
    if not isinstance(message, dict):
        return INVALID_REQUEST, "A message must be one JSON-RPC message: a JSON object."
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'The message must have "jsonrpc": "2.0".'
    if "method" in message:
        if not isinstance(message["method"], str):
            return INVALID_REQUEST, 'The "method" must be a string.'
        if "id" in message and not valid_id(message["id"]):
            return INVALID_REQUEST, (f'The "id" of a request must be a string (at most {MAX_ID_CHARS} characters) or an '
                                     f'integer (at most 2**53 - 1 in size), not null, a fraction, a boolean, an array '
                                     'or an object; a notification has no "id" at all.')
        if message.get("params") is not None and not isinstance(message["params"], dict):
            return (INVALID_PARAMS if "id" in message else INVALID_REQUEST), 'The "params" must be a JSON object.'
        return None
    if "result" in message or "error" in message:
        if "result" in message and "error" in message:
            return INVALID_REQUEST, 'A response has either "result" or "error", not both.'
        if "result" in message and not (valid_id(message.get("id")) and isinstance(message["result"], dict)):
            return INVALID_REQUEST, 'A response needs a string or integer "id" and an object "result".'
        error = message.get("error", {})
        if "error" in message and not (isinstance(error, dict) and isinstance(error.get("code"), int)
                                       and isinstance(error.get("message"), str)):
            return INVALID_REQUEST, 'An error response needs an "error" object with an integer "code" and a string "message".'
        return None
    return INVALID_REQUEST, ('The message has no "method" (needed by a request or a notification) and no '
                             '"result" or "error" (needed by a response).')


def error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


@dataclass(frozen=True)
class Refusal:
    """A message webhand answers itself (``reply``), or drops (``reply`` None), and why."""

    reply: dict[str, Any] | None
    reason: str


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def parse_error(why: str) -> Refusal:
    return Refusal(error_reply(None, PARSE_ERROR, f"Parse error: {why}. Send one JSON-RPC message per line, "
                                                  "as UTF-8 JSON."), why)


def check_line(line: bytes) -> Refusal | None:
    """None when the SDK may read this stdio line; else what to answer (or that it is dropped)."""
    if not line.strip():
        return Refusal(None, "an empty line")
    if nests_deeper(line):
        return parse_error(f"the message nests deeper than {MAX_DEPTH} levels of arrays and objects")
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        return parse_error("the line is not UTF-8")
    except (ValueError, RecursionError) as error:  # RecursionError: cannot happen below MAX_DEPTH; never ends the server
        return parse_error(f"the line is not one JSON value ({str(error)[:200]})")
    problem = envelope_problem(message)
    if problem is None:
        return None
    code, text = problem
    if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" not in message:
        return Refusal(None, f"a malformed notification {message['method'][:100]!r}: {text}")
    request_id = message.get("id") if isinstance(message, dict) and valid_id(message.get("id")) else None
    return Refusal(error_reply(request_id, code, text), text)


def oversized(size: int) -> Refusal:
    why = f"the line is {size:,} bytes, more than the {MAX_LINE_BYTES:,} one message may take"
    return Refusal(error_reply(None, INVALID_REQUEST, f"Invalid request: {why}. Pass large content in a file "
                                                      "(a path the tool reads) instead."), why)
