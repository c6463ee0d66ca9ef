"""`webhand mcp --port`: MCP over streamable HTTP with the official SDK client.

Each test starts the server as a subprocess on 127.0.0.1 (a free port, announced on stderr),
stops it, and checks that the browsers it launched are gone.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx2
import psutil
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from helpers import wait_until_gone_async
from webhand.engine.launch.chrome import _registry_dir

READY_TIMEOUT = 60.0


class Server:
    def __init__(self, process: subprocess.Popen[bytes], url: str, log_lines: list[str]) -> None:
        self.process = process
        self.url = url
        self.log_lines = log_lines
        # Keep reading its stderr: the test can check the log, and a full pipe would block the server.
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    def _read_log(self) -> None:
        assert self.process.stderr is not None
        for line in iter(self.process.stderr.readline, b""):
            self.log_lines.append(line.decode(errors="replace"))

    def log(self) -> str:
        return "".join(self.log_lines)

    def browsers(self) -> list[psutil.Process]:
        """Browser process groups this server launched (from the PID registry)."""
        found = []
        for file in _registry_dir().glob("*.json"):
            try:
                entry = json.loads(file.read_text())
                if entry.get("owner_pid") == self.process.pid:
                    found.append(psutil.Process(entry["pid"]))
            except (OSError, ValueError, psutil.NoSuchProcess):
                continue
        return found


@contextmanager
def mcp_server(tmp_path, *args: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    """Run `webhand mcp --port 0` and wait for its "listening on" line (capped); stop it after."""
    full_env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path), "WEBHAND_WARM_RESERVE": "false", **(env or {})}
    process = subprocess.Popen([sys.executable, "-m", "webhand", "mcp", "--port", "0", *args],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=full_env)
    assert process.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + READY_TIMEOUT
    url = None
    while url is None and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], deadline - time.monotonic())
        line = process.stderr.readline().decode() if ready else ""
        if not line:
            break
        seen.append(line)
        if "listening on " in line:
            url = line.rsplit("listening on ", 1)[1].strip()
    if url is None:
        process.kill()
        process.wait()
        pytest.fail("webhand mcp did not announce it was listening: " + "".join(seen))
    server = Server(process, url, seen)
    try:
        yield server
    finally:
        browsers = server.browsers()
        process.terminate()
        assert process.wait(timeout=30) == 0, "the server exits cleanly on SIGTERM"
        server._reader.join(timeout=10)
        process.stderr.close()
        left = psutil.wait_procs(browsers, timeout=10)[1]
        assert not left, f"browsers left behind by the MCP server: {[p.pid for p in left]}"


@asynccontextmanager
async def mcp_client(url: str, token: str | None = None, *, terminate_on_close: bool = True):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http, \
            streamable_http_client(url, http_client=http, terminate_on_close=terminate_on_close) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    return result


async def test_two_clients_get_separate_browsers_and_a_closed_session_closes_its_browser(tmp_path, site):
    with mcp_server(tmp_path) as server:
        async with mcp_client(server.url) as alice:
            await call(alice, "browser_navigate", {"url": site.url("set-cookie?who=alice")})
            await call(alice, "browser_eval", {"expression": "localStorage.setItem('owner', 'alice')"})
            alices_browsers = server.browsers()
            async with mcp_client(server.url) as bob:
                await call(bob, "browser_navigate", {"url": site.url("login.html")})
                seen = await call(bob, "browser_eval", {"expression": "[document.cookie, localStorage.getItem('owner')]"})
                assert seen.structured_content == {"result": ["", None]}, "bob sees nothing of alice's state"
                assert len(server.browsers()) == 2, "one browser per MCP session"
            # bob's client closed its session (DELETE): his browser goes, alice's stays.
            assert await wait_until_gone_async([p for p in server.browsers() if p not in alices_browsers]) == []
            mine = await call(alice, "browser_eval", {"expression": "[document.cookie, localStorage.getItem('owner')]"})
            assert mine.structured_content == {"result": ["who=alice", "alice"]}
        assert await wait_until_gone_async(alices_browsers) == []


async def test_a_session_whose_client_went_away_is_closed_after_the_idle_timeout(tmp_path, site):
    with mcp_server(tmp_path, env={"WEBHAND_IDLE_TIMEOUT": "2"}) as server:
        async with mcp_client(server.url, terminate_on_close=False) as gone:
            await call(gone, "browser_navigate", {"url": site.url("login.html")})
            browsers = server.browsers()
        assert browsers
        # No DELETE was sent; the session's idle timeout (2 s) must end it and its browser. The
        # session manager's own reaper checks only every 60 s, so it cannot be what closed it.
        assert await wait_until_gone_async(browsers, timeout=30) == []


async def test_tools_have_annotations_images_and_structured_content(tmp_path, site):
    with mcp_server(tmp_path, "--caps", "all") as server:
        async with mcp_client(server.url) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert tools["browser_snapshot"].annotations.read_only_hint is True
            assert tools["browser_click"].annotations.destructive_hint is True
            for tool in tools.values():
                for name, field in tool.input_schema.get("properties", {}).items():
                    assert field.get("description"), f"{tool.name}.{name} has no description"
            assert set(tools["browser_navigate"].output_schema["properties"]) == {"url", "title", "status"}
            opened = await call(session, "browser_navigate", {"url": site.url("login.html")})
            assert opened.structured_content == {"url": site.url("login.html"), "title": "Sign in", "status": 200}
            # The SDK client checks structured content against the output schema: null must pass.
            data_page = await call(session, "browser_navigate", {"url": "data:text/html,<title>d</title>x"})
            assert data_page.structured_content["status"] is None
            await call(session, "browser_navigate", {"url": site.url("login.html")})
            shot = await call(session, "browser_take_screenshot", {})
            assert [block.type for block in shot.content] == ["text", "image", "resource_link"]
            read = await session.read_resource(shot.content[2].uri)  # the same MCP session reads it back
            assert read.contents[0].mime_type == "image/png" and read.contents[0].blob
            bad = await session.call_tool("browser_click", {"ref": "e404"})
            assert bad.is_error and bad.structured_content is None


async def test_a_token_is_required_when_set_and_off_loopback(tmp_path):
    refused = subprocess.run([sys.executable, "-m", "webhand", "mcp", "--port", "0", "--host", "0.0.0.0"],
                             env={**os.environ, "WEBHAND_TOKEN": ""}, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "without a token" in refused.stderr and "WEBHAND_TOKEN" in refused.stderr

    token = secrets.token_urlsafe(24)
    with mcp_server(tmp_path, env={"WEBHAND_TOKEN": token}) as server:
        async with httpx2.AsyncClient() as http:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
                answer = await http.post(server.url, json={}, headers=headers)
                assert answer.status_code == 401, headers
        async with mcp_client(server.url, token) as session:
            assert (await session.list_tools()).tools


def _initialize() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


async def test_host_origin_and_body_size_are_checked(tmp_path):
    with mcp_server(tmp_path, "--max-body-bytes", "4096", "--allow-origin", "http://localhost:3000") as server:
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient() as http:
            rebinding = await http.post(server.url, json=_initialize(), headers={**headers, "Host": "evil.example"})
            assert rebinding.status_code == 421
            cross_site = await http.post(server.url, json=_initialize(), headers={**headers, "Origin": "http://evil.example"})
            assert cross_site.status_code == 403
            # Another local port is a page like any other (webhand's own test sites live there) unless allowed.
            other_port = await http.post(server.url, json=_initialize(),
                                         headers={**headers, "Origin": "http://127.0.0.1:3001"})
            assert other_port.status_code == 403 and "is not this server's own" in other_port.text
            huge = _initialize() | {"padding": "x" * 10_000}
            assert (await http.post(server.url, json=huge, headers=headers)).status_code == 413
            fine = await http.post(server.url, json=_initialize(), headers={**headers, "Origin": "http://localhost:3000"})
            assert fine.status_code == 200
            session_id = fine.headers["mcp-session-id"]
            await http.delete(server.url, headers={**headers, "mcp-session-id": session_id})


async def test_an_sdk_client_in_auto_mode_falls_back_to_a_session(tmp_path, site):
    """The 2026 protocol has no sessions; webhand refuses server/discover so auto clients get one."""
    from mcp import Client

    with mcp_server(tmp_path) as server:
        async with Client(server.url) as client:
            first = await client.call_tool("browser_navigate", {"url": site.url("set-cookie?kept=yes")})
            assert not first.is_error, first.content[0].text
            again = await client.call_tool("browser_eval", {"expression": "document.cookie"})
            assert again.structured_content == {"result": "kept=yes"}, "both calls ran in one browser"


async def test_the_token_can_come_from_a_file_and_then_never_shows_in_ps(tmp_path):
    token = secrets.token_urlsafe(24)
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    with mcp_server(tmp_path, "--token-file", str(token_file), env={"WEBHAND_TOKEN": ""}) as server:
        assert not any(token in part for part in psutil.Process(server.process.pid).cmdline())
        async with httpx2.AsyncClient() as http:
            assert (await http.post(server.url, json={})).status_code == 401, "a token from a file is required"
        async with mcp_client(server.url, token) as session:
            assert (await session.list_tools()).tools


async def test_require_token_refuses_to_serve_loopback_without_a_token(tmp_path):
    refused = subprocess.run([sys.executable, "-m", "webhand", "mcp", "--port", "0", "--require-token"],
                             env={**os.environ, "WEBHAND_TOKEN": ""}, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    assert "--require-token" in refused.stderr and "--token-file" in refused.stderr and "WEBHAND_TOKEN" in refused.stderr


async def test_a_token_passed_as_a_flag_is_served_with_a_warning_to_prefer_a_file(tmp_path):
    token = secrets.token_urlsafe(24)
    with mcp_server(tmp_path, "--token", token, env={"WEBHAND_TOKEN": ""}) as server:
        async with mcp_client(server.url, token) as session:
            assert (await session.list_tools()).tools
        assert "--token is visible to every local user" in server.log() and token not in server.log()
