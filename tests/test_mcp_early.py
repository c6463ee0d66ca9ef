"""`webhand mcp` over stdio serves the first `tools/list` and `tools/call` before the MCP SDK is
loaded (surfaces/mcp/startup/early.py), with the SDK's own answers, and hands every other line, and the
session, to the SDK (surfaces/mcp/startup/wire.py)."""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from collections.abc import Awaitable, Callable

import anyio
import mcp_types
import pytest
from mcp.shared.message import SessionMessage
from test_mcp_handshake import HELD_IMPORT, initialize, read_message, running_server, stop

from helpers import browsers_of_child_processes, wait_until_gone_async
from webhand import Settings, Webhand
from webhand.response import ImageBlock, ToolResult
from webhand.surfaces.exposure import ExposedTool, served_tools
from webhand.surfaces.mcp.startup.early import EarlyServer
from webhand.surfaces.mcp.server import build_server
from webhand.surfaces.mcp.tool_json import call_result
from webhand.surfaces.mcp.startup.wire import StdioWire

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def request(request_id: int, method: str, params: object = None) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **({} if params is None else {"params": params})}


def call(request_id: int, name: str, **arguments: object) -> dict:
    return request(request_id, "tools/call", {"name": name, "arguments": arguments})


async def send(server, *messages: dict) -> None:
    server.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
    await server.stdin.drain()


async def test_the_first_list_and_calls_are_answered_while_the_sdk_cannot_load(tmp_path, site):
    gate = tmp_path / "let-the-sdk-load"
    async with running_server(tmp_path, "-c", HELD_IMPORT, str(gate)) as server:
        await send(server, initialize(1), INITIALIZED, request(2, "tools/list"),
                   call(3, "browser_navigate", url=site.url("login.html")))
        answers = {}
        while len(answers) < 3:  # the SDK cannot load until the gate file exists
            answer = await read_message(server)
            answers[answer["id"]] = answer
        assert "browser_navigate" in {t["name"] for t in answers[2]["result"]["tools"]}
        assert not answers[3]["result"]["isError"] and "Sign in" in answers[3]["result"]["content"][0]["text"], answers[3]
        await send(server, call(4, "browser_snapshot"))  # still served early: the SDK is held
        answer = await read_message(server)
        assert answer["id"] == 4 and "Sign in" in answer["result"]["content"][0]["text"], answer
        await send(server, request(5, "ping"))  # only the SDK answers this: the session is handed over
        gate.touch()
        assert await read_message(server) == {"jsonrpc": "2.0", "id": 5, "result": {}}
        await send(server, call(6, "browser_snapshot"))  # now served by the SDK
        answer = await read_message(server)
        assert answer["id"] == 6 and "Sign in" in answer["result"]["content"][0]["text"], answer
        browsers = browsers_of_child_processes()
        await stop(server)
    assert browsers and await wait_until_gone_async(browsers) == []


async def test_a_client_that_pipelines_its_whole_start_gets_one_answer_per_request(tmp_path, site):
    messages = [initialize(1), INITIALIZED, request(2, "tools/list"), call(3, "browser_navigate", url=site.url("login.html")),
                request(4, "ping"), call(5, "browser_snapshot"), request(6, "tools/list")]
    async with running_server(tmp_path, "-m", "webhand", "mcp") as server:
        await send(server, *messages)  # one write: early answers, then the SDK's, on one pipe
        answers = [await read_message(server) for _ in range(6)]
        browsers = browsers_of_child_processes()
        await stop(server)
    assert await wait_until_gone_async(browsers) == []
    assert Counter(a["id"] for a in answers) == Counter(range(1, 7)), answers
    by_id = {a["id"]: a for a in answers}
    assert by_id[2]["result"] == by_id[6]["result"]  # the early list is the SDK's list
    assert not by_id[5]["result"]["isError"] and "Sign in" in by_id[5]["result"]["content"][0]["text"]


async def sdk_answers(style: str, *messages: dict, exposed: Callable[[], dict[str, ExposedTool]] | None = None) -> list[dict]:
    """What the SDK's own server (webhand's, as served) writes back, after an ``initialize``."""
    webhand = Webhand(Settings())
    server = build_server(webhand, lambda _ctx: webhand.conversation("sdk"), style=style, exposed=exposed)
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](8)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](8)
    replies = []
    async with anyio.create_task_group() as group:
        group.start_soon(server.run, server_reads, server_writes, server.create_initialization_options())
        for message in [initialize(0), INITIALIZED, *messages]:
            await to_server.send(SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(message)))
        with anyio.fail_after(30):
            for _ in range(1 + sum("id" in m for m in messages)):
                replies.append((await from_server.receive()).message.model_dump(by_alias=True, mode="json",
                                                                                  exclude_unset=True))
        await to_server.aclose()
    return replies[1:]


