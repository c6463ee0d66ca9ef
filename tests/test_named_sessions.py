"""Named sessions: create, list, destroy, and each with its own cookies and tabs."""

from __future__ import annotations


async def test_create_list_destroy(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    created = await tools.call("browser_session_create", {"name": "admin", "width": 800, "height": 600})
    assert not created.is_error, created.text
    assert "Started session 'admin' (800x600)" in created.text

    width = await tools.call("browser_eval", {"session": "admin", "expression": "innerWidth + 'x' + innerHeight"})
    assert "800x600" in width.text

    listed = await tools.call("browser_session_list", {})
    assert "Sessions (2)" in listed.text
    assert "- default: " + site.url("tabs_files/child.html") in listed.text and "- admin: about:blank" in listed.text

    again = await tools.call("browser_session_create", {"name": "admin"})
    assert again.is_error and "already open" in again.text

    destroyed = await tools.call("browser_session_destroy", {"name": "admin"})
    assert "Closed session 'admin'" in destroyed.text
    listed = await tools.call("browser_session_list", {})
    assert "Sessions (1)" in listed.text and "admin" not in listed.text

    unknown = await tools.call("browser_session_destroy", {"name": "admin"})
    assert unknown.is_error and "No session named 'admin' is open (open: default)" in unknown.text


async def test_two_named_sessions_do_not_share_cookies_or_pages(tools, site):
    for name in ("alice", "bob"):
        assert not (await tools.call("browser_session_create", {"name": name})).is_error
    await tools.call("browser_navigate", {"session": "alice", "url": site.url("set-cookie?user=alice")})
    await tools.call("browser_navigate", {"session": "bob", "url": site.url("tabs_files/child.html")})

    assert "user=alice" in (await tools.call("browser_cookies", {"session": "alice"})).text
    assert "No cookies." in (await tools.call("browser_cookies", {"session": "bob"})).text
    assert "No cookies." in (await tools.call("browser_cookies", {})).text  # nor the default session

    bob_tabs = await tools.call("browser_tabs", {"session": "bob"})
    assert "Child page" in bob_tabs.text and "set-cookie" not in bob_tabs.text


async def test_sessions_of_another_conversation_are_not_listed(tools, webhand, site):
    await tools.call("browser_session_create", {"name": "mine"})
    other = webhand.conversation("test-named-other")
    try:
        listed = await other.call("browser_session_list", {})
        assert "mine" not in listed.text and "No browser sessions are open" in listed.text
        refused = await other.call("browser_session_destroy", {"name": "mine"})
        assert refused.is_error
    finally:
        await webhand.end_conversation(other.conversation_id)
    assert "mine" in (await tools.call("browser_session_list", {})).text


async def test_a_session_can_start_from_a_saved_login(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/account.html")})
    await tools.call("browser_click", {"selector": "#login"})
    await tools.call("browser_storage_state", {"action": "save", "path": "named-login.json"})  # the conversation's folder

    created = await tools.call("browser_session_create", {"name": "reused", "storage_state": "named-login.json"})
    assert "with the saved login" in created.text, created.text
    await tools.call("browser_navigate", {"session": "reused", "url": site.url("tabs_files/account.html")})
    who = await tools.call("browser_eval", {"session": "reused", "expression": "document.getElementById('who').textContent"})
    assert "Welcome back, ada" in who.text


async def test_a_page_tool_naming_a_session_that_is_not_open_is_refused_with_the_open_ones(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    assert not (await tools.call("browser_session_create", {"name": "admin"})).is_error
    typo = await tools.call("browser_navigate", {"session": "admni", "url": site.url("tabs_files/child.html")})
    assert typo.is_error and "No session named 'admni' is open (open: admin, default)" in typo.text
    assert "browser_session_create" in typo.text
    assert "admni" not in (await tools.call("browser_session_list", {})).text


async def test_a_destroyed_session_is_not_started_again_by_a_page_tool(tools):
    assert not (await tools.call("browser_session_create", {"name": "temp"})).is_error
    assert not (await tools.call("browser_session_destroy", {"name": "temp"})).is_error
    again = await tools.call("browser_snapshot", {"session": "temp"})
    assert again.is_error and "No session named 'temp' is open (open: none)" in again.text
    assert "temp" not in (await tools.call("browser_session_list", {})).text


async def test_named_sessions_start_on_first_use_when_the_setting_says_so(webhand, tools, monkeypatch, site):
    # Read at each call: set on the shared Webhand for this test (no Webhand of its own to launch).
    monkeypatch.setattr(webhand.settings, "create_named_sessions_implicitly", True)
    reply = await tools.call("browser_navigate", {"session": "scratch", "url": site.url("tabs_files/child.html")})
    assert not reply.is_error, reply.text
    assert "- scratch: " + site.url("tabs_files/child.html") in (await tools.call("browser_session_list", {})).text
