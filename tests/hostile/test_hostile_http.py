"""The HTTP MCP server against hostile or careless clients: clients that vanish, malformed
JSON-RPC, and huge arguments.

Each test starts `webhand mcp --port 0` as a subprocess (``mcp_server`` from test_mcp_http),
which checks at the end that every browser it launched is gone.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import time

import httpx2
import psutil
import pytest
from mcp.shared.exceptions import MCPError

from test_mcp_http import call, mcp_client, mcp_server

PROTOCOL = "2025-11-25"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

# A real MCP client (the official SDK) in its own process, so that it can be SIGKILLed: it opens
# a session, loads a page (so the session has a browser), says "ready" and waits forever.
VANISHING_CLIENT = """
import sys
import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

async def main(url, page):
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("browser_navigate", {"url": page})
        assert not result.is_error, result.content[0].text
        print("ready", flush=True)
        await anyio.sleep_forever()

anyio.run(main, sys.argv[1], sys.argv[2])
"""


def _start_clients(tmp_path, url: str, page: str, count: int) -> list[subprocess.Popen[bytes]]:
    script = tmp_path / "vanishing_client.py"
    script.write_text(VANISHING_CLIENT)
    clients = [subprocess.Popen([sys.executable, str(script), url, page], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL) for _ in range(count)]
    deadline = time.monotonic() + 120
    for client in clients:
        assert client.stdout is not None
        ready, _, _ = select.select([client.stdout], [], [], max(0.0, deadline - time.monotonic()))
        assert ready and client.stdout.readline().strip() == b"ready", "a client did not get its session and page"
    return clients


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def _open_session_when_admitted(url: str, page: str, deadline: float) -> None:
    """Connect a new SDK client, retrying while the server says it is full; load a page in it."""
    while True:
        try:
            async with mcp_client(url) as fresh:
                await call(fresh, "browser_navigate", {"url": page})
                return
        except Exception as error:  # the SDK client wraps the refusal in exception groups
            # Refused until a killed client's session has been without a stream for abandoned_after.
            if not _is_refusal(error) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


def _is_refusal(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return all(_is_refusal(inner) for inner in error.exceptions)
    return isinstance(error, MCPError) and "Too many open sessions" in str(error)


async def test_killed_clients_sessions_are_closed_to_admit_a_new_client(tmp_path, site):
    # Short, to keep the test short; WEBHAND_TEST_ABANDONED_AFTER=60 measures the default.
    abandoned_after = float(os.environ.get("WEBHAND_TEST_ABANDONED_AFTER", "0.5"))
    env = {"WEBHAND_MAX_SESSIONS": "3", "WEBHAND_ABANDONED_AFTER": str(abandoned_after)}
    with mcp_server(tmp_path, env=env) as server:
        clients = _start_clients(tmp_path, server.url, site.url("login.html"), 3)
        abandoned_browsers = server.browsers()
        assert len(abandoned_browsers) == 3, "one browser per client session"
        for client in clients:  # no DELETE, no stream close: the process is just gone
            os.kill(client.pid, signal.SIGKILL)
        for client in clients:
            client.wait(timeout=10)
            client.stdout.close()  # type: ignore[union-attr]
        killed_at = time.monotonic()

        await _open_session_when_admitted(server.url, site.url("login.html"), time.monotonic() + abandoned_after + 60)
        admitted_after = time.monotonic() - killed_at

        left = [p for p in abandoned_browsers if _alive(p)]
        assert len(left) == 2, "exactly one abandoned session (and its browser) was closed to make room"
        assert "Closed MCP session" in server.log() and "to admit a new client" in server.log()
        print(f"\nnew client admitted {admitted_after:.1f} s after its 3 predecessors were SIGKILLed "
              f"(abandoned_after={abandoned_after:g} s); {len(abandoned_browsers) - len(left)} of their browsers "
              "closed for it, the others close with the server")


async def _initialize(http: httpx2.AsyncClient, url: str) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    return await http.post(url, json=body, headers=HEADERS)


async def test_a_session_that_holds_its_stream_open_is_never_closed_for_a_newcomer(tmp_path):
    env = {"WEBHAND_MAX_SESSIONS": "1", "WEBHAND_ABANDONED_AFTER": "0.2", "WEBHAND_QUEUE_TIMEOUT": "0.3"}
    with mcp_server(tmp_path, env=env) as server:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await _initialize(http, server.url)
            session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
            await http.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            async with http.stream("GET", server.url, headers={**session, "Accept": "text/event-stream"}) as stream:
                assert stream.status_code == 200
                await asyncio.sleep(0.5)  # longer than abandoned_after, with the stream open all along
                refused = await _initialize(http, server.url)
                assert refused.status_code == 503
                error = refused.json()["error"]
                assert "Too many open sessions" in error["message"] and "none has been idle for 0.2 s" in error["message"]
                assert refused.headers["retry-after"] == "1"
                still = await http.post(server.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                                        headers=session)
                assert still.status_code == 200 and "browser_navigate" in still.text
            await http.delete(server.url, headers=session)


# Each malformed message, and the JSON-RPC error code its reply must carry. The first three
# kinds were answered 202 with no body before (the SDK took them for notifications).
MALFORMED = {
    "id null": ({"jsonrpc": "2.0", "id": None, "method": "tools/list"}, -32600),
    "id fractional": ({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}, -32600),
    "id object": ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}, -32600),
    "id boolean": ({"jsonrpc": "2.0", "id": True, "method": "tools/list"}, -32600),
    "batch": ([{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}], -32600),
    "no method": ({"jsonrpc": "2.0", "id": 3}, -32600),
    "wrong jsonrpc": ({"jsonrpc": "1.0", "id": 4, "method": "tools/list"}, -32600),
    "params not an object": ({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": [1]}, -32602),
    "notification with bad params": ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}, -32600),
    "not an object": ("hello", -32600),
    "invalid JSON": (b'{"jsonrpc": "2.0", "id": 6, "method": ', -32700),
}


async def test_every_malformed_jsonrpc_message_gets_a_jsonrpc_error_reply(tmp_path):
    with mcp_server(tmp_path) as server:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await _initialize(http, server.url)
            session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
            for name, (message, code) in MALFORMED.items():
                body = message if isinstance(message, bytes) else json.dumps(message).encode()
                reply = await http.post(server.url, content=body, headers=session)
                assert reply.status_code == 400, f"{name}: {reply.status_code} {reply.text!r}"
                answer = reply.json()
                assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == code, f"{name}: {answer}"
                assert "input_value" not in reply.text and "{'" not in reply.text, f"{name}: a Python repr: {answer}"
            await http.delete(server.url, headers=session)


async def test_an_error_over_http_quotes_at_most_200_characters_of_a_1_mb_argument(tmp_path):
    huge = "x" * 1_000_000
    with mcp_server(tmp_path) as server:
        async with mcp_client(server.url) as session:
            for name, arguments in (("browser_snapshot", {"session": huge}), ("browser_snapshot", {huge: 1}),
                                    (huge, {})):
                result = await session.call_tool(name, arguments)
                text = result.content[0].text
                assert result.is_error and len(text) < 1000, f"{len(text):,} characters"
                assert "x" * 200 + "…(" in text and "more characters)" in text, text


@pytest.mark.one_driver("how each surface quotes a huge argument, above the Driver")
async def test_an_error_quotes_at_most_200_characters_of_a_1_mb_argument_on_every_surface(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    huge = "#" + "x" * 1_000_000
    for name, arguments in (("browser_click", {"selector": huge}), ("browser_wait_for", {"selector": huge, "timeout": 1}),
                            ("browser_navigate", {"url": "http://127.0.0.1:1/" + huge})):
        result = await tools.call(name, arguments)
        assert result.is_error and len(result.text) < 1000, f"{name}: {len(result.text):,} characters"
        assert "more characters)" in result.text, f"{name}: {result.text}"
        assert len(result.data["message"]) < 1000


async def test_a_new_client_is_admitted_once_killed_clients_connections_close(tmp_path, site):
    """The default abandoned_after (60 s) and no retry: the new client waits (queue_timeout) and is
    admitted as soon as a killed client's stream is seen cut, not refused until a minute has passed."""
    env = {"WEBHAND_MAX_SESSIONS": "3", "WEBHAND_QUEUE_TIMEOUT": "60"}
    with mcp_server(tmp_path, env=env) as server:
        clients = _start_clients(tmp_path, server.url, site.url("login.html"), 3)
        abandoned_browsers = server.browsers()
        for client in clients:  # their kernel closes their connections: no DELETE
            os.kill(client.pid, signal.SIGKILL)
        for client in clients:
            client.wait(timeout=10)
            client.stdout.close()  # type: ignore[union-attr]
        killed_at = time.monotonic()
        async with mcp_client(server.url) as fresh:  # one attempt: a refusal fails the test
            await call(fresh, "browser_navigate", {"url": site.url("login.html")})
        admitted_after = time.monotonic() - killed_at
        left = [p for p in abandoned_browsers if _alive(p)]
        assert len(left) == 2, "one killed client's session (and its browser) was closed to make room"
        print(f"\n3 clients SIGKILLed, max_sessions=3, abandoned_after=60 s: a new client was admitted on its "
              f"first attempt, {admitted_after:.1f} s later (refused at once before)")


async def test_a_new_client_waits_for_a_place_and_gets_it_when_a_session_ends(tmp_path):
    env = {"WEBHAND_MAX_SESSIONS": "1", "WEBHAND_QUEUE_TIMEOUT": "60"}
    with mcp_server(tmp_path, env=env) as server:
        async with httpx2.AsyncClient(timeout=90) as http:
            opened = await _initialize(http, server.url)
            session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
            newcomer = asyncio.ensure_future(_initialize(http, server.url))
            deadline = time.monotonic() + 60
            while "waits for a place" not in server.log():  # the server says it is holding the newcomer
                assert time.monotonic() < deadline and not newcomer.done(), (server.log(), newcomer)
                await asyncio.sleep(0.1)
            assert not newcomer.done()
            await http.delete(server.url, headers=session)  # the first client leaves
            admitted = await newcomer
            assert admitted.status_code == 200 and admitted.headers.get("mcp-session-id"), admitted.text
            print("\nmax_sessions=1: a second client waited, and got the place when the first ended its session")
