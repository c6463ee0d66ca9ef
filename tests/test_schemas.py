"""Function-calling definitions for each vendor, and the dispatcher that answers in its shape."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import jsonschema
import mcp_types
import pytest

from webhand import Settings
from webhand.surfaces.mcp.sizes import PLAYWRIGHT_MCP_CHARS, tools_list_chars
from webhand.surfaces.schemas import ToolDispatcher

pytestmark = pytest.mark.one_driver("each vendor's shape of a reply, above the Driver;"
                                      " the calls themselves are checked on every driver in the tool areas' files")

_NAME = {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"}
_OBJECT_SCHEMA = {"type": "object", "required": ["type", "properties"], "properties": {"type": {"const": "object"}}}
ENVELOPES = {
    "openai": {"type": "object", "required": ["type", "function"], "properties": {
        "type": {"const": "function"},
        "function": {"type": "object", "required": ["name", "description", "parameters"], "additionalProperties": False,
                     "properties": {"name": _NAME, "description": {"type": "string", "minLength": 1},
                                    "parameters": _OBJECT_SCHEMA}}}},
    "anthropic": {"type": "object", "required": ["name", "description", "input_schema"], "additionalProperties": False,
                  "properties": {"name": _NAME, "description": {"type": "string", "minLength": 1},
                                 "input_schema": _OBJECT_SCHEMA}},
    "mcp": {"type": "object", "required": ["name", "inputSchema"], "properties": {"name": _NAME,
                                                                                 "inputSchema": _OBJECT_SCHEMA}},
}


def _parameters(entry: dict, format: str) -> dict:
    return {"openai": lambda: entry["function"]["parameters"], "anthropic": lambda: entry["input_schema"],
            "mcp": lambda: entry["inputSchema"]}[format]()


@pytest.mark.parametrize("style", ["multi", "single"])
@pytest.mark.parametrize("format", ["openai", "anthropic", "mcp"])
def test_schema_output_is_valid_json_schema_in_each_format(format, style):
    printed = subprocess.run([sys.executable, "-m", "webhand", "schema", "--format", format, "--tool-style", style,
                              "--caps", "all"], capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    entries = json.loads(printed.stdout)
    assert entries and len({json.dumps(e, sort_keys=True) for e in entries}) == len(entries)
    for entry in entries:
        jsonschema.validate(entry, ENVELOPES[format])
        parameters = _parameters(entry, format)
        jsonschema.Draft202012Validator.check_schema(parameters)
        for name, field in parameters["properties"].items():
            assert field.get("description"), f"field {name} is not described"
        if format == "mcp":
            mcp_types.Tool.model_validate(entry)
    if style == "single":
        (browser,) = entries
        validator = jsonschema.Draft202012Validator(_parameters(browser, format))
        assert validator.is_valid({"action": "navigate", "url": "http://127.0.0.1/"})
        assert not validator.is_valid({"action": "fly"})
    else:
        navigate = next(e for e in entries if "browser_navigate" in json.dumps(e)[:80])
        validator = jsonschema.Draft202012Validator(_parameters(navigate, format))
        assert validator.is_valid({"url": "http://127.0.0.1/"}) and not validator.is_valid({"url": 7})


def test_the_tool_list_costs_less_than_playwright_mcp():
    """Budget: Playwright MCP's 25 default tools are 20,296 characters (~4,300 tokens)."""
    settings = Settings.from_sources(env={})
    count, default_chars = tools_list_chars(settings, None, "multi")
    _, single_chars = tools_list_chars(settings, None, "single")
    assert default_chars < PLAYWRIGHT_MCP_CHARS
    assert default_chars / count < 0.75 * PLAYWRIGHT_MCP_CHARS / 25, "per tool, a quarter cheaper"
    assert single_chars < PLAYWRIGHT_MCP_CHARS / 2


async def test_the_openai_dispatcher_answers_with_a_tool_message_and_the_image(tools, site):
    dispatcher = ToolDispatcher(tools, "openai")
    assert {d["function"]["name"] for d in dispatcher.definitions()} >= {"browser_navigate", "browser_snapshot"}
    call = {"id": "call_1", "type": "function",
            "function": {"name": "browser_navigate", "arguments": json.dumps({"url": site.url("login.html")})}}
    (reply,) = await dispatcher.run(call)
    assert reply["role"] == "tool" and reply["tool_call_id"] == "call_1" and "Title: Sign in" in reply["content"]
    shot = await dispatcher.run({"id": "call_2", "function": {"name": "browser_take_screenshot", "arguments": "{}"}})
    assert [m["role"] for m in shot] == ["tool", "user"]
    url = shot[1]["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,") and base64.b64decode(url.split(",", 1)[1])[:4] == b"\x89PNG"
    (broken,) = await dispatcher.run({"id": "call_3", "function": {"name": "browser_navigate", "arguments": "{url"}})
    assert "not valid JSON" in broken["content"]


