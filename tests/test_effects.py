"""An action's reply waits for the work it set off: a debounced save, a request or a WebSocket
message that starts a little after the click, and what their answers change. When nothing changed,
the reply says what the wait saw, not only that two snapshots are alike.

The pages are in tests/pages/effects/; each test reads the reply the model reads.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.server import ServerConnection, serve

from helpers import ok, ref_of


async def snapshot(tools, url: str) -> str:
    ok(await tools.call("browser_navigate", {"url": url}))
    return ok(await tools.call("browser_snapshot", {}))


@pytest.mark.parametrize("slowly", [False, True])
async def test_a_debounced_save_has_run_when_typing_replies(tools, site, slowly):
    # The editor copies its text into the form 250 ms after the last key; Publish, clicked at once
    # after the typing's reply, sends what was typed (it used to publish an empty page). The page
    # also shows "Draft saved" then: the typing's reply shows it (a slow machine's slow replies
    # could hide the race from the click alone).
    shot = await snapshot(tools, site.url("effects/debounce.html"))
    typed = ok(await tools.call("browser_type", {"ref": ref_of(shot, 'textbox "Body"'), "text": "We open at nine.",
                                                 "slowly": slowly}))
    assert "Draft saved" in typed, typed
    published = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Publish"')}))
    assert "Published: We open at nine." in published, published
    saved = await tools.call("browser_eval", {"expression": "window.published"})
    assert json.loads(ok(saved)) == "We open at nine."


async def test_a_key_pressed_on_the_page_waits_for_the_save_it_set_off(tools, site):
    # A key press on the page runs no script of ours before its key: the page's watch still
    # starts first, so the debounced save it sets off is in the reply.
    shot = await snapshot(tools, site.url("effects/debounce.html"))
    ok(await tools.call("browser_click", {"ref": ref_of(shot, 'textbox "Body"')}))
    pressed = ok(await tools.call("browser_press_key", {"key": "x"}))
    assert "Draft saved" in pressed, pressed


@pytest.mark.parametrize("later_ms", [120, 300])
async def test_a_request_started_after_the_click_is_waited_for(tools, site, later_ms):
    shot = await snapshot(tools, site.url(f"effects/later.html?ms={later_ms}"))
    reply = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Place order"')}))
    assert "Order placed: 8 x Orchid" in reply, reply
    assert "No change seen" not in reply and "did not change" not in reply


@pytest.fixture(params=["answer", "receipt first"])
async def order_socket(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    """A WebSocket server on 127.0.0.1 that confirms each order 100 ms after it comes; with "receipt
    first" it sends a receipt ('ack') at once, as Streamlit says a run started before its output."""
    async def confirm(connection: ServerConnection) -> None:
        async for message in connection:
            if request.param == "receipt first":
                await connection.send("ack")
            await asyncio.sleep(0.1)  # the server's own pace, as a real backend's
            await connection.send(str(message))

    async with serve(confirm, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/"


@pytest.mark.parametrize("later_ms", [0, 300])
async def test_a_websocket_round_trip_is_waited_for(tools, site, order_socket, later_ms):
    shot = await snapshot(tools, site.url(f"effects/later.html?ms={later_ms}&ws={order_socket}"))
    ok(await tools.call("browser_wait_for", {"javascript": "window.WebSocket && document.readyState === 'complete'"}))
    reply = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Send by WebSocket"')}))
    assert "Order placed: 8 x Orchid" in reply, reply


async def test_a_click_that_changes_nothing_says_so(tools, site):
    shot = await snapshot(tools, site.url("effects/later.html"))
    reply = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Do nothing"')}))
    assert "No change seen after the click, and nothing it started is still pending." in reply, reply
    assert "did not change" not in reply


async def test_work_still_going_at_the_cap_is_named(tools, site):
    shot = await snapshot(tools, site.url("effects/later.html"))
    reply = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Keep busy"')}))
    assert re.search(r"Still pending after 1(\.\d)? s: a 100 ms timer", reply), reply
    assert re.search(r"No change seen within 1(\.\d)? s of the click\.", reply), reply


async def test_a_longer_timer_the_click_set_is_named_not_denied(tools, site):
    # The settle waits for timers of up to 500 ms; a 900 ms one used to be invisible, and the reply
    # said "nothing it started is still pending" while it was. It is named, and can be waited for.
    shot = await snapshot(tools, site.url("effects/later.html"))
    reply = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Update in 900 ms"')}))
    if "Updated late" not in reply:  # a slow machine's settle may outlast the timer: then it is a change
        assert "Not waited for: a 900 ms timer set by the click is still scheduled (browser_wait_for" in reply, reply
        assert "nothing it started is still pending" not in reply, reply
        waited = ok(await tools.call("browser_wait_for", {"text": "Updated late"}))
        assert "Updated late" in waited, waited


async def test_failed_requests_to_another_host_are_one_line(tools, site, other_site):
    other = other_site.url("").rstrip("/")
    reply = ok(await tools.call("browser_navigate", {"url": site.url(f"effects/other_hosts.html?other={other}")}))
    host = other.removeprefix("http://")
    assert f"3 requests to other hosts failed: {host} (3, " in reply, reply  # the reason: HTTP 404, or ORB's block
    assert "Request failed" not in reply


async def test_worker_scripts_the_server_answered_are_not_still_loading(tools, site):
    # The page starts a dedicated worker, a shared worker and a service worker as it loads: the
    # browser reports their scripts' answers to the workers, not to the page, and every navigate
    # used to wait the request cap for them and reply "Still loading" (on Chromium).
    opened = ok(await tools.call("browser_navigate", {"url": site.url("effects/workers.html")}))
    assert "Still loading" not in opened, opened
    shot = ok(await tools.call("browser_snapshot", {}))
    clicked = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Open editor"')}))
    assert "Editor ready" in clicked and "Still loading" not in clicked, clicked
    again = ok(await tools.call("browser_navigate", {"url": site.url("effects/workers.html?again")}))
    assert "Still loading" not in again, again  # now under the service worker's control
    # Nothing waits on them, network idle included (it used to run out its timeout here).
    ok(await tools.call("browser_wait_for", {"network_idle": True, "timeout": 5}))


async def test_an_apps_own_404_probes_are_context_not_the_headline(tools, site):
    # The app asks "who is signed in?" as it loads and "is the name free?" before a rename; both
    # are answered 404 and both are expected. They used to open the reply as "Request failed: …",
    # so a rename that worked read as one that failed.
    opened = ok(await tools.call("browser_navigate", {"url": site.url("effects/probes.html")}))
    assert opened.startswith("Opened ") and "Request failed" not in opened, opened
    assert opened.splitlines()[-1] == "1 request failed, the app may expect that: GET /status/404?users/current 404.", opened
    shot = ok(await tools.call("browser_snapshot", {}))
    renamed = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Rename to Baseline"')}))
    lines = renamed.splitlines()
    assert "Request failed" not in renamed and lines[0].startswith("Clicked"), renamed  # the outcome first
    assert "Baseline" in "\n".join(lines[1:-1]), renamed
    assert lines[-1] == ("1 request failed, the app may expect that: "
                         "GET /status/404?experiments/get-by-name=Baseline 404."), renamed


async def test_an_in_page_toggle_is_no_new_page_when_the_last_snapshot_was_of_another(tools, site):
    # The model looked at one page, opened a long guide and read it only through browser_find,
    # then clicked its in-page toggle: the reply used to say "A new page (old refs no longer work)"
    # and send the guide's whole snapshot, though the click loaded nothing and the ref still worked.
    await snapshot(tools, site.url("effects/later.html"))
    ok(await tools.call("browser_navigate", {"url": site.url("effects/guide.html")}))
    found = ok(await tools.call("browser_find", {"query": "Show example"}))
    toggle = ref_of(found, 'button "Show example"')
    clicked = ok(await tools.call("browser_click", {"ref": toggle}))
    assert "A new page" not in clicked and "Section 100" not in clicked, clicked
    assert "Its changes are not listed: no snapshot of this page was taken before the action" in clicked, clicked
    again = ok(await tools.call("browser_click", {"ref": toggle}))  # the same ref still works; now a diff
    assert "A new page" not in again and "webhand navigate https://example.org" in again, again
    # A click that does load a new document still says so.
    ok(await tools.call("browser_eval", {"expression": "document.body.insertAdjacentHTML('afterbegin', "
                                                       "'<a id=\"away\" href=\"later.html\">Away</a>'); 1"}))
    away = ok(await tools.call("browser_click", {"selector": "#away"}))
    assert "A new page (old refs no longer work)" in away or "Navigated to" in away, away


async def test_a_hash_route_replies_with_the_new_view(tools, site):
    # Going from one view of a hash-routed app to another loads no page: the app fetches the
    # view's data, renders it and sets the title. The reply used to give the old view's title.
    ok(await tools.call("browser_navigate", {"url": site.url("effects/hashapp.html#/experiments")}))
    ok(await tools.call("browser_wait_for", {"text": "Experiment 2"}))
    runs = site.url("effects/hashapp.html#/experiments/1/runs")
    moved = ok(await tools.call("browser_navigate", {"url": runs}))
    assert f"Opened {runs}" in moved and "Title: Runs of Experiment 1 · Tracker" in moved, moved
    # Back within the app: the same document again, the old view re-rendered after its fetch.
    back = ok(await tools.call("browser_back", {}))
    assert "Title changed to: Experiments · Tracker" in back or "Title: Experiments · Tracker" in back, back


async def test_a_menu_that_closes_with_an_exit_animation_is_gone_in_its_clicks_reply(tools, site):
    # The item's click starts the menu's 300 ms exit animation, at whose end the menu is removed:
    # the "- menuitem" lines used to come in the next, unrelated call's reply.
    shot = await snapshot(tools, site.url("effects/menu.html"))
    opened = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Run actions"')}))
    chosen = ok(await tools.call("browser_click", {"ref": ref_of(opened, 'menuitem "Delete run"')}))
    assert "Delete run chosen" in chosen and '- menuitem "Delete run"' in chosen, chosen
    later = ok(await tools.call("browser_press_key", {"key": "Shift"}))
    assert "menuitem" not in later, later


async def test_an_endless_request_loop_is_named(tools, site):
    # A click that starts polling for ever: the reply names the request still going at the cap
    # (Firefox's replies used to leave it out).
    shot = await snapshot(tools, site.url("effects/later.html"))
    reply = ok(await tools.call("browser_click", {"ref": ref_of(shot, 'button "Poll forever"')}))

    assert "/slow?ms=100&body=tick" in reply and "nothing it started is still pending" not in reply, reply


async def test_webhand_never_draws_on_the_pages_own_random_numbers(tools, site):
    """A page that seeded Math.random (a game, a test harness like MiniWoB) must draw the same numbers
    whether or not webhand watches it: navigating, reading and acting call nothing of the page's."""
    await tools.call("browser_navigate", {"url": site.url("actions/form.html")})
    ok(await tools.call("browser_eval", {"expression": "(() => { window.__draws = 0; const draw = Math.random; "
                                                       "Math.random = function () { window.__draws++; "
                                                       "return draw.apply(this, arguments); }; return 1; })()"}))
    shot = ok(await tools.call("browser_snapshot", {}))
    box = re.search(r'textbox "[^"]*" \[(e\d+)\]', shot).group(1)
    ok(await tools.call("browser_type", {"ref": box, "text": "ada"}))
    ok(await tools.call("browser_click", {"ref": box}))
    ok(await tools.call("browser_press_key", {"key": "Tab"}))
    drawn = await tools.call("browser_eval", {"expression": "window.__draws"})
    assert drawn.data == {"result": 0}, drawn.text
