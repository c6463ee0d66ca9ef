"""Several webhand HTTP servers behind a load balancer with affinity on Mcp-Session-Id.

Each MCP session, with its browser, lives in the one process that opened it. The balancer must
therefore send every request carrying a session id to the server whose response set that id.
These tests run two servers and a loopback balancer that does that (tests/affinity_proxy.py,
the same rule as deploy/haproxy.cfg), and show what a client hears when a request goes to the
wrong server anyway."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx2
import pytest

from affinity_proxy import AffinityProxy
from test_mcp_http import Server, _initialize, call, mcp_client, mcp_server


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Server]]:
    """Two webhand HTTP servers, as N replicas of one Deployment."""
    with ExitStack() as stack:
        yield [stack.enter_context(mcp_server(tmp_path_factory.mktemp("replica"))) for _ in range(2)]


async def test_sessions_behind_an_affinity_balancer_keep_their_browser_on_their_server(servers, site):
    # The loopback balancer applies the rule deploy/haproxy.cfg ships: learn the id from the response.
    shipped = (Path(__file__).resolve().parent.parent / "deploy" / "haproxy.cfg").read_text()
    assert "stick store-response res.hdr(mcp-session-id)" in shipped and "stick on req.hdr(mcp-session-id)" in shipped
    first, second = servers
    proxy = await AffinityProxy([first.url, second.url]).start()
    try:
        async def agent(name: str) -> object:
            async with mcp_client(proxy.url) as session:
                await call(session, "browser_navigate", {"url": site.url(f"set-cookie?agent={name}")})
                for _ in range(2):  # later calls find the same browser: its cookie is there
                    seen = await call(session, "browser_eval", {"expression": "document.cookie"})
                return seen.structured_content["result"]

        cookies = await asyncio.gather(*(agent(f"a{i}") for i in range(4)))
        assert cookies == [f"agent=a{i}" for i in range(4)]
        opened_on = {proxy.sticky[sid] for sid in proxy.sticky}
        assert opened_on == {first.url, second.url}, "the balancer spread the sessions over both servers"
        for session_id, backend in proxy.routed:
            if session_id in proxy.sticky:
                assert backend == proxy.sticky[session_id]
    finally:
        await proxy.close()


async def test_a_session_id_sent_to_the_wrong_server_gets_a_clear_404(servers):
    first, second = servers
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient() as http:
        opened = await http.post(first.url, json=_initialize(), headers=headers)
        session_id = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        wrong = await http.post(second.url, json=listing, headers={**headers, "mcp-session-id": session_id})
        assert wrong.status_code == 404  # the MCP spec's answer: the client starts a new session
        message = wrong.json()["error"]["message"]
        assert "not open on this webhand server" in message and "opened on another server" in message
        assert "route every request carrying an Mcp-Session-Id" in message
        await http.delete(first.url, headers={**headers, "mcp-session-id": session_id})
