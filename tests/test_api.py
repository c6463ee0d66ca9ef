"""The Python API: open a browser, call tools as methods, close it."""

from __future__ import annotations

import os
import re

import pytest

import webhand
from helpers import own_browser_processes, settings_for_tests, wait_until_gone_async
from webhand import ToolDispatcher


async def test_open_browser_calls_tools_as_methods_and_closes_its_browser(tmp_path_factory, site):
    settings = settings_for_tests(tmp_path_factory, isolation="process", warm_reserve=False)
    before = {p.pid for p in own_browser_processes()}
    async with webhand.open_browser(settings) as browser:
        opened = await browser.navigate(site.url("login.html"))
        assert "Title: Sign in" in opened.text and opened.data["title"] == "Sign in"
        page = (await browser.snapshot()).text
        user, password, button = (re.search(re.escape(label) + r" \[(e\d+)\]", page).group(1)
                                  for label in ('textbox "User name"', 'textbox "Password"', 'button "Sign in"'))
        await browser.type(user, "ada")
        await browser.type(ref=password, text="secret")
        await browser.click(ref=button)
        assert 'status: Welcome, ada!' in (await browser.snapshot()).text

        with pytest.raises(webhand.ToolCallFailed) as failed:
            await browser.click(ref="e404")
        assert failed.value.result.is_error and "snapshot" in str(failed.value)
        assert (await browser.call("browser_click", {"ref": "e404"})).is_error, "call() returns errors as replies"
        with pytest.raises(AttributeError, match="not a served tool"):
            browser.fly  # noqa: B018
        assert {"navigate", "snapshot", "click"} <= set(dir(browser))
        assert any(d["function"]["name"] == "browser_navigate" for d in browser.definitions("openai"))
        # The processes of the browser this API object launched (its whole process group), not
        # those a shared browser elsewhere in the test run happens to start meanwhile.
        [pid] = browser.context.webhand.sessions.browser_pids()
        launched = [p for p in own_browser_processes() if p.pid not in before and os.getpgid(p.pid) == pid]
        assert launched, "a browser of its own (process isolation)"
    assert await wait_until_gone_async(launched) == []


async def test_the_host_side_hands_its_model_definitions_and_a_dispatcher(webhand, site):  # noqa: F811
    """`webhand` here is the fixture (a running Webhand), as a host holds one."""
    context = webhand.context("host-side")
    try:
        dispatcher = ToolDispatcher(context, "anthropic")
        names = {d["name"] for d in dispatcher.definitions()}
        assert names == set(webhand.tools)
        reply = await dispatcher.run({"type": "tool_use", "id": "t1", "name": "browser_navigate",
                                              "input": {"url": site.url("login.html")}})
        assert "Title: Sign in" in reply["content"][0]["text"]
    finally:
        await webhand.end_conversation(context.conversation_id)
