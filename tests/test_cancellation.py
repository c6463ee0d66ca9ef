"""A call the client cancels stops what it started: seen through the official MCP SDK's client,
which sends ``notifications/cancelled`` when the task awaiting a call is cancelled (issue 43)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

from test_mcp_client_features import client, text


async def _until(condition, cap: float = 15.0) -> None:
    """Wait, polling, until ``condition()`` holds (at most ``cap`` seconds)."""
    async with asyncio.timeout(cap):
        while not condition():
            await asyncio.sleep(0.05)


async def test_a_cancelled_navigation_is_stopped_and_the_next_reply_says_where_the_page_is(webhand, site):
    context = webhand.conversation(f"cancel-{uuid.uuid4().hex[:10]}")
    mark = f"n={uuid.uuid4().hex[:8]}"
    slow = f"slow?ms=1500&body=%3Ctitle%3ESlow%20page%3C/title%3E&{mark}"
    try:
        async with client(webhand, context) as mcp:
            opened = await mcp.call_tool("browser_navigate", {"url": site.url("login.html")})
            assert not opened.is_error, text(opened)
            call = asyncio.create_task(mcp.call_tool("browser_navigate", {"url": site.url(slow)}))
            await _until(lambda: site.received_paths(mark))  # the navigation has reached the slow server
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            after = await mcp.call_tool("browser_tabs", {"action": "list"})
            # Past the moment the slow server answers: a navigation left running would land now.
            waited = await mcp.call_tool("browser_wait_for", {"time": 2.5})
            later = await mcp.call_tool("browser_tabs", {"action": "list"})
    finally:
        await webhand.end_conversation(context.conversation_id)
    said = text(after)
    assert "Your previous call (browser_navigate) was cancelled before it finished: webhand stopped" in said, said
    assert f"The tab is at {site.url('login.html')}" in said, said
    assert not waited.is_error and "Your previous call" not in text(waited), "said once"
    assert "login.html" in text(later) and "Slow page" not in text(later), text(later)
