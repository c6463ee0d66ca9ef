"""browser_wait_for: each condition, and each condition's timeout.

wait.html asks the server for data on load (the server answers after ?ms=), then shows
"Data ready", removes "Loading data", changes the URL to ?state=done and sets window.dataReady.
"""

from __future__ import annotations

import json

import pytest

from helpers import ok


async def open_waiting_page(tools, site, ms: int = 1200) -> None:
    # Navigating until "load" would also wait for the page's own request; these tests need the
    # data still on its way when browser_wait_for starts.
    ok(await tools.call("browser_navigate", {"url": site.url(f"actions/wait.html?ms={ms}"),
                                             "wait_until": "domcontentloaded"}))


async def data_shown(tools) -> bool:
    return json.loads(ok(await tools.call("browser_eval", {"expression": "!!window.dataReady"})))


@pytest.mark.parametrize("condition", [
    {"text": "Data ready"},
    {"text_gone": "Loading data"},
    {"selector": "#ready"},
    {"selector": "#spinner", "state": "hidden"},
    {"url": "state=done"},
    {"url": "*/actions/wait.html?state=*"},
    {"javascript": "window.dataReady === true"},
    {"network_idle": True},
])
async def test_wait_until_the_condition_holds(tools, site, condition):
    await open_waiting_page(tools, site)
    assert not await data_shown(tools)  # the data is still on its way
    reply = ok(await tools.call("browser_wait_for", {**condition, "timeout": 10}))
    assert "Waited for" in reply or "The URL matches" in reply
    assert await data_shown(tools)


@pytest.mark.parametrize("condition, said", [
    ({"text": "Never shown"}, "the text 'Never shown' to appear"),
    ({"text_gone": "Loading data"}, "the text 'Loading data' to disappear"),
    ({"selector": "#nothing"}, "an element matching '#nothing' to be visible"),
    ({"selector": "#spinner", "state": "hidden"}, "elements matching '#spinner' to be hidden or gone"),
    ({"url": "never-there"}, "the URL to match 'never-there'"),
    ({"javascript": "window.dataReady === true"}, "the condition 'window.dataReady === true' to be true"),
    ({"network_idle": True}, "the network to be idle"),
])
async def test_wait_times_out_and_says_what_did_not_happen(tools, site, condition, said):
    await open_waiting_page(tools, site, ms=5000)  # the data comes long after the timeout
    reply = await tools.call("browser_wait_for", {**condition, "timeout": 0.5})
    assert reply.is_error
    assert f"Waited 0.5 s for {said}, but it did not happen." in reply.text


async def test_network_idle_timeout_names_the_busy_request(tools, site):
    await open_waiting_page(tools, site, ms=5000)
    reply = await tools.call("browser_wait_for", {"network_idle": True, "timeout": 0.5})
    assert "Still loading: " + site.url("slow?ms=5000&body=ok") in reply.text


async def test_wait_for_time(tools, site):
    await open_waiting_page(tools, site)
    assert "Waited 0.2 s." in ok(await tools.call("browser_wait_for", {"time": 0.2}))


async def test_exactly_one_condition(tools):
    reply = await tools.call("browser_wait_for", {"text": "a", "selector": "#b"})
    assert reply.is_error and "give exactly one condition" in reply.text and "(got text, selector)" in reply.text


async def test_a_condition_that_throws_says_so(tools, site):
    await open_waiting_page(tools, site)
    reply = await tools.call("browser_wait_for", {"javascript": "nothing.here", "timeout": 2})
    assert reply.is_error and "threw" in reply.text and "nothing" in reply.text
