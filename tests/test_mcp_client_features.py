"""What webhand's MCP server does with what a client offers, seen through the official SDK's client
connected in memory to ``build_server``: progress notifications, asking the person (elicitation),
the client's roots, and saved files as resource links read back with ``resources/read``.

One shared Webhand (the conftest's); each test has its own conversation. The MCP surface does not
depend on the driver, so these run on one.
"""

from __future__ import annotations

import asyncio
import base64
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from webhand.surfaces.mcp.server import build_server

pytestmark = pytest.mark.one_driver("the MCP surface's client features do not depend on the driver")


@pytest.fixture
async def conversation(webhand) -> AsyncIterator[object]:
    context = webhand.conversation(f"mcp-{uuid.uuid4().hex[:10]}")
    yield context
    await webhand.end_conversation(context.conversation_id)


def client(webhand, context, **callbacks) -> Client:
    # "legacy": the initialize handshake over JSON-RPC, as webhand's stdio and HTTP clients speak it.
    return Client(build_server(webhand, lambda _ctx: context), mode="legacy", **callbacks)


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


# -- progress ---------------------------------------------------------------------------------

async def test_long_calls_report_progress_to_a_client_that_gave_a_token(webhand, conversation, site):
    heard: list[tuple[float, str]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, message or ""))

    async with client(webhand, conversation) as mcp:
        # A page whose document takes 3 s to arrive: the navigate waits for it.
        loaded = await mcp.call_tool("browser_navigate", {"url": site.url("/slow?ms=3000")}, progress_callback=on_progress)
        assert not loaded.is_error, text(loaded)
        navigate_heard = list(heard)
        heard.clear()
        waited = await mcp.call_tool("browser_wait_for", {"time": 3}, progress_callback=on_progress)
        assert not waited.is_error, text(waited)
        # Without a token, no notification: the same call is silent.
        heard_before = len(heard)
        await mcp.call_tool("browser_wait_for", {"time": 1.2})
        assert len(heard) == heard_before
    # Until the handler names what it waits for (the session may be opening first), the tool's name does.
    assert any(m.startswith("the page at ") and "/slow?ms=3000 to load (" in m for _, m in navigate_heard), navigate_heard
    assert all(m.startswith(("the page at", "browser_navigate running")) for _, m in navigate_heard), navigate_heard
    assert heard and all("3 s to pass" in m for _, m in heard), heard
    # Each says how long so far, and the counts grow.
    assert [p for p, _ in heard] == sorted(p for p, _ in heard) and heard[-1][0] >= 1


# -- asking the person in the client ----------------------------------------------------------

@pytest.fixture
def dashboard_link(webhand) -> AsyncIterator[str]:
    """As a served dashboard does, tell the sessions where a person opens them (request_human needs one)."""
    sessions = webhand.sessions
    before = sessions.dashboard_url, sessions.dashboard_link
    sessions.dashboard_url = "http://127.0.0.1:9/dashboard"
    sessions.dashboard_link = lambda url, sid: f"{url}/#session={sid}"
    yield sessions.dashboard_url
    sessions.dashboard_url, sessions.dashboard_link = before


@pytest.mark.parametrize(("answer", "expected"), [
    ("accept", "answered Done"),
    ("decline", "Error: The person declined the request"),
    ("cancel", "Error: The person dismissed the request"),
])
async def test_request_human_asks_the_person_in_a_client_with_elicitation(webhand, conversation, site, dashboard_link,
                                                                         answer, expected):
    asked: list[str] = []

    async def elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=answer)

    async with client(webhand, conversation, elicitation_callback=elicit) as mcp:
        await mcp.call_tool("browser_navigate", {"url": site.url("login.html")})
        reply = await mcp.call_tool("browser_request_human", {"reason": "Sign in as the test user", "timeout": 30})
    assert expected in text(reply) and reply.is_error == (answer != "accept")
    assert len(asked) == 1 and "Sign in as the test user" in asked[0] and f"{dashboard_link}/#session=" in asked[0]


