"""The Python API: open a browser, call tools as methods, close it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

import webhand
from helpers import (browsers_of_child_processes, own_browser_processes, settings_for_tests, wait_until_gone,
                     wait_until_gone_async)
from webhand import ToolDispatcher

pytestmark = pytest.mark.one_driver("the Python API's shape around the tool calls, above the Driver")


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
    context = webhand.conversation("host-side")
    try:
        dispatcher = ToolDispatcher(context, "anthropic")
        names = {d["name"] for d in dispatcher.definitions()}
        assert names == set(webhand.tools)
        reply = await dispatcher.run({"type": "tool_use", "id": "t1", "name": "browser_navigate",
                                              "input": {"url": site.url("login.html")}})
        assert "Title: Sign in" in reply["content"][0]["text"]
    finally:
        await webhand.end_conversation(context.conversation_id)


# A program that starts webhand, uses it, and returns from asyncio.run without close().
_NEVER_CLOSES = textwrap.dedent("""
    import asyncio, sys
    from webhand import Settings, Webhand
    async def main():
        webhand = await Webhand(Settings.from_sources({"output_dir": sys.argv[2], "isolation": "process"})).start()
        await webhand.conversation("c").call("browser_navigate", {"url": sys.argv[1]})
        await webhand.sessions.ready(reserve=True)
        print("ready", flush=True)
        sys.stdin.readline()  # the test finds this program's browsers, then lets it end
    asyncio.run(main())
""")


# Through the Python API: open_browser entered and never left, its session used, then the end of
# asyncio.run closes it and webhand's loop guard at once (the two shutdowns once raced, and printed
# "Task was destroyed but it is pending!").
_NEVER_LEAVES_OPEN_BROWSER = textwrap.dedent("""
    import asyncio, sys
    import webhand
    async def main():
        opened = webhand.open_browser(output_dir=sys.argv[2], warm_reserve=False)
        browser = await opened.__aenter__()
        await browser.navigate(sys.argv[1])
        print("ready", flush=True)
        sys.stdin.readline()
    asyncio.run(main())
""")

# A program that runs its own event loop and never closes it: webhand shuts down on that loop at
# exit, so no task is left for Python to destroy ("Event loop is closed" once came from them).
_LEAVES_ITS_LOOP_OPEN = textwrap.dedent("""
    import asyncio, sys
    import webhand
    async def main():
        opened = webhand.open_browser(output_dir=sys.argv[2])
        browser = await opened.__aenter__()
        await browser.navigate(sys.argv[1])
        print("ready", flush=True)
        sys.stdin.readline()
    asyncio.new_event_loop().run_until_complete(main())
""")


@pytest.mark.parametrize("program_text", [_NEVER_CLOSES, _NEVER_LEAVES_OPEN_BROWSER, _LEAVES_ITS_LOOP_OPEN],
                         ids=["webhand-asyncio-run", "open-browser-asyncio-run", "open-browser-own-loop"])
def test_leaving_without_close_is_silent_and_leaves_no_browser(tmp_path, site, program_text):
    program = subprocess.Popen([sys.executable, "-c", program_text, site.url("login.html"), str(tmp_path)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert program.stdout is not None and program.stdout.readline().strip() == "ready"
        browsers = browsers_of_child_processes()
        assert browsers, "the program's browsers are found while it runs"
        _, stderr = program.communicate("\n", timeout=120)
    finally:
        if program.poll() is None:  # the program we started, by its pid, whatever happened above
            program.kill()
            program.wait(timeout=10)
    assert program.returncode == 0 and stderr == ""
    assert wait_until_gone(browsers) == []


def test_the_old_public_names_of_a_conversation_still_work() -> None:
    """Issue 39's vocabulary: ``Conversation`` (``Webhand.conversation``) is the word; ``ToolContext``
    and ``Webhand.context``, the names hosts were written against, stay as aliases."""
    import webhand
    from webhand import Conversation, ToolContext, Webhand

    assert ToolContext is Conversation and Webhand.context is Webhand.conversation
    assert {"Conversation", "ToolContext"} <= set(webhand.__all__)
