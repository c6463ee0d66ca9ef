"""The first slice end to end: navigate, snapshot, type, click, read the result."""

from __future__ import annotations

import re


async def test_login_form_round_trip(tools, site):
    reply = await tools.call("browser_navigate", {"url": site.url("login.html")})
    assert not reply.is_error, reply.text
    assert "Title: Sign in" in reply.text and "(HTTP 200)" in reply.text

    snapshot = (await tools.call("browser_snapshot", {})).text
    user = re.search(r'textbox "User name" \[(e\d+)\]', snapshot).group(1)
    password = re.search(r'textbox "Password" \[(e\d+)\]', snapshot).group(1)
    button = re.search(r'button "Sign in" \[(e\d+)\]', snapshot).group(1)

    assert not (await tools.call("browser_type", {"ref": user, "text": "ada"})).is_error
    assert not (await tools.call("browser_type", {"ref": password, "text": "secret"})).is_error
    clicked = await tools.call("browser_click", {"ref": button})
    assert not clicked.is_error, clicked.text

    after = (await tools.call("browser_snapshot", {})).text
    assert 'status: Welcome, ada!' in after
