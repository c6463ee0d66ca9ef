"""Tabs: those the page opens are tracked and reported; list, open, focus and close."""

from __future__ import annotations

import pytest


async def _open_opener(tools, site) -> None:
    reply = await tools.call("browser_navigate", {"url": site.url("tabs_files/tabs.html")})
    assert not reply.is_error, reply.text


async def test_a_target_blank_link_opens_a_tab_that_is_reported(tools, site):
    await _open_opener(tools, site)
    clicked = await tools.call("browser_click", {"selector": "#blank-link"})
    assert not clicked.is_error, clicked.text
    assert "Opened tab 1" in clicked.text and "browser_tabs" in clicked.text

    listed = await tools.call("browser_tabs", {"action": "list"})
    assert "Tabs (2" in listed.text
    assert "* 0: Tab opener" in listed.text  # the opener stays current
    assert "- 1: Child page — " + site.url("tabs_files/child.html") in listed.text


async def test_window_open_opens_a_tab_that_is_reported(tools, site):
    await _open_opener(tools, site)
    clicked = await tools.call("browser_click", {"selector": "#window-open"})
    assert "Opened tab 1" in clicked.text, clicked.text
    listed = await tools.call("browser_tabs", {})
    assert "child.html?from=script" in listed.text


async def test_open_focus_and_close(tools, site):
    await _open_opener(tools, site)
    opened = await tools.call("browser_tabs", {"action": "open", "url": site.url("tabs_files/child.html")})
    assert not opened.is_error, opened.text
    assert "Opened tab 1 with " + site.url("tabs_files/child.html") in opened.text
    assert "* 1: Child page" in opened.text
    # Page tools now act on the new tab.
    assert "Child page" in (await tools.call("browser_snapshot", {})).text

    focused = await tools.call("browser_tabs", {"action": "focus", "index": 0})
    assert "Tab 0 is now the current tab" in focused.text and "* 0: Tab opener" in focused.text
    assert "Tab opener" in (await tools.call("browser_snapshot", {})).text

    closed = await tools.call("browser_tabs", {"action": "close", "index": 1})
    assert "Closed tab 1" in closed.text and "Tabs (1" in closed.text and "Child page" not in closed.text

    # Closing the current tab makes the newest remaining (or a fresh blank one) current.
    closed = await tools.call("browser_tabs", {"action": "close"})
    assert "Closed tab 0" in closed.text and "Tabs (1" in closed.text and "about:blank" in closed.text


async def test_focus_of_a_tab_that_does_not_exist_names_the_open_ones(tools, site):
    await _open_opener(tools, site)
    reply = await tools.call("browser_tabs", {"action": "focus", "index": 7})
    assert reply.is_error and "There is no open tab 7 (open tabs: 0)" in reply.text
    missing = await tools.call("browser_tabs", {"action": "focus"})
    assert missing.is_error and "give its `index`" in missing.text


async def test_tab_numbers_are_never_reused(tools, site):
    await _open_opener(tools, site)
    await tools.call("browser_tabs", {"action": "open"})
    await tools.call("browser_tabs", {"action": "close", "index": 1})
    reopened = await tools.call("browser_tabs", {"action": "open"})
    assert "Opened tab 2" in reopened.text


@pytest.mark.one_driver("the tab count and its limit are kept by the session, above the Driver; tabs a page opens "
                        "are tracked on every driver by the tests above")
async def test_tabs_past_max_tabs_are_refused_or_closed_with_the_reason(webhand, tools, site, monkeypatch):
    monkeypatch.setattr(webhand.settings, "max_tabs", 3)
    await _open_opener(tools, site)
    assert not (await tools.call("browser_tabs", {"action": "open"})).is_error
    assert not (await tools.call("browser_tabs", {"action": "focus", "index": 0})).is_error
    fits = await tools.call("browser_click", {"selector": "#window-open"})
    assert "Opened tab 2" in fits.text and "max_tabs" not in fits.text, fits.text
    # A popup past the limit (Chromium lets a page open one per click) is closed, and the reply says so.
    past = await tools.call("browser_click", {"selector": "#window-open"})
    assert not past.is_error, past.text
    assert "max_tabs (3)" in past.text and "closed the newest: tab 3 (" in past.text, past.text
    assert "browser_tabs action=close" in past.text and "Opened tab 3" not in past.text
    listed = await tools.call("browser_tabs", {})
    assert "Tabs (3" in listed.text and "2: Child page" in listed.text and "3:" not in listed.text
    refused = await tools.call("browser_tabs", {"action": "open", "url": site.url("tabs_files/child.html")})
    assert refused.is_error and "3 tabs are open" in refused.text and "max_tabs" in refused.text
    assert "browser_tabs action=close" in refused.text
