"""What the fuzzer (test_hostile_fuzz.py) found: each was an "unexpected" failure or a Python repr
in a reply, and each is now a typed error or a plain answer."""

from __future__ import annotations


async def test_a_javascript_url_is_refused_pointing_at_browser_eval(tools):
    reply = await tools.call("browser_navigate", {"url": "javascript:alert(1)"})
    assert reply.is_error and reply.data["error"] == "NavigationFailed"
    assert "scheme 'javascript' is not supported" in reply.text and "browser_eval" in reply.text


async def test_a_url_whose_port_is_out_of_range_is_refused(tools):
    for url in ("http://127.0.0.1:99999/", "127.0.0.1:70000/x"):
        reply = await tools.call("browser_navigate", {"url": url})
        assert reply.is_error and reply.data["error"] == "NavigationFailed", reply.text
        assert "Port out of range" in reply.text and "unexpected" not in reply.text


async def test_a_string_with_a_lone_surrogate_comes_back_with_a_replacement_character(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    reply = await tools.call("browser_eval", {"expression": "'a\\ud800b'"})  # legal in JavaScript, not in UTF-8
    assert not reply.is_error, reply.text
    assert reply.text == '"a\ufffdb"' and reply.data == {"result": "a\ufffdb"}
    long = await tools.call("browser_eval", {"expression": "'\\udfff'.repeat(3000)"})  # saved to a file instead
    assert not long.is_error and "saved to" in long.text, long.text


async def test_a_file_that_is_not_an_image_is_refused_without_a_python_repr(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    saved = await tools.call("browser_storage_state", {"action": "save", "path": "state.json"})
    assert not saved.is_error, saved.text
    reply = await tools.call("read_image", {"path": "state.json"})
    assert reply.is_error and reply.data["error"] == "FileNotReadable"
    assert "not an image" in reply.text and "object at 0x" not in reply.text


async def test_the_single_browser_tool_refuses_an_action_that_is_not_a_string(webhand):
    from webhand.surfaces.single_tool import SingleTool

    browser = SingleTool(webhand.tools.values())
    context = webhand.conversation("single-tool-junk")
    for arguments in ({"action": ["navigate"]}, {"action": "act", "act_kind": {"click": True}}):
        reply = await browser.call(context, arguments)
        assert reply.is_error and "`action` and `act_kind` must be strings" in reply.text, reply.text