def a_tool(name: str, run: Callable[[object, dict], Awaitable[ToolResult]]) -> ExposedTool:
    return ExposedTool(name, "A tool.", {"type": "object"}, None, read_only=True, destructive=False, run=run)


class EarlyOnPipes:
    """An early server on pipes instead of fd 0 and 1, with an ``initialize`` already answered."""

    def __init__(self, style: str = "multi", tools: dict[str, ExposedTool] | None = None) -> None:
        """``tools``: served instead of webhand's own."""
        self._client_in, server_out = os.pipe()
        server_in, self._client_out = os.pipe()
        self.wire = StdioWire(style, stdin_fd=server_in, stdout_fd=server_out).start()
        webhand = Webhand(Settings())
        exposed = (lambda: tools) if tools is not None else served_tools(lambda: webhand.tools.values(), style)
        self.server = EarlyServer(self.wire, webhand.conversation("early"), exposed)
        self._reader = os.fdopen(self._client_in, "rb")
        self.write(initialize(0))
        assert self.wire.wait_opening(30) and json.loads(self._reader.readline())["id"] == 0

    def write(self, *messages: dict | bytes) -> None:
        os.write(self._client_out, b"".join(m if isinstance(m, bytes) else json.dumps(m).encode() + b"\n" for m in messages))

    async def read(self) -> dict:
        return json.loads(await asyncio.wait_for(asyncio.to_thread(self._reader.readline), 30))

    def close(self) -> None:
        os.close(self._client_out)  # the wire's reader sees the end and stops
        self._reader.close()


@pytest.mark.parametrize("style", ["multi", "single"])
@pytest.mark.parametrize("message", [request(2, "tools/list"), request(2, "tools/list", {"cursor": None}),
                                     call(2, "no_such_tool"), call(2, "browser_click", ref=17)],
                         ids=["list", "list with cursor", "unknown tool", "arguments a tool refuses"])
async def test_an_early_answer_is_exactly_the_sdks(style, message):
    early = EarlyOnPipes(style)
    try:
        serving = asyncio.ensure_future(early.server.serve(asyncio.Event()))
        early.write(INITIALIZED, message)
        answer = await early.read()
    finally:
        early.close()
    assert (await serving).ended
    assert [answer] == await sdk_answers(style, message)


@pytest.mark.parametrize("line", [
    request(2, "ping"),
    request(2, "resources/list"),
    request(2, "tools/call", {"arguments": {}}),                    # no name: the SDK refuses it in its words
    request(2, "tools/call", {"name": 7}),
    request(2, "tools/call", {"name": "browser_snapshot", "arguments": [1]}),
    request(2, "tools/call", {"name": "browser_snapshot", "task": {"ttl": 1000}}),   # a task-augmented call
    request(2, "tools/list", {"cursor": 3}),
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},  # not a call of ours
    {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
], ids=lambda line: json.dumps(line)[:60] if not isinstance(line, bytes) else repr(line))
async def test_a_line_only_the_sdk_can_answer_hands_the_session_over(line):
    early = EarlyOnPipes()
    try:
        early.write(INITIALIZED, line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n",
                    request(3, "tools/list"))
        handover = await asyncio.wait_for(early.server.serve(asyncio.Event()), 30)
    finally:
        early.close()
    raw = line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n"
    # The SDK reads the handshake again, then that line; the list after it is left on the wire for the SDK.
    assert [json.loads(handover.replay[0])["method"], json.loads(handover.replay[1])["method"]] == \
        ["initialize", "notifications/initialized"]
    assert handover.replay[2:] == [raw] and not handover.ended
    assert early.server.wants_sdk.is_set()


@pytest.mark.parametrize("line", [request(True, "tools/list"), [request(2, "tools/list")], b"not json\n", b"\n"],
                         ids=["a boolean id", "a batch", "not JSON", "an empty line"])
async def test_a_malformed_line_is_answered_by_the_wire_and_the_early_server_goes_on(line):
    early = EarlyOnPipes()
    try:
        serving = asyncio.ensure_future(early.server.serve(asyncio.Event()))
        early.write(INITIALIZED, line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n",
                    request(3, "tools/list"))
        answers = [await early.read() for _ in range(1 if line == b"\n" else 2)]  # an empty line is dropped
    finally:
        early.close()
    handover = await serving
    if line != b"\n":
        assert answers[0]["id"] is None and answers[0]["error"]["code"] in (-32700, -32600), answers
    assert answers[-1]["id"] == 3 and answers[-1]["result"]["tools"], answers  # served early: no handover
    assert handover.ended and len(handover.replay) == 2


