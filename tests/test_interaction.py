"""Acting on pages: each action on a local page, and what its reply says happened."""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest

from helpers import ok


async def open_page(tools, site, path: str) -> None:
    ok(await tools.call("browser_navigate", {"url": site.url(f"actions/{path}")}))


async def text_of(tools, selector: str) -> str:
    reply = ok(await tools.call("browser_eval", {"expression": f"document.querySelector({selector!r}).textContent"}))
    return json.loads(reply)


@pytest.fixture
def quick_tools(webhand, tools, monkeypatch):
    """A conversation whose actions give up on an unactionable element after 2 s, to keep error tests
    short: ``action_timeout`` is read at each action, so it is set on the shared Webhand for the test."""
    monkeypatch.setattr(webhand.settings, "action_timeout", 2.0)
    return tools


async def test_click_that_navigates_reports_the_new_url_and_title(tools, site):
    await open_page(tools, site, "nav.html")
    snapshot = ok(await tools.call("browser_snapshot", {}))
    link = re.search(r'link "Go to target" \[(e\d+)\]', snapshot).group(1)
    reply = ok(await tools.call("browser_click", {"ref": link}))
    assert f"Navigated to {site.url('actions/target.html')}" in reply
    assert "Title: Target" in reply


async def test_click_waits_for_a_slow_navigation_it_started_from_a_timer(tools, site):
    await open_page(tools, site, "nav.html")
    reply = ok(await tools.call("browser_click", {"selector": "#later"}))
    assert f"Navigated to {site.url('slow?ms=800')}" in reply
    assert "Title: Slow" in reply


async def test_click_on_a_link_waits_for_a_navigation_whose_server_answers_late(tools, site):
    # The server answers after the DOM's quiet window and its cap (dom_quiet_cap + 0.5 s): meanwhile
    # the browser holds every script sent to the page, so the wait is for the navigation, not the DOM.
    late = "slow?ms=2000"
    page = f'<title>Start</title><a id="late" href="/{late}">a slow page</a>'
    ok(await tools.call("browser_navigate", {"url": site.url(f"slow?ms=0&body={quote(page)}")}))
    reply = ok(await tools.call("browser_click", {"selector": "#late"}))
    assert f"Navigated to {site.url(late)}" in reply
    assert "Title: Slow" in reply


async def test_double_click(tools, site):
    await open_page(tools, site, "clicks.html")
    reply = ok(await tools.call("browser_click", {"selector": "#double", "double_click": True}))
    assert "Double-clicked" in reply
    assert await text_of(tools, "#status") == "double clicked"


async def test_click_with_modifier_keys_and_right_button(tools, site):
    await open_page(tools, site, "clicks.html")
    ok(await tools.call("browser_click", {"selector": "#mod", "modifiers": ["Shift", "Alt"]}))
    assert await text_of(tools, "#status") == "clicked with shift+alt"
    ok(await tools.call("browser_click", {"selector": "#menu", "button": "right"}))
    assert await text_of(tools, "#status") == "context menu"


async def test_slow_typing_sends_each_key_to_a_page_that_validates_per_key(tools, site):
    await open_page(tools, site, "typing.html")
    ok(await tools.call("browser_type", {"selector": "#pin", "text": "12a34", "slowly": True}))
    # The page refused the letter on its keydown and counted the four digits one by one.
    assert await text_of(tools, "#keys") == "4 keys, value 1234"


async def test_type_with_submit_presses_enter(tools, site):
    await open_page(tools, site, "typing.html")
    reply = ok(await tools.call("browser_type", {"selector": "#q", "text": "chromium", "submit": True}))
    assert "pressed Enter" in reply
    assert await text_of(tools, "#result") == "Searched for chromium"


async def test_typing_says_what_the_field_holds_when_the_page_refused_or_changed_the_text(tools, site):
    await open_page(tools, site, "field_reactions.html")

    async def typed(selector: str, text: str, **more: object) -> str:
        return ok(await tools.call("browser_type", {"selector": selector, "text": text, **more}))

    # What the field holds is said only when it is not what was typed.
    assert (await typed("#plain", "hello")).startswith("Typed 'hello' into '#plain'.")
    assert (await typed("#editor", "a note")).startswith("Typed 'a note' into '#editor'.")
    assert (await typed("#plain", " world", clear=False)).startswith("Typed ' world' into '#plain'.")
    for slowly in (False, True):
        assert (await typed("#refusing", "abc", slowly=slowly)).startswith(
            "Typed 'abc' into '#refusing', but the field is empty afterwards (the text was refused or removed).")
    assert (await typed("#refusing", "abc", submit=True)).startswith(
        "Typed 'abc' into '#refusing', but the field is empty afterwards (the text was refused or removed), "
        "then pressed Enter.")
    assert (await typed("#phone", "5551234567")).startswith(
        "Typed '5551234567' into '#phone', but the field holds '(555) 123-4567' afterwards.")
    assert (await typed("#short", "abcdef")).startswith("Typed 'abcdef' into '#short', but the field holds 'abc' afterwards.")
    # A password field's text is never quoted, even when the page changed it.
    reply = await typed("#password", "hunter2")
    assert reply.startswith("Typed 'hunter2' into '#password', but the field holds other text afterwards (7 characters).")
    assert "HUNTER2" not in reply


