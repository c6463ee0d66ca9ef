"""The designs webhand follows, call by call: each design's example calls, as that design writes
them (its tool names, argument names and forms), run against a local page and expected to work.

Refs are the one thing not copied: a design's example names its own snapshot's ids, so each table
takes the ref from webhand's snapshot (``{user}``, ``{password}`` ... below) and passes it under
the design's own argument name (``ref``, ``target``, ``uid``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from helpers import ref_of

pytestmark = pytest.mark.one_driver("other designs' names and forms are read by the tools' input models and the "
                                    "host, above the Driver; the tools themselves run on both drivers elsewhere")

Row = tuple[str, dict[str, Any], str]  # tool name, arguments, text the reply must contain

#: Playwright MCP (@playwright/mcp): its tool names and camelCase arguments, `element` beside a ref
#: (or `target`, a ref or a selector), `function` for browser_evaluate, `filename` for files.
PLAYWRIGHT_MCP: list[Row] = [
    ("browser_navigate", {"url": "{page}"}, "Sign in"),
    ("browser_snapshot", {}, 'textbox "User name"'),
    ("browser_type", {"element": "User name textbox", "ref": "{user}", "text": "ada"}, ""),
    ("browser_type", {"element": "Password textbox", "target": "{password}", "text": "secret", "submit": False}, ""),
    ("browser_click", {"element": "Sign in button", "ref": "{sign_in}"}, ""),
    ("browser_wait_for", {"text": "Welcome, ada!"}, ""),
    ("browser_wait_for", {"textGone": "Please enter a user name"}, ""),
    ("browser_wait_for", {"time": 0.1}, ""),
    ("browser_evaluate", {"function": "() => document.title"}, '"Sign in"'),
    ("browser_evaluate", {"function": "async () => { await null; return 6 * 7; }"}, "42"),
    ("browser_console_messages", {}, "signed in as ada"),
    ("browser_take_screenshot", {"fullPage": True, "filename": "page.png"}, "`filename` is not used"),
    ("browser_hover", {"element": "Sign in button", "target": "#login button"}, ""),
    ("browser_press_key", {"key": "Tab"}, ""),
    ("browser_fill_form", {"fields": [
        {"name": "User name", "type": "textbox", "ref": "{user}", "value": "grace"},
        {"name": "Remember me", "type": "checkbox", "ref": "{remember}", "value": "true"}]}, ""),
    ("browser_resize", {"width": 900, "height": 700}, "900x700"),
    ("browser_network_requests", {"static": False}, ""),
    ("browser_tabs", {"action": "new", "url": "{page}"}, ""),
    ("browser_tabs", {"action": "select", "index": 0}, "Tab 0"),
    ("browser_tabs", {"action": "close", "index": 1}, ""),
    ("browser_tabs", {"action": "list"}, "Sign in"),
    ("browser_navigate_back", {}, ""),
]

#: Chrome DevTools MCP (chrome-devtools-mcp): its own tool names, `uid` for an element, `value`
#: for fill, `function` for evaluate_script, `pageIdx` for pages, `includeSnapshot`.
CHROME_DEVTOOLS_MCP: list[Row] = [
    ("navigate_page", {"type": "url", "url": "{page}"}, "Sign in"),
    ("take_snapshot", {}, 'textbox "User name"'),
    ("fill", {"uid": "{user}", "value": "ada"}, ""),
    ("fill", {"uid": "{password}", "value": "secret", "includeSnapshot": False}, "`includeSnapshot` is not used"),
    ("click", {"uid": "{sign_in}"}, ""),
    ("evaluate_script", {"function": "() => document.querySelector('#result').textContent"}, "Welcome, ada!"),
    ("list_console_messages", {"pageSize": 10}, "signed in as ada"),
    ("hover", {"uid": "{sign_in}"}, ""),
    ("press_key", {"key": "Tab"}, ""),
    ("take_screenshot", {"fullPage": True}, "Screenshot"),
    ("resize_page", {"width": 800, "height": 600}, "800x600"),
    ("list_network_requests", {}, ""),
    ("new_page", {"url": "{page}"}, ""),
    ("list_pages", {}, "Sign in"),
    ("select_page", {"pageIdx": 0}, "Tab 0"),
    ("close_page", {"pageIdx": 1}, ""),
]

#: The Python/Playwright-style forms: milliseconds, `session_name` and `viewport_*`, navigate's
#: `wait_for`, `await`, `actions` as a JSON string with steps keyed `type`, timeouts everywhere.
PYTHON_STYLE: list[Row] = [
    ("browser_session_create", {"session_name": "py", "viewport_width": 800, "viewport_height": 600}, "py"),
    ("browser_navigate", {"url": "{page}", "session_name": "py", "viewport_width": 640, "viewport_height": 480,
                          "wait_for": "#login button", "timeout": 30000},
     "30000 was read as milliseconds (30 s)"),
    ("browser_snapshot", {"session_name": "py"}, 'textbox "User name"'),
    ("browser_eval", {"session_name": "py", "expression": "innerWidth + 'x' + innerHeight"}, "640x480"),
    ("browser_eval", {"session_name": "py", "expression": "Promise.resolve(1)", "await": False}, ""),
    ("browser_interact", {"session_name": "py", "actions": json.dumps([
        {"type": "type", "ref": "{user}", "text": "ada"},
        {"type": "type", "ref": "{password}", "text": "secret"},
        {"type": "click", "ref": "{sign_in}"}])}, "3. Clicked"),
    ("browser_wait_for", {"session_name": "py", "text": "Welcome, ada!", "timeout": 5000}, "read as milliseconds"),
    ("browser_take_screenshot", {"session_name": "py", "fullPage": True, "timeout": "10s"}, "Screenshot"),
    ("read_image", {"path": "{screenshot}", "timeout": 5}, "Image"),
    ("browser_resize", {"session_name": "py", "width": 700, "height": 500, "timeout": 5}, "700x500"),
    ("browser_session_destroy", {"session_name": "py"}, "py"),
]


async def replay(tools: Any, rows: list[Row], page: str) -> None:
    """Run each row in order, filling in refs from the last snapshot and the last screenshot's path."""
    values = {"page": page}
    for number, (name, arguments, expected) in enumerate(rows, 1):
        text = json.dumps(arguments)
        for key, value in values.items():
            text = text.replace("{" + key + "}", value)
        reply = await tools.call(name, json.loads(text))
        assert not reply.is_error, f"call {number}: {name} {text}\n{reply.text}"
        assert expected in reply.text, f"call {number}: {name} {text}: {expected!r} not in\n{reply.text}"
        if name in ("browser_snapshot", "take_snapshot"):
            page_text = reply.text
            values.update(user=ref_of(page_text, 'textbox "User name"'), password=ref_of(page_text, 'textbox "Password"'),
                          sign_in=ref_of(page_text, 'button "Sign in"'), remember=ref_of(page_text, 'checkbox "Remember me"'))
        if (saved := re.search(r"saved to (\S+\.png)", reply.text)) is not None:
            values["screenshot"] = saved.group(1)


@pytest.mark.parametrize("rows", [PLAYWRIGHT_MCP, CHROME_DEVTOOLS_MCP], ids=["playwright-mcp", "chrome-devtools-mcp"])
async def test_each_design_s_example_calls_work_as_written(tools, site, rows):
    await replay(tools, rows, site.url("login.html"))


async def test_the_python_style_forms_work_and_the_reply_says_how_they_were_read(tools, site):
    await replay(tools, PYTHON_STYLE, site.url("login.html"))