async def test_the_anthropic_and_mcp_dispatchers_answer_in_their_shapes(tools, site):
    anthropic = ToolDispatcher(tools, "anthropic", style="single")
    (definition,) = anthropic.definitions()
    assert definition["name"] == "browser"
    block = {"type": "tool_use", "id": "toolu_1", "name": "browser", "input": {"action": "navigate", "url": site.url("login.html")}}
    reply = await anthropic.run(block)
    assert reply["type"] == "tool_result" and reply["tool_use_id"] == "toolu_1" and "is_error" not in reply
    shot = await anthropic.run({"id": "toolu_2", "name": "browser", "input": {"action": "screenshot"}})
    assert [c["type"] for c in shot["content"]] == ["text", "image"]
    assert shot["content"][1]["source"]["media_type"] == "image/png"
    failed = await anthropic.run({"id": "toolu_3", "name": "browser", "input": {"action": "act", "act_kind": "click", "ref": "e404"}})
    assert failed["is_error"] is True and 'browser(action="snapshot")' in failed["content"][0]["text"]

    mcp = ToolDispatcher(tools, "mcp")
    result = await mcp.run({"name": "browser_navigate", "arguments": {"url": site.url("login.html")}})
    checked = mcp_types.CallToolResult.model_validate(result)
    assert not checked.is_error and checked.structured_content["title"] == "Sign in"


@pytest.mark.parametrize("style", ["multi", "single"])
def test_other_designs_names_are_accepted_but_never_advertised(style):
    """One name per argument for the model: the aliases (OTHER_NAMES, camelCase, hidden forms such
    as navigate's wait_for or a page tool's viewport_width) appear in no schema."""
    from webhand.surfaces.exposure import exposed_tools
    from webhand.tools import CATALOG
    from webhand.tools.other_designs import OTHER_NAMES, OTHER_TOOL_NAMES

    advertised = {name for exposed in exposed_tools(CATALOG.values(), style)
                  for name in exposed.input_schema.get("properties", {})}
    foreign = set(OTHER_NAMES) - {"value"}  # `value` is also the cookie and storage tools' own field
    foreign |= {"viewport_width", "viewport_height", "wait_for", "function", "target"}
    assert not advertised & foreign, advertised & foreign
    assert not [name for name in advertised if name != name.lower()], "no camelCase form"
    assert not set(OTHER_TOOL_NAMES) & {t.name for t in exposed_tools(CATALOG.values(), style)}
    assert {ours for ours, _ in OTHER_TOOL_NAMES.values()} <= set(CATALOG), "every other name leads to a tool"


async def test_the_dispatcher_answers_a_call_by_another_design_s_tool_name(tools, site):
    dispatcher = ToolDispatcher(tools, "anthropic")
    assert "navigate_page" not in {d["name"] for d in dispatcher.definitions()}, "answered, never listed"
    reply = await dispatcher.run({"type": "tool_use", "id": "t1", "name": "navigate_page",
                                  "input": {"url": site.url("login.html")}})
    assert not reply.get("is_error") and "Sign in" in reply["content"][0]["text"]
    single = ToolDispatcher(tools, "anthropic", style="single")
    refused = await single.run({"type": "tool_use", "id": "t2", "name": "navigate_page", "input": {}})
    assert refused["is_error"] and "browser" in refused["content"][0]["text"]


async def test_a_surface_passes_its_client_s_caller_with_another_design_s_tool_name(tools, site):
    """The MCP server hands every call its client's side channels (``tool.run(context, arguments,
    caller)``): a call by another design's name takes them as webhand's own name does."""
    from webhand.caller import Caller
    from webhand.surfaces.exposure import by_name, exposed_tools

    exposed = {t.name: t for t in exposed_tools(tools.webhand.tools.values())}
    opened = await by_name(exposed, "navigate_page").run(tools, {"url": site.url("login.html")}, Caller(session_name="mine"))
    assert not opened.is_error and "Sign in" in opened.text
    tabs = await by_name(exposed, "list_pages").run(tools, {}, Caller())  # the name implies browser_tabs' action
    assert not tabs.is_error and "Sign in" in tabs.text