async def test_press_key_on_an_element_and_on_the_page(tools, site):
    await open_page(tools, site, "typing.html")
    ok(await tools.call("browser_type", {"selector": "#q", "text": "first"}))
    ok(await tools.call("browser_press_key", {"selector": "#q", "key": "Enter"}))
    assert await text_of(tools, "#result") == "Searched for first"
    ok(await tools.call("browser_press_key", {"key": "Control+A"}))  # on the focused search field
    ok(await tools.call("browser_press_key", {"key": "Backspace"}))
    ok(await tools.call("browser_press_key", {"key": "Enter"}))
    assert await text_of(tools, "#result") == "Searched for "


async def test_unknown_key_is_refused_with_examples(tools, site):
    await open_page(tools, site, "typing.html")
    reply = await tools.call("browser_press_key", {"key": "Enterr"})
    assert reply.is_error and "'Enterr' is not a key name" in reply.text and "Control+A" in reply.text


async def test_select_by_label_and_by_value(tools, site):
    await open_page(tools, site, "form.html")
    reply = ok(await tools.call("browser_select_option", {"selector": "#color", "values": ["Green"]}))
    assert "Selected 'Green'" in reply
    assert "color=g;" in await text_of(tools, "#state")
    ok(await tools.call("browser_select_option", {"selector": "#color", "values": ["b"]}))
    assert "color=b;" in await text_of(tools, "#state")
    ok(await tools.call("browser_select_option", {"selector": "#tags", "values": ["News", "tech"]}))
    assert "tags=news,tech;" in await text_of(tools, "#state")


async def test_select_names_the_options_when_one_is_missing(tools, site):
    await open_page(tools, site, "form.html")
    reply = await tools.call("browser_select_option", {"selector": "#color", "values": ["Purple"]})
    assert reply.is_error and "no option 'Purple'" in reply.text and '"Red" (value "r")' in reply.text


async def test_select_on_something_that_is_not_a_select(tools, site):
    await open_page(tools, site, "form.html")
    reply = await tools.call("browser_select_option", {"selector": "#name", "values": ["x"]})
    assert reply.is_error and "is not a select (it is input type=text)" in reply.text


async def test_check_and_uncheck(tools, site):
    await open_page(tools, site, "form.html")
    ok(await tools.call("browser_check", {"selector": "#terms"}))
    ok(await tools.call("browser_uncheck", {"selector": "#newsletter"}))
    state = await text_of(tools, "#state")
    assert "terms=on" in state and "newsletter=off" in state
    ok(await tools.call("browser_uncheck", {"selector": "#terms"}))
    assert "terms=off" in await text_of(tools, "#state")


async def test_drag_and_drop(tools, site):
    await open_page(tools, site, "drag.html")
    reply = ok(await tools.call("browser_drag", {"selector": "#card", "to_selector": "#bin"}))
    assert "Dragged '#card' onto '#bin'" in reply
    assert await text_of(tools, "#status") == "dropped card"


async def test_hover_focus_and_scroll(tools, site):
    await open_page(tools, site, "form.html")
    ok(await tools.call("browser_hover", {"selector": "#name"}))
    ok(await tools.call("browser_focus", {"selector": "#bio"}))
    assert json.loads(ok(await tools.call("browser_eval", {"expression": "document.activeElement.id"}))) == "bio"
    ok(await tools.call("browser_eval", {"expression": "document.body.style.height = '5000px'"}))
    reply = ok(await tools.call("browser_scroll", {"y": 700}))
    assert "y=700" in reply
    reply = ok(await tools.call("browser_scroll", {"selector": "#name"}))
    assert "into view" in reply