async def test_request_human_without_elicitation_waits_in_the_dashboard_as_before(webhand, conversation, site,
                                                                                dashboard_link):
    async with client(webhand, conversation) as mcp:
        await mcp.call_tool("browser_navigate", {"url": site.url("login.html")})
        reply = await mcp.call_tool("browser_request_human", {"reason": "Solve the CAPTCHA", "timeout": 0.5})
    assert reply.is_error and "Nobody took control" in text(reply) and dashboard_link in text(reply)


# -- the client's roots -----------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:The roots capability is deprecated")  # in 2026's protocol, not the handshake's
async def test_client_roots_narrow_the_folders_file_tools_may_use(webhand, conversation, site):
    shared = Path(webhand.settings.roots[0])  # the configured root
    first, second = shared / f"a-{uuid.uuid4().hex[:6]}", shared / f"b-{uuid.uuid4().hex[:6]}"
    for folder in (first, second):
        folder.mkdir()
        (folder / "note.txt").write_text(folder.name)
    declared = [first]

    async def list_roots(context) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=f.as_uri(), name=f.name) for f in declared])

    def upload(folder: Path) -> dict:
        return {"paths": [str(folder / "note.txt")], "selector": "#files"}

    async with client(webhand, conversation, list_roots_callback=list_roots) as mcp:
        opened = await mcp.call_tool("browser_navigate", {"url": site.url("tabs_files/upload.html")})
        assert not opened.is_error, opened.content[0].text
        inside = await mcp.call_tool("browser_upload_file", upload(first))
        outside = await mcp.call_tool("browser_upload_file", upload(second))
        assert not inside.is_error, text(inside)
        assert outside.is_error and "outside the folders webhand may use" in text(outside)
        declared[:] = [second]
        await mcp.send_roots_list_changed()
        # The notification is handled before the next request is (one stream, in order).
        moved = await mcp.call_tool("browser_upload_file", upload(second))
        left = await mcp.call_tool("browser_upload_file", upload(first))
        # The conversation's own folder stays allowed whatever the client says.
        own = conversation.files.folder / "own.txt"
        conversation.files.write(own, b"own")
        mine = await mcp.call_tool("browser_upload_file", {"paths": ["own.txt"], "selector": "#files"})
    assert not moved.is_error, text(moved)
    assert left.is_error and "client's roots" in text(left)
    assert not mine.is_error, text(mine)


# -- resource links ---------------------------------------------------------------------------

async def test_a_screenshot_comes_with_a_resource_link_only_its_session_can_read(webhand, conversation, site):
    other = webhand.conversation(f"mcp-other-{uuid.uuid4().hex[:6]}")
    try:
        async with client(webhand, conversation) as mcp, client(webhand, other) as stranger:
            await mcp.call_tool("browser_navigate", {"url": site.url("login.html")})
            shot = await mcp.call_tool("browser_take_screenshot", {})
            links = [block for block in shot.content if block.type == "resource_link"]
            assert len(links) == 1 and links[0].mime_type == "image/png" and links[0].name.endswith(".png")
            path = Path(links[0].uri.removeprefix("file://"))
            assert str(path) in text(shot)
            read = await mcp.read_resource(links[0].uri)
            assert base64.b64decode(read.contents[0].blob) == path.read_bytes()
            assert any(r.uri == links[0].uri for r in (await mcp.list_resources()).resources)
            with pytest.raises(MCPError, match="not one of this conversation's saved files"):
                await stranger.read_resource(links[0].uri)
    finally:
        await webhand.end_conversation(other.conversation_id)


