"""The single `browser` tool: generated from the catalog, runs the same scenario as the separate tools,
and takes the designs' own argument names (`element_ref`, `script`, `target_id`, `launch` with no name)."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from pydantic import Field

from helpers import ok, ref_of
from test_mcp_http import call, mcp_client, mcp_server
from webhand.response import ToolResult
from webhand.session.session import Session
from webhand.surfaces.single_tool import SingleTool
from webhand.tools import CATALOG
from webhand.tools.definition import PageArgs, Tool

pytestmark = pytest.mark.one_driver("the single `browser` tool maps its actions onto the catalog's tools, above the"
                                      " Driver; the tools are checked on every driver in their own files")

Call = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]


async def sign_in(run: Call, url: str) -> str:
    """The login scenario, in the multi-tool vocabulary; returns the final snapshot."""
    assert not (await run("browser_navigate", {"url": url})).is_error
    page = (await run("browser_snapshot", {})).text
    refs = {label: re.search(re.escape(label) + r" \[(e\d+)\]", page).group(1)
            for label in ('textbox "User name"', 'textbox "Password"', 'button "Sign in"')}
    assert not (await run("browser_type", {"ref": refs['textbox "User name"'], "text": "ada"})).is_error
    assert not (await run("browser_type", {"ref": refs['textbox "Password"'], "text": "secret"})).is_error
    assert not (await run("browser_click", {"ref": refs['button "Sign in"']})).is_error
    return (await run("browser_snapshot", {})).text


def as_single_tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """How a model using the browser tool says the same thing."""
    kinds = {"browser_click": "click", "browser_type": "type"}
    if name in kinds:
        return {"action": "act", "act_kind": kinds[name], **arguments}
    return {"action": {"browser_navigate": "navigate", "browser_snapshot": "snapshot"}[name], **arguments}


async def test_the_single_tool_runs_the_same_scenario_as_the_separate_tools(webhand, tools, site):
    single = SingleTool(webhand.tools.values())
    multi_result = await sign_in(tools.call, site.url("login.html"))
    other = webhand.conversation("single-tool-scenario")
    try:
        single_result = await sign_in(lambda name, args: single.call(other, as_single_tool_call(name, args)),
                                      site.url("login.html"))
    finally:
        await webhand.end_conversation(other.conversation_id)
    assert 'status: Welcome, ada!' in multi_result
    assert single_result == multi_result


async def test_errors_name_the_action_to_call_not_the_catalog_tool(webhand, tools, site):
    single = SingleTool(webhand.tools.values())
    await single.call(tools, {"action": "navigate", "url": site.url("login.html")})
    stale = await single.call(tools, {"action": "act", "act_kind": "click", "ref": "e404"})
    assert stale.is_error and 'browser(action="snapshot")' in stale.text and "browser_snapshot" not in stale.text
    unknown = await single.call(tools, {"action": "fly"})
    assert unknown.is_error and "navigate" in unknown.text
    wrong_field = await single.call(tools, {"action": "navigate", "url": site.url("login.html"), "text": "x"})
    assert wrong_field.is_error and "text: unknown argument" in wrong_field.text


def test_every_served_tool_is_reachable_and_new_tools_appear_without_an_edit():
    single = SingleTool(CATALOG.values())
    assert {route.tool.name for route in single.routes.values()} == set(CATALOG)
    assert {"navigate", "snapshot", "screenshot", "evaluate", "close", "act"} <= set(single.actions)

    class EchoArgs(PageArgs):
        words: str = Field(description="What to say back.")

    async def echo(session: Session, args: EchoArgs, response: Any) -> None:
        response.add(args.words)

    newcomer = Tool("browser_echo", "Say the words back.", EchoArgs, echo)
    grown = SingleTool([*CATALOG.values(), newcomer])
    assert "echo" in grown.actions and "- echo(words): Say the words back." in grown.description()
    assert grown.route({"action": "echo", "words": "hi"})[1] == {"words": "hi"}


@pytest.mark.skipif("browser_tabs" not in CATALOG, reason="no tabs tool in the catalog")
def test_an_operation_field_of_a_tool_becomes_actions_of_the_browser_tool():
    single = SingleTool(CATALOG.values())
    route, arguments = single.route({"action": "open", "url": "http://127.0.0.1/"})
    assert route.tool.name == "browser_tabs" and arguments == {"url": "http://127.0.0.1/", "action": "open"}
    assert single.route({"action": "close_tab"})[1] == {"action": "close"}


async def test_single_tool_style_over_mcp_http(tmp_path, site):
    with mcp_server(tmp_path, "--tool-style", "single") as server:
        async with mcp_client(server.url) as session:
            (browser,) = (await session.list_tools()).tools
            assert browser.name == "browser" and "navigate" in browser.input_schema["properties"]["action"]["enum"]
            opened = await call(session, "browser", {"action": "navigate", "url": site.url("login.html")})
            assert "Title: Sign in" in opened.content[0].text
            page = await call(session, "browser", {"action": "snapshot"})
            assert 'button "Sign in"' in page.content[0].text


async def test_the_browser_tool_takes_element_ref_script_and_scroll_into_view(webhand, tools, site):
    single = SingleTool(webhand.tools.values())
    ok(await single.call(tools, {"action": "navigate", "url": site.url("compat/far.html")}))
    page = ok(await single.call(tools, {"action": "snapshot"}))
    ref = re.search(r'button "Far away" \[(e\d+)\]', page).group(1)
    scrolled = ok(await single.call(tools, {"action": "act", "act_kind": "scroll_into_view", "element_ref": ref}))
    assert "into view" in scrolled
    assert json.loads(ok(await single.call(tools, {"action": "evaluate", "script": "window.scrollY > 2000"}))) is True


async def test_the_browser_tool_takes_target_id_for_a_tab(webhand, tools, site):
    single = SingleTool(webhand.tools.values())
    ok(await single.call(tools, {"action": "navigate", "url": site.url("compat/far.html")}))
    ok(await single.call(tools, {"action": "open", "url": site.url("login.html")}))
    assert "Tab 0 is now the current tab" in ok(await single.call(tools, {"action": "focus", "target_id": 0}))
    both = await single.call(tools, {"action": "focus", "target_id": 0, "index": 1})
    assert both.is_error and "name the same argument" in both.text


async def test_launch_without_a_name_opens_the_default_session(webhand, tools, site):
    single = SingleTool(webhand.tools.values())
    assert "default session is open" in ok(await single.call(tools, {"action": "launch"}))
    ok(await single.call(tools, {"action": "navigate", "url": site.url("login.html")}))
    listed = ok(await single.call(tools, {"action": "session_list"}))
    assert "default" in listed


async def test_launch_without_the_sessions_group_is_answered_without_an_error(webhand, tools):
    single = SingleTool(t for t in webhand.tools.values() if t.capability == "core")
    reply = await single.call(tools, {"action": "launch"})
    assert not reply.is_error and 'action="navigate"' in reply.text


async def test_element_actions_by_their_own_name_and_reads_that_open_a_url_first(webhand, tools, site):
    single = SingleTool(webhand.tools.values())
    page = ok(await single.call(tools, {"action": "snapshot", "url": site.url("login.html")}))
    assert "Sign in" in page and 'button "Sign in"' in page, "opened, then read"
    user, password, button = (ref_of(page, label) for label in
                              ('textbox "User name"', 'textbox "Password"', 'button "Sign in"'))
    ok(await single.call(tools, {"action": "type", "ref": user, "text": "ada"}))
    ok(await single.call(tools, {"action": "fill", "ref": password, "text": "secret"}))
    ok(await single.call(tools, {"action": "hover", "selector": "#login button"}))
    ok(await single.call(tools, {"action": "click", "ref": button}))
    assert "Welcome, ada!" in ok(await single.call(tools, {"action": "snapshot"}))
    shot = ok(await single.call(tools, {"action": "screenshot", "url": site.url("compat/far.html")}))
    assert "far.html" in shot and "Screenshot" in shot
    assert "focus" in single.actions and "click" not in single.actions, "the schema keeps one form: act + act_kind"


async def test_an_unknown_action_points_to_the_element_actions_form(webhand, tools):
    single = SingleTool(webhand.tools.values())
    reply = await single.call(tools, {"action": "clik", "ref": "e1"})
    assert reply.is_error and "Unknown action 'clik'" in reply.text
    assert 'action="act", act_kind="click"' in reply.text and "navigate" in reply.text


def test_with_the_browser_off_no_style_serves_a_tool(tmp_path):
    from webhand.config import load_settings
    from webhand.surfaces.exposure import exposed_tools
    from webhand.tools import enabled_tools

    path = tmp_path / "webhand.toml"
    path.write_text("[agents.offline.browser]\nenabled = false\n")
    settings = load_settings(config=path, agent="offline", env={}, flags={"capabilities": ["core"]})
    assert enabled_tools(settings) == [] and enabled_tools(settings, ["all"]) == []
    assert exposed_tools(enabled_tools(settings), "single") == [] and exposed_tools(enabled_tools(settings)) == []
