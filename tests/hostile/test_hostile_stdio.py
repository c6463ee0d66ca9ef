"""The stdio MCP server against a raw client that writes malformed JSON-RPC.

A table of hostile lines (deep nesting, ids of every wrong kind, a batch, bytes that are not
UTF-8, NUL, NaN, Infinity, truncated JSON, a 10 MB line, a request without ``jsonrpc``, a
malformed notification) is written twice: while the early server serves (the MCP SDK's import
is held, ``early``), and after the session was handed to the SDK. Each line must get the
spec's error reply (or none, for a notification), the process must keep running with the same
browser, and a normal tools/call must still work after the whole table.
"""

from __future__ import annotations

import asyncio
import json

from test_mcp_handshake import HELD_IMPORT, initialize, read_message, running_server, stop

from helpers import browsers_of_child_processes, wait_until_gone_async

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND = -32700, -32600, -32601
DROPPED = None  # a notification: the spec forbids an answer


def _call(request_id: object, arguments: object, name: str = "browser_snapshot") -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()


def _nested(depth: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"browser_snapshot","arguments":{"a":' + \
        b"[" * depth + b"]" * depth + b"}}}"


# (what it tries, the line without its newline, the error code expected or DROPPED, the id expected)
HOSTILE_LINES: list[tuple[str, bytes, int | None, object]] = [
    ("a 1000-deep argument", _nested(1000), PARSE_ERROR, None),
    ("a 100000-deep argument", _nested(100_000), PARSE_ERROR, None),
    ("id null", _call(None, {}), INVALID_REQUEST, None),
    ("a fractional id", _call(1.5, {}), INVALID_REQUEST, None),
    ("an id of 2**70", _call(2**70, {}), INVALID_REQUEST, None),
    ("an object as id", _call({"a": 1}, {}), INVALID_REQUEST, None),
    ("an array as id", _call([1], {}), INVALID_REQUEST, None),
    ("a boolean as id", _call(True, {}), INVALID_REQUEST, None),
    ("a batch", b"[" + _call(8, {}) + b"," + _call(9, {}) + b"]", INVALID_REQUEST, None),
    ("an empty batch", b"[]", INVALID_REQUEST, None),
    ("bytes that are not UTF-8", _call(10, {}).replace(b"{}", b'{"t":"\xff\xfe"}'),
     PARSE_ERROR, None),
    ("a NUL byte", _call(11, {}).replace(b'"id"', b'\x00"id"'), PARSE_ERROR, None),
    ("NaN as the id", b'{"jsonrpc":"2.0","id":NaN,"method":"tools/call"}', PARSE_ERROR, None),
    ("NaN in the arguments", _call(12, {}).replace(b"{}", b'{"n":NaN}'), PARSE_ERROR, None),
    ("Infinity in the arguments", _call(13, {}).replace(b"{}", b'{"n":-Infinity}'), PARSE_ERROR, None),
    ("truncated JSON", _call(14, {})[:-7], PARSE_ERROR, None),
    ("a 10 MB line", _call(15, {"text": "x" * 10_000_000}), INVALID_REQUEST, None),
    ("a request without jsonrpc", b'{"id":16,"method":"tools/list"}', INVALID_REQUEST, 16),
    ('"jsonrpc": "1.0"', b'{"jsonrpc":"1.0","id":17,"method":"tools/list"}', INVALID_REQUEST, 17),
    ("a number as method", b'{"jsonrpc":"2.0","id":18,"method":5}', INVALID_REQUEST, 18),
    ("a string, not an object", b'"tools/list"', INVALID_REQUEST, None),
    ("neither request nor response", b'{"jsonrpc":"2.0","id":19}', INVALID_REQUEST, 19),
    ("a notification with params as an array", b'{"jsonrpc":"2.0","method":"notifications/x","params":[1]}',
     DROPPED, None),
]


async def _send(server, line: bytes) -> None:
    server.stdin.write(line + b"\n")
    await server.stdin.drain()


async def _answer(server) -> dict:
    return await asyncio.wait_for(read_message(server), 30)


async def _write_the_table(server, phase: str) -> list[str]:
    """Each hostile line, then a marker line the guard answers; the answer read before the marker's
    is the hostile line's own (the guard answers in the order it reads)."""
    wrong = []
    for what, line, code, request_id in HOSTILE_LINES:
        await _send(server, line)
        await _send(server, b'{"jsonrpc":"2.0","id":"marker"}')  # answered by the guard: -32600 with its id
        answer = await _answer(server)
        if code is DROPPED:
            if answer.get("id") != "marker":
                wrong.append(f"{phase}: {what}: answered {answer}")
            continue
        if answer.get("id") != request_id or answer.get("error", {}).get("code") != code or \
                not answer["error"].get("message"):
            wrong.append(f"{phase}: {what}: answered {answer}")
            continue
        if (await _answer(server)).get("id") != "marker":
            wrong.append(f"{phase}: {what}: more than one answer")
    assert server.returncode is None, f"{phase}: the server exited"
    return wrong


async def test_malformed_json_rpc_on_stdio_is_answered_and_never_ends_the_server(tmp_path, site):
    gate = tmp_path / "let-the-sdk-load"
    async with running_server(tmp_path, "-c", HELD_IMPORT, str(gate)) as server:
        await _send(server, json.dumps(initialize(1)).encode())
        assert (await _answer(server))["id"] == 1
        await _send(server, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        wrong = await _write_the_table(server, "early server")  # the SDK cannot load meanwhile
        await _send(server, _call(20, {"url": site.url("login.html")}, "browser_navigate"))
        answer = await _answer(server)
        assert answer["id"] == 20 and not answer["result"]["isError"], answer
        browsers = browsers_of_child_processes()
        await _send(server, b'{"jsonrpc":"2.0","id":21,"method":"no/such/method"}')  # only the SDK answers it
        gate.touch()
        answer = await _answer(server)
        assert answer["id"] == 21 and answer["error"]["code"] == METHOD_NOT_FOUND, answer
        wrong += await _write_the_table(server, "MCP SDK")
        await _send(server, _call(22, {}))
        answer = await _answer(server)
        assert answer["id"] == 22 and "Sign in" in answer["result"]["content"][0]["text"], answer
        assert {b.pid for b in browsers_of_child_processes()} == {b.pid for b in browsers}, "the browser was replaced"
        await stop(server)
    print(f"{2 * len(HOSTILE_LINES)} hostile lines (2 phases); {len(wrong)} wrongly answered")
    assert wrong == []
    assert browsers and await wait_until_gone_async(browsers) == []
