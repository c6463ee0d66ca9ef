"""browser_screenshot_compare: the page or an element against an earlier screenshot file."""

from __future__ import annotations

import re

from PIL import Image


def ok(reply):
    assert not reply.is_error, reply.text
    return reply


async def _screenshot(tools, **args) -> str:
    return ok(await tools.call("browser_take_screenshot", args)).files[0]


async def test_an_unchanged_page_compares_equal(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("performance.html")}))
    ok(await tools.call("browser_wait_for", {"text": "shifted"}))
    earlier = await _screenshot(tools)
    reply = ok(await tools.call("browser_screenshot_compare", {"path": earlier}))
    assert reply.text.startswith(f"No pixel changed since {earlier} (both 1280x720, tolerance 16).")
    assert reply.data["changed_share"] == 0 and reply.images, "the diff image is shown too"


async def test_a_changed_element_is_measured_and_marked_red_in_the_diff(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("performance.html")}))
    ok(await tools.call("browser_wait_for", {"text": "shifted"}))
    earlier = await _screenshot(tools, selector="#box")  # 80x80
    ok(await tools.call("browser_click", {"selector": "#paint"}))
    reply = ok(await tools.call("browser_screenshot_compare", {"path": earlier, "selector": "#box"}))
    # blue to red: the whole box (80 px, or 81 where the element sits between pixels) but that rim
    assert reply.data["changed_share"] > 0.9 and re.search(r" of 6,[0-9]{3}; both 8[01]x8[01]\), within x ", reply.text)
    assert reply.text.startswith(f"{reply.data['changed_share']:.2%} of the pixels changed since {earlier} (")
    diff = Image.open(reply.data["diff_path"]).convert("RGB")
    assert diff.getpixel((40, 40)) == (230, 0, 0)


async def test_a_page_change_is_a_share_of_the_viewport(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("performance.html")}))
    ok(await tools.call("browser_wait_for", {"text": "shifted"}))
    earlier = await _screenshot(tools)
    ok(await tools.call("browser_click", {"selector": "#paint"}))
    reply = ok(await tools.call("browser_screenshot_compare", {"path": earlier}))
    share = reply.data["changed_share"]
    assert 0 < share < 0.05, reply.text  # the 80x80 box (and the focus ring of the button) in 1280x720
    left, top, right, bottom = reply.data["box"]
    assert right - left >= 80 and bottom - top >= 80


async def test_a_file_outside_the_conversation_folder_is_refused(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    reply = await tools.call("browser_screenshot_compare", {"path": "/etc/hostname"})
    assert reply.is_error and "outside the folders webhand may use" in reply.text


async def test_a_file_that_is_no_image_is_refused_with_what_to_give(tools, site, tmp_path):
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    saved = ok(await tools.call("browser_pdf", {"path": "not-an-image.png"})).data["path"]
    reply = await tools.call("browser_screenshot_compare", {"path": saved})
    assert reply.is_error and "The earlier screenshot is not an image" in reply.text
