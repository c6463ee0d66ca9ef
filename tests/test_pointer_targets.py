"""Where a click lands: elements scrolled away inside list boxes, boxes and frames are scrolled into
view first; an option is chosen the way a click chooses it; "covered by" only for something that
is not part of the element's own widget, with advice that fits what covers it."""

from __future__ import annotations

import json
import re

from helpers import ok
from test_interaction import open_page


async def snapshot_refs(tools) -> dict[str, str]:
    """Each line's quoted name → its ref, from a fresh snapshot."""
    snapshot = ok(await tools.call("browser_snapshot", {}))
    return {name: ref for name, ref in re.findall(r'"([^"]+)" \[(f?\d*e\d+)\]', snapshot)}


async def page_value(tools, expression: str):
    return json.loads(ok(await tools.call("browser_eval", {"expression": expression})))


async def test_clicking_an_option_far_down_a_list_box_selects_it_as_a_click_does(tools, site):
    # 40 options, 6 shown: option 34 is scrolled away inside the list box itself.
    await open_page(tools, site, "listbox.html")
    refs = await snapshot_refs(tools)
    reply = ok(await tools.call("browser_click", {"ref": refs["Can change permission 34"]}))
    assert f'option "Can change permission 34" [{refs["Can change permission 34"]}]: not selected → selected' in reply
    assert "status: perms = p34" in reply
    assert await page_value(tools, "[...document.querySelector('#perms').selectedOptions].map(o => o.value)") == ["p34"]
    assert await page_value(tools, "document.querySelector('#events').textContent") == "events: input:perms change:perms"

    # Control adds to the selection; a plain click replaces it.
    reply = ok(await tools.call("browser_click", {"ref": refs["Can change permission 36"], "modifiers": ["Control"]}))
    assert "status: perms = p34,p36" in reply
    reply = ok(await tools.call("browser_click", {"ref": refs["Can change permission 2"]}))
    assert "status: perms = p2" in reply
    assert await page_value(tools, "[...document.querySelector('#perms').selectedOptions].map(o => o.value)") == ["p2"]


async def test_clicking_an_option_of_a_drop_down_chooses_it(tools, site):
    # The browser draws a drop-down's options itself (a snapshot shows only the value): the click chooses.
    await open_page(tools, site, "listbox.html")
    await snapshot_refs(tools)
    reply = ok(await tools.call("browser_click", {"selector": "#size option[value=m]"}))
    assert 'combobox "Size"' in reply and '→ "Medium"' in reply
    assert "status: size = m" in reply
    assert await page_value(tools, "document.querySelector('#events').textContent") == "events: input:size change:size"


async def test_an_option_scrolled_away_inside_boxes_scrolled_away_inside_boxes(tools, site):
    await open_page(tools, site, "nested_scroll.html")
    refs = await snapshot_refs(tools)
    reply = ok(await tools.call("browser_click", {"ref": refs["Fruit 12"]}))
    assert f'option "Fruit 12" [{refs["Fruit 12"]}]: not selected → selected' in reply
    assert "status: fruit = f12" in reply
    assert await page_value(tools, "[...document.querySelector('#fruit').selectedOptions].map(o => o.value)") == ["f12"]


async def test_a_button_far_down_a_frame_of_another_site_far_down_the_page(tools, site):
    # The frame is below the fold of the page, the button below the fold of the frame; the frame,
    # of another site, draws nothing while out of view.
    await open_page(tools, site, "nested_scroll.html")
    refs = await snapshot_refs(tools)
    button = refs["Far button"]
    assert button.startswith("f")
    reply = ok(await tools.call("browser_click", {"ref": button}))
    assert f'button "Pressed" [{button}]' in reply


async def test_a_slider_thumb_under_its_own_track_takes_the_click(tools, site):
    await open_page(tools, site, "slider.html")
    refs = await snapshot_refs(tools)
    # The track is drawn over the thumb: the click lands on the track at the thumb's place.
    reply = ok(await tools.call("browser_click", {"ref": refs["Volume"]}))
    assert "covered" not in reply
    assert "status: Volume pressed at 50" in reply
    # A range slider's thumbs let the pointer through to the slider; the other thumb is its own too.
    reply = ok(await tools.call("browser_click", {"ref": refs["Highest price"]}))
    assert "status: Highest price pressed at 80" in reply
    reply = ok(await tools.call("browser_press_key", {"ref": refs["Volume"], "key": "ArrowRight"}))
    assert "status: Volume set to 51" in reply


async def test_a_modal_overlay_is_a_cover_and_the_advice_is_to_close_it(tools, site):
    await open_page(tools, site, "modal.html")
    refs = await snapshot_refs(tools)
    reply = await tools.call("browser_click", {"ref": refs["Delete account"], "timeout": 2})
    assert reply.is_error
    assert 'covered by a dialog or overlay, <div id="backdrop"' in reply.text
    assert "Close it first" in reply.text
    assert await page_value(tools, "document.querySelector('#state').textContent") == "nothing deleted"

    ok(await tools.call("browser_click", {"selector": "#cancel"}))
    await snapshot_refs(tools)
    reply = ok(await tools.call("browser_click", {"selector": "#delete"}))
    assert "status: deleted" in reply


async def test_a_tooltip_over_a_button_is_named_and_the_advice_fits_it(tools, site):
    await open_page(tools, site, "modal.html")
    ok(await tools.call("browser_click", {"selector": "#cancel"}))
    refs = await snapshot_refs(tools)
    reply = await tools.call("browser_click", {"ref": refs["Bold"], "timeout": 2})
    assert reply.is_error
    assert 'covered by <div id="tip">' in reply.text
    assert "browser_snapshot" in reply.text and "browser_press_key" in reply.text
    assert "dialog" not in reply.text and "Close" not in reply.text


async def test_a_button_under_a_sticky_header_is_scrolled_clear_of_it(tools, site):
    await open_page(tools, site, "sticky.html")
    assert await page_value(tools, "scrollTo(0, document.querySelector('#order').offsetTop - 30); scrollY") > 0
    await snapshot_refs(tools)
    reply = ok(await tools.call("browser_click", {"selector": "#order"}))
    assert "status: ordered" in reply
