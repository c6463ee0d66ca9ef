"""Cookies, localStorage/sessionStorage, and a storage state carried from one conversation to another."""

from __future__ import annotations

import uuid


async def _js(tools, expression: str) -> str:
    reply = await tools.call("browser_eval", {"expression": expression})
    assert not reply.is_error, reply.text
    return reply.text


async def test_cookies_round_trip_by_domain(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    for args in ({"name": "theme", "value": "dark"},                        # the current page's host
                 {"name": "lang", "value": "en"},
                 {"name": "elsewhere", "value": "1", "domain": "localhost"}):
        reply = await tools.call("browser_cookies", {"action": "set", **args})
        assert not reply.is_error, reply.text
    assert "theme=dark" in await _js(tools, "document.cookie")  # the page sees what was set

    local = await tools.call("browser_cookies", {"action": "list", "domain": "localhost"})
    assert "elsewhere=1 (localhost/" in local.text and "theme" not in local.text

    got = await tools.call("browser_cookies", {"action": "get", "name": "theme"})
    assert "1 cookie:" in got.text and "theme=dark (127.0.0.1/; session)" in got.text

    deleted = await tools.call("browser_cookies", {"action": "delete", "name": "theme"})
    assert "Deleted 1 cookie theme" in deleted.text
    assert "No cookie named theme" in (await tools.call("browser_cookies", {"action": "get", "name": "theme"})).text

    cleared = await tools.call("browser_cookies", {"action": "clear", "domain": "127.0.0.1"})
    assert "Deleted 1 cookies for 127.0.0.1" in cleared.text
    left = (await tools.call("browser_cookies", {})).text
    assert "elsewhere=1" in left and "lang" not in left

    await tools.call("browser_cookies", {"action": "clear"})
    assert "No cookies." in (await tools.call("browser_cookies", {})).text


async def test_cookie_set_by_the_server_is_listed(tools, site):
    await tools.call("browser_navigate", {"url": site.url("set-cookie?visited=yes")})
    reply = await tools.call("browser_cookies", {"action": "get", "name": "visited"})
    assert "visited=yes (127.0.0.1/; session)" in reply.text


async def test_local_and_session_storage_round_trip(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    set_local = await tools.call("browser_storage", {"action": "set", "key": "cart", "value": "3 apples"})
    assert not set_local.is_error, set_local.text
    assert f"localStorage of {site.url('')[:-1]}" in set_local.text
    await tools.call("browser_storage", {"area": "session", "action": "set", "key": "step", "value": "2"})
    assert "3 apples" in await _js(tools, "localStorage.getItem('cart')")
    assert "null" in await _js(tools, "localStorage.getItem('step')")  # the areas stay apart

    got = await tools.call("browser_storage", {"action": "get", "key": "cart"})
    assert "'cart' in localStorage" in got.text and "'3 apples'" in got.text
    listed = await tools.call("browser_storage", {"area": "session"})
    assert "has 1 item" in listed.text and '"step": "2"' in listed.text

    await tools.call("browser_storage", {"action": "delete", "key": "cart"})
    assert "not set" in (await tools.call("browser_storage", {"action": "get", "key": "cart"})).text
    await tools.call("browser_storage", {"area": "session", "action": "clear"})
    assert "has 0 items" in (await tools.call("browser_storage", {"area": "session"})).text


async def test_storage_on_a_blank_page_says_to_navigate(tools):
    reply = await tools.call("browser_storage", {"action": "get"})
    assert reply.is_error and "Navigate to a page of the site first" in reply.text


async def test_storage_state_saved_in_a_shared_root_logs_in_another_conversation(tools, webhand, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/account.html")})
    await tools.call("browser_click", {"selector": "#login"})
    assert "Welcome back, ada" in await _js(tools, "document.getElementById('who').textContent")
    state_file = webhand.settings.roots[0] / f"state-{uuid.uuid4().hex[:6]}.json"
    saved = await tools.call("browser_storage_state", {"action": "save", "path": str(state_file)})
    assert not saved.is_error, saved.text
    assert "1 cookie and the storage of 1 origin" in saved.text and state_file.is_file()

    other = webhand.conversation(f"test-other-{uuid.uuid4().hex[:8]}")
    try:
        await other.call("browser_navigate", {"url": site.url("tabs_files/account.html")})
        assert "Not logged in" in await _js(other, "document.getElementById('who').textContent")

        loaded = await other.call("browser_storage_state", {"action": "load", "path": str(state_file)})
        assert not loaded.is_error, loaded.text
        await other.call("browser_navigate", {"url": site.url("tabs_files/account.html")})
        assert "Welcome back, ada" in await _js(other, "document.getElementById('who').textContent")
    finally:
        await webhand.end_conversation(other.conversation_id)


async def test_storage_state_outside_the_roots_is_refused(tools, tmp_path):
    reply = await tools.call("browser_storage_state", {"action": "save", "path": str(tmp_path / "state.json")})
    assert reply.is_error and "outside the folders webhand may use" in reply.text
    assert not (tmp_path / "state.json").exists()
