"""`webhand mcp` over stdio answers `initialize` before the MCP SDK loads (surfaces/mcp/startup/handshake.py),
and the SDK, which still owns the session, never answers it a second time (surfaces/stdio_replay.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from contextlib import asynccontextmanager

import anyio
import mcp_types
import pytest
from mcp.shared.message import SessionMessage
from mcp_types import version as sdk_versions

from helpers import browsers_of_child_processes, wait_until_gone_async
from webhand import Settings, Webhand
from webhand.surfaces.mcp.startup.handshake import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, early_answer
from webhand.surfaces.mcp.server import build_server

CLIENT = {"capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}


def initialize(request_id: int | str = 0, version: str = "2025-06-18", **params: object) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": version, **CLIENT, **params}}


def test_the_protocol_versions_are_the_sdks():
    assert HANDSHAKE_PROTOCOL_VERSIONS == sdk_versions.HANDSHAKE_PROTOCOL_VERSIONS
    assert LATEST_HANDSHAKE_VERSION == sdk_versions.LATEST_HANDSHAKE_VERSION


async def sdk_answer(style: str, message: dict) -> dict:
    """What the SDK's own server (webhand's, as served) writes back for one message."""
    server = build_server(Webhand(Settings()), lambda _ctx: None, style=style)
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](1)
    async with anyio.create_task_group() as group:
        group.start_soon(server.run, server_reads, server_writes, server.create_initialization_options())
        await to_server.send(SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(message)))
        with anyio.fail_after(30):
            reply = await from_server.receive()
        await to_server.aclose()
    return reply.message.model_dump(by_alias=True, mode="json", exclude_unset=True)


@pytest.mark.parametrize("style", ["multi", "single"])
@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "2031-01-01", "draft"])
async def test_the_early_answer_is_exactly_the_sdks(style, version):
    message = initialize(7, version)
    request_id, result = early_answer(json.dumps(message).encode(), style)
    assert {"jsonrpc": "2.0", "id": request_id, "result": result} == await sdk_answer(style, message)


@pytest.mark.parametrize("line", [
    b"",                                                                        # stdin closed at once
    b"not json\n",
    b"[1, 2]\n",
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode(),   # not the handshake
    json.dumps({"jsonrpc": "2.0", "method": "initialize", "params": initialize()["params"]}).encode(),  # no id
    json.dumps(initialize(True)).encode(),                                      # a bool is no JSON-RPC id
    json.dumps(initialize(None)).encode(),
    json.dumps({**initialize(), "jsonrpc": "1.0"}).encode(),
    json.dumps({**initialize(), "params": None}).encode(),
    json.dumps(initialize(version=2025)).encode(),
    json.dumps(initialize(clientInfo={"name": "test"})).encode(),              # the SDK refuses these: so do we
    json.dumps(initialize(capabilities=[])).encode(),
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}).encode(),
])
def test_only_a_well_formed_initialize_is_answered_early(line):
    assert early_answer(line, "multi") is None


# A child that runs the real entry point with the MCP SDK's import held until the test lets it go:
# whatever the client gets meanwhile was answered without the SDK. The hold is in the loader, not
# the finder: Python holds its global import lock while finders run, which would stall every other
# import of the process, as no real import does.
def held_import_script(modules: tuple[str, ...], main_args: str) -> str:
    """A child script that runs ``main(MAIN_ARGS)`` with the execution of ``modules`` held until
    the file ``sys.argv[1]`` exists."""
    return f"""
import importlib.abc, importlib.util, os, sys, time
gate = sys.argv[1]
class Gate(importlib.abc.Loader):
    def __init__(self, real):
        self.real = real
    def create_module(self, spec):
        return self.real.create_module(spec)
    def exec_module(self, module):
        while not os.path.exists(gate):
            time.sleep(0.01)
        self.real.exec_module(module)
class Hold(importlib.abc.MetaPathFinder):
    finding = False
    def find_spec(self, name, path=None, target=None):
        if name not in {modules!r} or self.finding:
            return None
        self.finding = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.finding = False
        spec.loader = Gate(spec.loader)
        return spec
sys.meta_path.insert(0, Hold())
from webhand.surfaces.cli.main import main
main({main_args})
"""


HELD_IMPORT = held_import_script(("mcp", "mcp_types"), '["mcp"]')


@asynccontextmanager
async def running_server(tmp_path, *args: str):
    """A ``python ARGS`` server with piped stdio; whatever it still runs at the end is ended, by pid."""
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path)}
    server = await asyncio.create_subprocess_exec(sys.executable, *args, env=env, stdin=asyncio.subprocess.PIPE,
                                                  stdout=asyncio.subprocess.PIPE)
    try:
        yield server
    finally:
        if server.returncode is None:  # the test failed before the server stopped: end it
            server.kill()
            await server.wait()


async def read_message(server) -> dict:
    line = await asyncio.wait_for(server.stdout.readline(), 60)
    assert line, "the server closed stdout"
    return json.loads(line)


async def stop(server) -> None:
    """Close its stdin, as a client that leaves does: the server must exit cleanly."""
    server.stdin.close()
    assert await asyncio.wait_for(server.wait(), 30) == 0


async def test_initialize_is_answered_while_the_mcp_sdk_is_still_loading(tmp_path, site):
    gate = tmp_path / "let-the-sdk-load"
    async with running_server(tmp_path, "-c", HELD_IMPORT, str(gate)) as server:
        server.stdin.write((json.dumps(initialize(1)) + "\n").encode())
        reply = await read_message(server)  # the SDK cannot load until the gate file exists
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "webhand"
        gate.touch()
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "browser_navigate", "arguments": {"url": site.url("login.html")}}}) + "\n").encode())
        reply = await read_message(server)  # the SDK's own answer to `initialize` was held back
        assert reply["id"] == 2 and not reply["result"]["isError"], reply
        browsers = browsers_of_child_processes()
        await stop(server)
    assert browsers and await wait_until_gone_async(browsers) == []


@pytest.mark.parametrize("opening", ["initialize", "another request"])
async def test_a_client_that_sends_everything_at_once_gets_one_answer_per_request(tmp_path, opening):
    messages = [initialize(1), {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    if opening != "initialize":  # a request before the handshake: the SDK answers it, then the handshake
        messages.insert(0, {"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
    async with running_server(tmp_path, "-m", "webhand", "mcp") as server:
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())  # one write, pipelined
        answers = []
        while not answers or answers[-1].get("id") != 2:
            answers.append(await read_message(server))
        browsers = browsers_of_child_processes()
        await stop(server)
    assert await wait_until_gone_async(browsers) == []
    counts = Counter(a.get("id") for a in answers)
    assert counts == Counter({m["id"]: 1 for m in messages if "id" in m}), answers
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["result"]["protocolVersion"] == "2025-06-18"
    assert by_id[2]["result"]["tools"], by_id[2]
    if opening != "initialize":
        assert "error" in by_id[0], by_id[0]  # not initialized yet: as the SDK always answered it