async def test_resources_read_refuses_every_path_outside_the_sessions_own_folder(webhand, conversation, tmp_path):
    own = conversation.files.folder
    conversation.files.write(own / "files" / "kept.txt", b"kept")
    other = webhand.conversation("mcp-hostile-other")
    other.files.write(other.files.folder / "files" / "theirs.txt", b"theirs")
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, own / "files" / "link.txt")
    os.mkfifo(own / "files" / "pipe")
    attempts = {
        "a system file": "file:///etc/passwd",
        "another conversation's file": (other.files.folder / "files" / "theirs.txt").as_uri(),
        "dot-dot out of the folder": f"file://{own}/files/../../../{tmp_path.name}/secret.txt",
        "percent-encoded dot-dot": f"file://{own}/files/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "a symlink pointing out": (own / "files" / "link.txt").as_uri(),
        "a NUL byte": f"file://{own}/files/kept.txt%00.png",
        "a remote host": f"file://example.com{own}/files/kept.txt",
        "another scheme": f"http://127.0.0.1/{own}/files/kept.txt",
        "a relative path": "file:files/kept.txt",
        "the folder itself": own.as_uri(),
        "a FIFO": (own / "files" / "pipe").as_uri(),
        "a query string": (own / "files" / "kept.txt").as_uri() + "?x=1",
        "invalid UTF-8": f"file://{own}/files/%ff.txt",
    }
    async with client(webhand, conversation) as mcp:
        refused = {}
        for what, uri in attempts.items():
            try:
                await mcp.read_resource(uri)
                refused[what] = False
            except MCPError:
                refused[what] = True
        kept = await mcp.read_resource((own / "files" / "kept.txt").as_uri())
    assert {what for what, was in refused.items() if not was} == set()
    assert kept.contents[0].text == "kept"
    await webhand.end_conversation(other.conversation_id)


async def test_progress_stops_with_the_call_and_ends_quietly_when_the_client_is_gone():
    from webhand.caller import ProgressTicker

    sent: list[str] = []

    async def broken(elapsed: float, message: str) -> None:
        sent.append(message)
        raise ConnectionError("client gone")

    async with ProgressTicker(broken, "waiting", interval=0.05):
        await asyncio.sleep(0.3)  # the call's own work, standing in for a long wait
    assert sent == ["waiting (0 s so far)"]  # the first failure ended the ticking; the call went on


@pytest.mark.filterwarnings("ignore:The roots capability is deprecated")
async def test_over_stdio_even_the_first_call_keeps_to_the_clients_roots(tmp_path, site):
    """``webhand mcp`` serves a plain client's first call before the SDK is loaded (early.py); a
    client with roots gets every call from the SDK, which asks for its roots first."""
    import sys

    from mcp import ClientSession, StdioServerParameters, stdio_client

    from helpers import browsers_of_child_processes, wait_until_gone_async

    allowed, other = tmp_path / "allowed", tmp_path / "other"
    for folder in (allowed, other):
        folder.mkdir()
        (folder / "note.txt").write_text(folder.name)

    async def list_roots(context) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=allowed.as_uri(), name="allowed")])

    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path / "out"), "WEBHAND_ROOTS": str(tmp_path),
           "WEBHAND_CAPABILITIES": "core,files"}
    server = StdioServerParameters(command=sys.executable, args=["-m", "webhand", "mcp"], env=env)
    async with stdio_client(server) as (read, write), ClientSession(read, write, list_roots_callback=list_roots) as mcp:
        await mcp.initialize()
        first = await mcp.call_tool("browser_upload_file", {"paths": [str(other / "note.txt")], "selector": "#files"})
        assert first.is_error and "client's roots" in first.content[0].text, first.content[0].text
        opened = await mcp.call_tool("browser_navigate", {"url": site.url("tabs_files/upload.html")})
        assert not opened.is_error, opened.content[0].text
        inside = await mcp.call_tool("browser_upload_file", {"paths": [str(allowed / "note.txt")], "selector": "#files"})
        assert not inside.is_error, inside.content[0].text
        browsers = browsers_of_child_processes()
    assert await wait_until_gone_async(browsers) == []
