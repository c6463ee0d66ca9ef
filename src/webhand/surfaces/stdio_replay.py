"""Hand the stdio client's first line, read before the SDK loaded (``handshake``), to the SDK.

The SDK's stdio transport reads fd 0 from where the early reader stopped, so the first line is
put in front of what it reads. When webhand already answered that line (an ``initialize``), the
SDK's own answer is dropped: the client must get exactly one. The two must agree, since the SDK
keeps the session state; a difference is logged, and tests/test_mcp_handshake.py keeps them equal.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from webhand.surfaces.handshake import EarlyHandshake

log = logging.getLogger("webhand.mcp")


@asynccontextmanager
async def replay_opening(handshake: EarlyHandshake | None, read_stream: Any, write_stream: Any) -> AsyncIterator[tuple[Any, Any]]:
    """The streams to serve the SDK's server on: the first line replayed ahead of ``read_stream``,
    and the SDK's answer to an already answered ``initialize`` held back from ``write_stream``."""
    if handshake is None or not handshake.line:
        yield read_stream, write_stream
        return
    inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
    answered = handshake.answered

    async def feed() -> None:
        async with inbound_send:
            try:
                await inbound_send.send(_parse(handshake.line))
                async for item in read_stream:
                    await inbound_send.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass  # the server stopped reading: it is shutting down

    async def drain() -> None:
        nonlocal answered
        async with write_stream, outbound_receive:
            async for item in outbound_receive:
                if answered is not None and _answers(item, answered[0]):
                    _check_same(item, answered[1])
                    answered = None
                    continue
                await write_stream.send(item)

    async with anyio.create_task_group() as group:
        group.start_soon(feed)
        group.start_soon(drain)
        yield inbound, outbound
        group.cancel_scope.cancel()


def _parse(line: bytes) -> SessionMessage | Exception:
    """As the SDK's stdio reader does: a message, or the error the server answers for it."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line.decode("utf-8", "replace"), by_name=False))
    except Exception as error:  # the SDK's reader passes any parse error on the same way
        return error


def _answers(item: SessionMessage, request_id: int | str) -> bool:
    message = item.message
    return isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id == request_id


def _check_same(item: SessionMessage, sent: dict[str, Any]) -> None:
    message = item.message
    own = message.model_dump(by_alias=True, mode="json", exclude_unset=True).get("result")
    if own != sent:
        log.warning("webhand answered initialize early with %s, but the MCP SDK would have answered %s; "
                    "update webhand/surfaces/handshake.py to match the installed SDK", sent, own or message)
