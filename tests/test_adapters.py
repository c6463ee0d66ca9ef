"""Agent-framework adapters: each framework's own tool objects, invoked directly (no model) on a local page.

Each test builds the tools for one conversation (the ``tools`` fixture's Conversation), signs in on
login.html through them the way a framework would call them, and checks the framework's own forms
of an error and of an image. The conversation's Conversation then sees the same page: the tools
are bound to it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agents import FunctionTool, ToolOutputImage, ToolOutputText
from agents.tool_context import ToolContext as AgentsToolContext
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from pydantic_ai import BinaryContent, Tool, ToolFailed

from webhand.adapters.langchain import langchain_tools
from webhand.adapters.openai_agents import openai_agents_tools
from webhand.adapters.pydantic_ai import pydantic_ai_tools
from webhand.engine.launch.chrome import _registry_dir
from webhand.surfaces.exposure import exposed_tools

pytestmark = pytest.mark.one_driver("the frameworks' own tool objects around the tool calls;"
                                      " the calls themselves are checked on every driver in the tool areas' files")

EXAMPLES = Path(__file__).parent.parent / "examples"

LABELS = ('textbox "User name"', 'textbox "Password"', 'button "Sign in"')


def _refs(snapshot: str) -> list[str]:
    return [re.search(re.escape(label) + r" \[(e\d+)\]", snapshot).group(1) for label in LABELS]


def _catalog_schemas(context) -> dict[str, dict]:
    return {t.name: t.input_schema for t in exposed_tools(context.webhand.tools.values())}


async def test_openai_agents_function_tools_drive_the_conversations_browser(tools, site):
    built = {t.name: t for t in openai_agents_tools(tools)}
    assert all(isinstance(t, FunctionTool) for t in built.values())
    assert {name: t.params_json_schema for name, t in built.items()} == _catalog_schemas(tools)

    async def invoke(name: str, arguments: dict) -> object:
        payload = json.dumps(arguments)
        context = AgentsToolContext(context=None, tool_name=name, tool_call_id=f"call-{name}", tool_arguments=payload)
        return await built[name].on_invoke_tool(context, payload)

    assert "Title: Sign in" in await invoke("browser_navigate", {"url": site.url("login.html")})
    user, password, sign_in = _refs(await invoke("browser_snapshot", {}))
    await invoke("browser_type", {"ref": user, "text": "ada"})
    await invoke("browser_type", {"ref": password, "text": "secret"})
    await invoke("browser_click", {"ref": sign_in})
    assert "status: Welcome, ada!" in await invoke("browser_snapshot", {})
    failed = await invoke("browser_click", {"ref": "e404"})
    assert isinstance(failed, str) and failed.startswith("Error: ") and "browser_snapshot" in failed
    text, image = await invoke("browser_take_screenshot", {})
    assert isinstance(text, ToolOutputText) and isinstance(image, ToolOutputImage)
    assert image.image_url.startswith("data:image/png;base64,")
    assert site.url("login.html") in (await tools.call("browser_get_url", {})).text


async def test_langchain_structured_tools_drive_the_conversations_browser(tools, site):
    built = {t.name: t for t in langchain_tools(tools)}
    assert all(isinstance(t, StructuredTool) for t in built.values())
    assert {name: t.args_schema for name, t in built.items()} == _catalog_schemas(tools)

    async def invoke(name: str, arguments: dict) -> ToolMessage:
        return await built[name].ainvoke({"type": "tool_call", "id": f"call-{name}", "name": name, "args": arguments})

    assert "Title: Sign in" in (await invoke("browser_navigate", {"url": site.url("login.html")})).content
    user, password, sign_in = _refs((await invoke("browser_snapshot", {})).content)
    await invoke("browser_type", {"ref": user, "text": "ada"})
    await invoke("browser_type", {"ref": password, "text": "secret"})
    await invoke("browser_click", {"ref": sign_in})
    reply = await invoke("browser_snapshot", {})
    assert isinstance(reply, ToolMessage) and reply.status == "success" and "status: Welcome, ada!" in reply.content
    failed = await invoke("browser_click", {"ref": "e404"})
    assert failed.status == "error" and failed.content.startswith("Error: ") and "browser_snapshot" in failed.content
    shot = await invoke("browser_take_screenshot", {})
    assert [block["type"] for block in shot.content] == ["text", "image"]
    assert shot.content[1]["mime_type"] == "image/png" and shot.content[1]["base64"]
    assert site.url("login.html") in (await tools.call("browser_get_url", {})).text


async def test_langchain_tools_called_synchronously_say_to_await_ainvoke(tools):
    [snapshot] = [t for t in langchain_tools(tools) if t.name == "browser_snapshot"]
    with pytest.raises(RuntimeError, match=r"async only: call `await tool.ainvoke"):
        await asyncio.to_thread(snapshot.invoke, {})


async def test_pydantic_ai_tools_drive_the_conversations_browser(tools, site):
    built = {t.name: t for t in pydantic_ai_tools(tools)}
    assert all(isinstance(t, Tool) for t in built.values())
    assert {name: t.function_schema.json_schema for name, t in built.items()} == _catalog_schemas(tools)

    async def invoke(name: str, arguments: dict) -> object:
        return await built[name].function(**arguments)

    assert "Title: Sign in" in await invoke("browser_navigate", {"url": site.url("login.html")})
    user, password, sign_in = _refs(await invoke("browser_snapshot", {}))
    await invoke("browser_type", {"ref": user, "text": "ada"})
    await invoke("browser_type", {"ref": password, "text": "secret"})
    await invoke("browser_click", {"ref": sign_in})
    assert "status: Welcome, ada!" in await invoke("browser_snapshot", {})
    try:
        await invoke("browser_click", {"ref": "e404"})
        raise AssertionError("a failed call raises ToolFailed")
    except ToolFailed as failure:
        assert failure.message.startswith("Error: ") and "browser_snapshot" in failure.message
    text, image = await invoke("browser_take_screenshot", {})
    assert text.startswith("Screenshot") and isinstance(image, BinaryContent) and image.media_type == "image/png"
    assert site.url("login.html") in (await tools.call("browser_get_url", {})).text


async def test_the_single_browser_tool_style_is_offered_too(tools, site):
    [browser] = langchain_tools(tools, style="single")
    reply = await browser.ainvoke({"action": "navigate", "url": site.url("login.html")})
    assert browser.name == "browser" and "Title: Sign in" in reply


def test_the_base_package_and_the_adapters_import_no_framework():
    script = ("import sys, webhand, webhand.adapters.langchain, webhand.adapters.openai_agents, "
              "webhand.adapters.pydantic_ai\n"
              "print(sorted(m for m in ('agents', 'langchain_core', 'pydantic_ai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_a_missing_framework_names_the_extra_to_install():
    script = ("import sys; sys.modules['langchain_core'] = None\n"
              "import webhand\nfrom webhand.adapters.langchain import langchain_tools\n"
              "try:\n    langchain_tools(webhand.Webhand().context('c'))\n"
              "except webhand.WebhandError as error:\n    print(error)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert "pip install 'webhand[langchain]'" in out.stdout


@pytest.mark.parametrize("example", ["openai_agents_sdk.py", "langchain_tools.py", "pydantic_ai_agent.py"])
def test_each_framework_example_creates_the_ticket_on_the_demo_site(example, tmp_path):
    """The examples run with no API key: the framework's tools really act on the bundled site."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"} | {"WEBHAND_OUTPUT_DIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, str(EXAMPLES / example)], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "→ browser_click" in out and "The page says: Ticket #" in out and "Ada Lovelace" in out
    # The example's browser ended with it: no registry entry of that process is left.
    left = [f for f in _registry_dir().glob("*.json") if json.loads(f.read_text()).get("owner_pid") == process.pid]
    assert not left
