"""Seeing the page: browser_resize and browser_take_screenshot (the snapshot and browser_find have
their own files, test_snapshot.py and test_find.py)."""

from __future__ import annotations

import io

from PIL import Image


async def test_resize_rejects_non_positive_sizes(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    for width, height in ((0, 600), (800, -1)):
        reply = await tools.call("browser_resize", {"width": width, "height": height})
        assert reply.is_error and "between 1 and 16384" in reply.text
    assert not (await tools.call("browser_resize", {"width": 500, "height": 400})).is_error
    size = await tools.call("browser_eval", {"expression": "[innerWidth, innerHeight]"})
    assert size.data == {"result": [500, 400]}


async def test_screenshots_are_saved_and_downscaled_for_the_model(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tall.html")})
    viewport = await tools.call("browser_take_screenshot", {})
    assert viewport.images and viewport.images[0].mime_type == "image/png"
    assert Image.open(io.BytesIO(viewport.images[0].data)).size == (1280, 720)
    full = await tools.call("browser_take_screenshot", {"full_page": True})
    sent = Image.open(io.BytesIO(full.images[0].data))
    saved = Image.open(full.images[0].path)
    assert saved.size[1] > 3000 and max(sent.size) <= 1568 and sent.size[0] * sent.size[1] <= 1_150_000
    assert "sent as" in full.text
    element = await tools.call("browser_take_screenshot", {"selector": "#badge"})
    assert Image.open(element.images[0].path).size == (120, 40)
