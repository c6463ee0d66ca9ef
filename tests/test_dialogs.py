"""JavaScript dialogs are reported by the action that opened them and answered with browser_handle_dialog."""

from __future__ import annotations


async def _page_says(tools) -> str:
    reply = await tools.call("browser_eval", {"expression": "document.getElementById('out').textContent"})
    assert not reply.is_error, reply.text
    return reply.text


async def _open(tools, site, page: str) -> None:
    reply = await tools.call("browser_navigate", {"url": site.url(f"tabs_files/{page}")})
    assert not reply.is_error, reply.text


async def test_alert_is_reported_and_closed(tools, site):
    await _open(tools, site, "dialogs.html")
    clicked = await tools.call("browser_click", {"selector": "#alert"})
    assert not clicked.is_error, clicked.text
    assert "An alert dialog in tab 0: 'Saved!'" in clicked.text and "browser_handle_dialog" in clicked.text

    answered = await tools.call("browser_handle_dialog", {"accept": True})
    assert not answered.is_error, answered.text
    assert "Closed the alert dialog" in answered.text
    assert "after alert" in await _page_says(tools)


async def test_what_the_answer_does_is_in_its_own_reply(tools, site):
    # The page goes on once confirm() returns: its "deleted" came in the next call's reply (as if
    # that call had done it), not in the answer's.
    await _open(tools, site, "dialogs.html")
    assert "nothing yet" in (await tools.call("browser_snapshot", {})).text
    assert "confirm dialog" in (await tools.call("browser_click", {"selector": "#confirm"})).text
    answered = await tools.call("browser_handle_dialog", {"accept": True})
    assert not answered.is_error, answered.text
    assert "Accepted the confirm dialog" in answered.text and "deleted" in answered.text, answered.text
    later = await tools.call("browser_click", {"selector": "h1, body"})
    assert "deleted" not in later.text, later.text


async def test_confirm_cancel_is_what_the_page_gets(tools, site):
    await _open(tools, site, "dialogs.html")
    clicked = await tools.call("browser_click", {"selector": "#confirm"})
    assert "confirm dialog in tab 0: 'Delete it?'" in clicked.text

    answered = await tools.call("browser_handle_dialog", {"accept": False})
    assert "Dismissed the confirm dialog" in answered.text
    assert "kept" in await _page_says(tools)


async def test_prompt_answer_reaches_the_page(tools, site):
    await _open(tools, site, "dialogs.html")
    clicked = await tools.call("browser_click", {"selector": "#prompt"})
    assert "prompt dialog in tab 0: 'Your name?' (default answer 'anonymous')" in clicked.text

    answered = await tools.call("browser_handle_dialog", {"accept": True, "prompt_text": "Ada"})
    assert "Accepted the prompt dialog" in answered.text and "'Ada'" in answered.text
    assert "name=Ada" in await _page_says(tools)


async def test_page_tools_are_refused_while_a_dialog_is_open(tools, site):
    await _open(tools, site, "dialogs.html")
    await tools.call("browser_click", {"selector": "#confirm"})

    for name, args in (("browser_eval", {"expression": "1 + 1"}), ("browser_snapshot", {}),
                       ("browser_navigate", {"url": site.url("tabs_files/child.html")})):
        refused = await tools.call(name, args)
        assert refused.is_error, f"{name} ran while a dialog was open: {refused.text}"
        assert "confirm dialog in tab 0: 'Delete it?'" in refused.text and "browser_handle_dialog" in refused.text

    assert not (await tools.call("browser_handle_dialog", {"accept": True})).is_error
    assert "deleted" in await _page_says(tools)


async def test_handle_dialog_without_a_dialog_says_so(tools, site):
    await _open(tools, site, "dialogs.html")
    reply = await tools.call("browser_handle_dialog", {"accept": True})
    assert reply.is_error and "No JavaScript dialog is open" in reply.text


async def test_beforeunload_asks_before_leaving_and_accept_leaves(tools, site):
    await _open(tools, site, "leave.html")
    # Chromium only asks after the user interacted with the page.
    assert not (await tools.call("browser_type", {"selector": "#draft", "text": "half-written"})).is_error

    leaving = await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    assert "beforeunload dialog in tab 0" in leaving.text and "accept true to leave the page" in leaving.text

    stay = await tools.call("browser_handle_dialog", {"accept": False})
    assert "Stayed on the page" in stay.text
    assert "leave.html" in (await tools.call("browser_eval", {"expression": "location.href"})).text

    leaving = await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    assert "beforeunload dialog" in leaving.text
    left = await tools.call("browser_handle_dialog", {"accept": True})
    assert "Left the page" in left.text and "Navigated to" in left.text and "child.html" in left.text, left.text
    assert "Child page" in (await tools.call("browser_snapshot", {})).text


async def test_typing_into_a_field_that_cancels_presses_replaces_its_text_and_counts_as_interaction(tools, site):
    """Firefox's fill presses on the field first (a user's interaction, so that leaving asks): a page
    that cancels the press still gets the whole text in place of its own, and leaving still asks."""
    await _open(tools, site, "leave.html")
    assert not (await tools.call("browser_eval", {"expression": """
        const field = document.querySelector('#draft');
        for (const kind of ['pointerdown', 'mousedown']) field.addEventListener(kind, e => e.preventDefault());
        field.value = 'old text here'; true"""})).is_error
    assert not (await tools.call("browser_type", {"selector": "#draft", "text": "new"})).is_error
    value = await tools.call("browser_eval", {"expression": "document.querySelector('#draft').value"})
    assert '"new"' in value.text, value.text
    leaving = await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    assert "beforeunload dialog in tab 0" in leaving.text, leaving.text
    assert "Left the page" in (await tools.call("browser_handle_dialog", {"accept": True})).text


async def test_closing_a_tab_does_not_ask_before_unload(tools, site):
    await _open(tools, site, "leave.html")
    await tools.call("browser_type", {"selector": "#draft", "text": "draft"})
    opened = await tools.call("browser_tabs", {"action": "open"})
    assert not opened.is_error, opened.text

    closed = await tools.call("browser_tabs", {"action": "close", "index": 0})
    assert not closed.is_error, closed.text
    assert "Closed tab 0" in closed.text and "dialog" not in closed.text
    assert "0:" not in closed.text.split("Tabs")[1]


async def test_javascript_that_opens_a_dialog_returns_with_it_instead_of_hanging(tools, site):
    await _open(tools, site, "dialogs.html")
    reply = await tools.call("browser_eval", {"expression": "alert('from script'); 42"})
    assert "An alert dialog in tab 0: 'from script' opened" in reply.text
    assert not (await tools.call("browser_handle_dialog", {"accept": True})).is_error
    assert "2" in (await tools.call("browser_eval", {"expression": "1 + 1"})).text


async def test_closing_the_tab_of_an_open_dialog_frees_the_session(tools, site):
    await _open(tools, site, "dialogs.html")
    await tools.call("browser_click", {"selector": "#confirm"})
    closed = await tools.call("browser_tabs", {"action": "close", "index": 0})
    assert not closed.is_error, closed.text
    reply = await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    assert not reply.is_error and "Child page" in reply.text


async def test_browser_close_works_while_a_dialog_is_open(tools, site):
    await _open(tools, site, "dialogs.html")
    await tools.call("browser_click", {"selector": "#prompt"})
    closed = await tools.call("browser_close", {})
    assert not closed.is_error and "Closed the default session" in closed.text
    fresh = await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    assert not fresh.is_error and "Child page" in fresh.text
