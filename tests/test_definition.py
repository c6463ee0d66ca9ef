"""What every tool's definition promises: its arguments are checked before anything runs, and every tool
that waits takes a `timeout` (units included)."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import ok
from webhand.config import Settings
from webhand.response import Response
from webhand.session.conversation import ConversationSessions
from webhand.session.session import Session
from webhand.tools import CATALOG
from webhand.tools.definition import PageArgs, Tool, ToolArgs, registered, tool

#: Tools that answer from what is already there (the page's DOM, logs, lists) rather than wait for
#: something to happen; the default timeout caps them. Every other tool takes `timeout`.
READS_WITHOUT_WAITING = {
    "browser_clear_console_logs", "browser_close", "browser_content", "browser_cookies", "browser_downloads",
    "browser_find", "browser_get_url", "browser_network_requests", "browser_recent_console_logs", "browser_resize",
    "browser_session_destroy", "browser_session_history", "browser_session_list", "browser_snapshot", "browser_state", "browser_text",
    "read_image", "browser_list_flows", "browser_save_flow"}


async def test_arguments_are_validated_before_anything_runs(tools):
    reply = await tools.call("browser_click", {"ref": "e1", "selector": "#x"})
    assert reply.is_error and "exactly one of `ref` and `selector`" in reply.text
    reply = await tools.call("browser_navigate", {"link": "http://127.0.0.1/"})
    assert reply.is_error and "url: Field required" in reply.text and "link: unknown argument" in reply.text
    reply = await tools.call("browser_teleport", {})
    assert reply.is_error and "browser_navigate" in reply.text


def test_every_blocking_tool_takes_a_timeout():
    missing = [t.name for t in CATALOG.values() if t.name not in READS_WITHOUT_WAITING
               and "timeout" not in t.input_model.model_fields]
    assert not missing, f"blocking tools without `timeout`: {missing}"


async def test_timeouts_given_with_a_unit_are_taken_by_the_tools(webhand, tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("actions/covered.html")}))
    waited = await tools.call("browser_wait_for", {"text": "never on this page", "timeout": "1500ms"})
    assert waited.is_error and "1.5 s" in waited.text
    covered = await tools.call("browser_click", {"selector": "#buy", "timeout": "2s"})
    assert covered.is_error and "covered by" in covered.text
    bad = await tools.call("browser_click", {"selector": "#buy", "timeout": "soon"})
    assert bad.is_error and "not a duration" in bad.text


def test_a_tool_s_kind_is_the_type_of_its_handler_s_first_parameter():
    kinds = {name: CATALOG[name].kind for name in ("browser_click", "browser_session_list", "web_fetch", "read_image")}
    assert kinds == {"browser_click": "page", "browser_session_list": "sessions", "web_fetch": "sessions",
                     "read_image": "plain"}

    async def unannotated(target, args: ToolArgs, response: Response) -> None:
        pass

    async def anything(target: Any, args: ToolArgs, response: Response) -> None:
        pass

    for handler in (unannotated, anything):
        with pytest.raises(TypeError, match="annotate the first parameter"):
            tool("browser_runs_on_nothing")(handler)
    assert "browser_runs_on_nothing" not in registered()


async def test_each_kind_of_tool_runs_on_what_its_handler_names(tools):
    got: dict[str, object] = {}

    async def on_a_page(session: Session, args: PageArgs, response: Response) -> None:
        got["page"] = session

    async def on_the_sessions(sessions: ConversationSessions, args: ToolArgs, response: Response) -> None:
        got["sessions"] = sessions

    async def on_nothing_but_settings(settings: Settings, args: ToolArgs, response: Response) -> None:
        got["plain"] = settings

    for handler, kind in ((on_a_page, "page"), (on_the_sessions, "sessions"), (on_nothing_but_settings, "plain")):
        made = Tool(f"test_{kind}", "A test tool.", PageArgs if kind == "page" else ToolArgs, handler)
        assert made.kind == kind
        response = Response(tools.webhand.settings, made.name, tools.files)
        await tools.sessions.run_tool(made, made.parse({}), response, timeout=30)
        assert not response.failed, response.result().text
    assert isinstance(got["page"], Session) and got["page"] is tools.sessions.find(None)
    assert got["sessions"] is tools.sessions
    assert got["plain"] is tools.webhand.settings