async def test_the_early_server_stops_reading_once_the_sdk_is_loaded():
    early = EarlyOnPipes()
    loaded = asyncio.Event()
    try:
        serving = asyncio.ensure_future(early.server.serve(loaded))
        loaded.set()
        handover = await asyncio.wait_for(serving, 30)
        early.write(request(2, "tools/list"))
        assert await asyncio.wait_for(early.wire.next_line(), 30) == json.dumps(request(2, "tools/list")).encode() + b"\n"
    finally:
        early.close()
    assert [json.loads(line)["method"] for line in handover.replay] == ["initialize"] and not handover.ended


@pytest.mark.parametrize("result", [
    ToolResult("Opened x"),
    ToolResult("Opened x", data={"url": "x", "title": "", "status": None}),
    ToolResult("Error: no", data={"url": "x"}, is_error=True),
    ToolResult("A picture", images=[ImageBlock(b"\x89PNG", "image/png", "/tmp/a.png")]),
], ids=["text", "structured", "error", "image"])
async def test_a_call_result_is_what_the_sdk_writes_for_it(result):
    async def run(context: object, arguments: dict, caller: object = None) -> ToolResult:
        return result

    tool = a_tool("t", run)
    sdk = await sdk_answers("multi", call(2, "t"), exposed=lambda: {"t": tool})
    assert sdk == [{"jsonrpc": "2.0", "id": 2, "result": call_result(result)}]


async def test_a_tool_that_raises_gets_the_error_the_sdk_would_send():
    async def run(context: object, arguments: dict, caller: object = None) -> ToolResult:
        raise RuntimeError("a bug")

    tool = a_tool("t", run)
    early = EarlyOnPipes(tools={"t": tool})
    try:
        serving = asyncio.ensure_future(early.server.serve(asyncio.Event()))
        early.write(INITIALIZED, call(2, "t"))
        answer = await early.read()
    finally:
        early.close()
    await serving
    assert [answer] == await sdk_answers("multi", call(2, "t"), exposed=lambda: {"t": tool})


async def test_a_cancelled_early_call_ends_and_gets_no_answer():
    started, ended = asyncio.Event(), asyncio.Event()

    async def run(context: object, arguments: dict, caller: object = None) -> ToolResult:
        started.set()
        try:
            await asyncio.Event().wait()  # a call that would never finish by itself
        finally:
            ended.set()

    early = EarlyOnPipes(tools={"slow": a_tool("slow", run)})
    try:
        serving = asyncio.ensure_future(early.server.serve(asyncio.Event()))
        early.write(INITIALIZED, call(2, "slow"))
        await asyncio.wait_for(started.wait(), 30)
        early.write({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
                    request(3, "tools/list"))
        answer = await early.read()
        await asyncio.wait_for(ended.wait(), 30)
    finally:
        early.close()
    await serving
    assert answer["id"] == 3 and [t["name"] for t in answer["result"]["tools"]] == ["slow"]


@pytest.mark.parametrize("cut", [1, 7, 65536, 100_000], ids=lambda cut: f"writes of {cut} bytes")
async def test_the_wire_reads_the_same_lines_however_the_client_writes_fall(cut):
    lines = [b'{"jsonrpc":"2.0","method":"first"}\n', b'{"jsonrpc":"2.0","method":"long","params":{"x":"' + b"x" * 150_000
             + b'"}}\n', b'{"jsonrpc":"2.0","method":"a"}\n', b'{"jsonrpc":"2.0","method":"last without newline"}']
    server_in, client_out = os.pipe()
    server_out, client_in = os.pipe()
    wire = StdioWire("multi", stdin_fd=server_in, stdout_fd=server_out).start()

    def write() -> None:
        data = b"".join(lines)
        for at in range(0, len(data), cut):
            os.write(client_out, data[at:at + cut])
        os.close(client_out)

    writing = asyncio.ensure_future(asyncio.to_thread(write))
    read = []
    while (line := await asyncio.wait_for(wire.next_line(), 30)) is not None:
        read.append(line)
    await writing
    for fd in (server_in, server_out, client_in):  # the reader thread stopped at the end of stdin
        os.close(fd)
    assert [wire.opening, *read] == lines
