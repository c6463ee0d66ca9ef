"""An MCP client (the official SDK) talks to `webhand mcp` over stdio, as a host would."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client
from PIL import Image

from helpers import browsers_of_child_processes, wait_until_gone_async
from webhand.surfaces.cli.demo import run_agent_session, serve_demo_site


async def test_an_agent_session_over_stdio(tmp_path):
    browsers: list = []

    def watch(line: str) -> None:  # while the server runs, note the browsers it launched
        browsers.extend(p for p in browsers_of_child_processes() if p not in browsers)

    with serve_demo_site() as url:
        seen = await run_agent_session(url, tmp_path, say=watch)
    assert {"browser_navigate", "browser_snapshot", "browser_click", "browser_type",
            "browser_take_screenshot"} <= set(seen["tools"])
    assert "Title: Acme Support" in seen["browser_navigate"]
    assert seen["result"].startswith("Ticket #") and "Ada Lovelace" in seen["result"]
    shot = Path(seen["screenshot"])
    assert shot.is_relative_to(tmp_path) and Image.open(shot).size[0] == 1280
    # The server exited with its client, and took its browsers with it.
    assert browsers, "the server launched at least one browser"
    assert await wait_until_gone_async(browsers) == []


async def test_tools_carry_annotations_and_images_come_back_as_image_content(tmp_path, site):
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path)}
    server = StdioServerParameters(command=sys.executable, args=["-m", "webhand", "mcp"], env=env)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        tools = {t.name: t for t in (await mcp.list_tools()).tools}
        assert tools["browser_snapshot"].annotations.read_only_hint is True
        assert tools["browser_click"].annotations.destructive_hint is True
        assert "url" in tools["browser_navigate"].input_schema["required"]
        await mcp.call_tool("browser_navigate", {"url": site.url("login.html")})
        shot = await mcp.call_tool("browser_take_screenshot", {})
        # The saved file comes back as a link too, which this session can read (resources.py).
        assert [block.type for block in shot.content] == ["text", "image", "resource_link"]
        assert shot.content[1].mime_type == "image/png"
        bad = await mcp.call_tool("browser_click", {"ref": "e404"})
        assert bad.is_error and "browser_snapshot" in bad.content[0].text
        browsers = browsers_of_child_processes()
    assert browsers and await wait_until_gone_async(browsers) == []


async def test_sigterm_stops_the_server_and_its_browsers(tmp_path, site):
    import asyncio
    import json
    import signal

    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path)}
    server = await asyncio.create_subprocess_exec(sys.executable, "-m", "webhand", "mcp", env=env,
                                                  stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "browser_navigate", "arguments": {"url": site.url("login.html")}}},
    ]
    browsers = []
    try:
        for message in messages:
            server.stdin.write((json.dumps(message) + "\n").encode())
        await server.stdin.drain()
        replies = 0
        while replies < 2:  # the initialize result, then the navigate result
            line = await asyncio.wait_for(server.stdout.readline(), 30)
            replies += '"id"' in line.decode()
        browsers = browsers_of_child_processes()
        assert browsers
        server.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(server.wait(), 30) is not None
    finally:
        if server.returncode is None:  # the server we started did not stop: end it (by pid), then fail
            server.kill()
            await server.wait()
    assert await wait_until_gone_async(browsers) == []


def _browsers_launched_by(pid: int) -> list[int]:
    """Browser pids that the process ``pid`` registered (one entry per browser it launched)."""
    from webhand.engine.launch.chrome import _registry_dir

    pids = []
    for file in _registry_dir().glob("*.json"):
        try:
            entry = json.loads(file.read_text())
        except (OSError, ValueError):
            continue
        if entry.get("owner_pid") == pid:
            pids.append(entry["pid"])
    return pids


async def test_a_stdio_server_launches_its_one_browser_at_start_and_keeps_no_reserve(tmp_path, site):
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path)}
    server = await asyncio.create_subprocess_exec(sys.executable, "-m", "webhand", "mcp", env=env,
                                                  stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)

    async def ask(message: dict) -> dict:
        server.stdin.write((json.dumps(message) + "\n").encode())
        await server.stdin.drain()
        while True:
            reply = json.loads(await asyncio.wait_for(server.stdout.readline(), 60))
            if reply.get("id") == message["id"]:
                return reply

    async def browsers_within(seconds: float, more_than: int) -> list[int]:
        deadline = time.monotonic() + seconds
        while len(launched := _browsers_launched_by(server.pid)) <= more_than and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        return launched

    browsers = []
    try:
        await ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        # Before any tool call, the conversation's browser is starting.
        assert len(await browsers_within(60, more_than=0)) == 1
        for number, (name, arguments) in enumerate([("browser_navigate", {"url": site.url("login.html")}),
                                                     ("browser_snapshot", {})], start=2):
            reply = await ask({"jsonrpc": "2.0", "id": number, "method": "tools/call",
                               "params": {"name": name, "arguments": arguments}})
            assert not reply["result"]["isError"], reply
        # After the first call, a server with a warm reserve would launch a second browser now.
        assert len(await browsers_within(5, more_than=1)) == 1
        browsers = browsers_of_child_processes()
        server.stdin.close()
        assert await asyncio.wait_for(server.wait(), 30) == 0
    finally:
        if server.returncode is None:  # the server we started did not stop: end it (by pid), then fail
            server.kill()
            await server.wait()
    assert await wait_until_gone_async(browsers) == []


def test_a_stdio_server_answers_initialize_without_loading_the_catalog_or_http(tmp_path):
    # Run the real entry point in a child whose stdin holds only `initialize`; when stdin closes,
    # the server stops and the child reports what it had imported.
    probe = ("import sys; from webhand.surfaces.cli.main import main; main(['mcp']); "
             "print('loaded:', sorted(m for m in ('webhand.tools', 'uvicorn', 'webhand.surfaces.mcp.streamable_http') "
             "if m in sys.modules), file=sys.stderr)")
    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", probe], input=initialize + "\n", env=env, capture_output=True,
                          text=True, timeout=120)
    assert '"serverInfo"' in done.stdout, done.stderr
    assert "loaded: [" in done.stderr and "webhand.tools" not in done.stderr.split("loaded:")[-1]