async def test_fill_form_fills_fields_of_every_kind_in_one_call(tools, site):
    await open_page(tools, site, "form.html")
    reply = ok(await tools.call("browser_fill_form", {"fields": [
        {"selector": "#name", "value": "Ada"},
        {"selector": "#bio", "value": "Counts things"},
        {"selector": "#color", "value": "Blue"},
        {"selector": "#tags", "value": ["Sport", "tech"]},
        {"selector": "#terms", "value": True},
        {"selector": "#newsletter", "value": False},
        {"selector": "#large", "value": True},
    ]}))
    assert reply.count("\n") >= 6 and "7. #large" not in reply  # one line per field, named
    assert await text_of(tools, "#state") == (
        "name=Ada; bio=Counts things; color=b; size=large; tags=sport,tech; terms=on; newsletter=off")


async def test_batch_stops_at_the_failing_step_and_says_which(quick_tools, site):
    await open_page(quick_tools, site, "form.html")
    reply = await quick_tools.call("browser_interact", {"steps": [
        {"action": "type", "selector": "#name", "text": "Ada"},
        {"action": "check", "selector": "#terms"},
        {"action": "click", "selector": "#save"},  # disabled
        {"action": "type", "selector": "#bio", "text": "never typed"},
        {"action": "select_option", "selector": "#color", "values": ["Red"]},
    ]})
    assert reply.is_error
    assert "1. Typed 'Ada' into '#name'." in reply.text and "2. '#terms' is now checked." in reply.text
    assert "Step 3 of 5 (click #save) failed" in reply.text and "disabled" in reply.text
    assert "Steps 4–5 did not run." in reply.text
    state = await text_of(quick_tools, "#state")
    assert "name=Ada" in state and "terms=on" in state and "bio=;" in state and "color=;" in state


async def test_batch_with_invalid_step_runs_nothing(tools, site):
    await open_page(tools, site, "form.html")
    reply = await tools.call("browser_interact", {"steps": [
        {"action": "type", "selector": "#name", "text": "Ada"},
        {"action": "click"},
    ]})
    assert reply.is_error and "Step 2 (click) has invalid arguments" in reply.text and "no step ran" in reply.text
    assert "name=;" in await text_of(tools, "#state")


async def test_covered_element_error_names_the_cover(quick_tools, site):
    await open_page(quick_tools, site, "covered.html")
    reply = await quick_tools.call("browser_click", {"selector": "#buy"})
    assert reply.is_error
    assert "covered by" in reply.text and 'id="cover"' in reply.text


async def test_disabled_element_error_says_disabled(quick_tools, site):
    await open_page(quick_tools, site, "form.html")
    reply = await quick_tools.call("browser_click", {"selector": "#save"})
    assert reply.is_error and "the element is disabled" in reply.text


async def test_missing_element_error_says_not_found(quick_tools, site):
    await open_page(quick_tools, site, "form.html")
    reply = await quick_tools.call("browser_click", {"selector": "#nothing-here"})
    assert reply.is_error and "No element matches the selector '#nothing-here'" in reply.text


async def test_action_waits_for_the_fetch_it_started(tools, site):
    await open_page(tools, site, "slowfetch.html?ms=600")
    reply = ok(await tools.call("browser_click", {"selector": "#load"}))
    # The reply was written after the response arrived and the page used it.
    assert "Title changed to: Fetched data-ready" in reply
    assert await text_of(tools, "#out") == "Loaded: data-ready"


async def test_failed_requests_are_reported(tools, site):
    await open_page(tools, site, "nav.html")
    reply = ok(await tools.call("browser_eval", {"expression": "document.querySelector('#go').href = '/status/404'; 1"}))
    reply = ok(await tools.call("browser_click", {"selector": "#go"}))
    assert f"Request failed: GET {site.url('status/404')} — HTTP 404" in reply


async def test_a_ref_inside_an_out_of_process_frame_takes_typing_and_clicks(tools, site):
    # The frame is on "localhost", another site than the page's 127.0.0.1: Chromium gives it its own process.
    await open_page(tools, site, "oopif.html")
    snapshot = ok(await tools.call("browser_snapshot", {}))
    name = re.search(r'textbox "Name" \[(f\d+e\d+)\]', snapshot).group(1)
    greet = re.search(r'button "Greet" \[(f\d+e\d+)\]', snapshot).group(1)
    ok(await tools.call("browser_type", {"ref": name, "text": "Ada"}))
    reply = ok(await tools.call("browser_click", {"ref": greet}))
    assert "status: Hello, Ada" in reply


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


async def test_missing_and_malformed_refs_fail_without_acting(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    await tools.call("browser_snapshot", {})
    for ref, expected in (("e999", "not on the current page"), ("button", "is not a ref"), ("f7e1", "frame is gone")):
        reply = await tools.call("browser_click", {"ref": ref})
        assert reply.is_error and expected in reply.text and "browser_snapshot" in reply.text, reply.text
