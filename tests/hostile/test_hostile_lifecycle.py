"""Sessions that end behind the model's back say so."""

from __future__ import annotations

import asyncio

from helpers import settings_for_tests
from webhand import Webhand


async def _until(condition, cap: float = 15.0) -> bool:
    """Poll ``condition`` (a test's wait for a background job, capped)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + cap
    while not condition() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return condition()


async def test_the_call_after_an_idle_close_says_the_old_session_and_its_cookies_are_gone(tmp_path_factory, site):
    settings = settings_for_tests(tmp_path_factory, warm_reserve=False, idle_timeout=0.5, idle_check_interval=0.1)
    async with Webhand(settings) as wh:
        tools = wh.context("idle")
        page = site.url("set-cookie?user=ada")
        assert not (await tools.call("browser_navigate", {"url": page})).is_error
        assert await _until(lambda: not wh.sessions.list("idle")), "the idle reaper closed the session"
        reply = await tools.call("browser_snapshot", {})
        assert not reply.is_error, reply.text
        assert "closed after" in reply.text and "idle_timeout" in reply.text, reply.text
        assert page in reply.text and "cookies and storage are gone" in reply.text, reply.text
        again = await tools.call("browser_snapshot", {})
        assert "idle" not in again.text, "said once, not on every call"
