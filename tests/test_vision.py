"""Acting at pixel coordinates (the ``vision`` group) and the computer-use adapters.

The targets of pages/vision/grid.html are flat-coloured buttons at known CSS positions; the page
records every click. The tests find each target on the image the model got by its colour (Pillow,
not webhand's mapping), click at its centre there, and check that the page recorded that target.
"""

from __future__ import annotations

import io
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from PIL import Image, ImageChops

from webhand.surfaces.cli.demo import serve_demo_site

# The targets of grid.html: id -> colour (each appears nowhere else on the page).
COLOURS = {
    "t1": "#e6194b", "t2": "#3cb44b", "t3": "#ffe119", "t4": "#4363d8", "t5": "#f58231", "t6": "#911eb4",
    "t7": "#46f0f0", "t8": "#f032e6", "t9": "#bcf60c", "t10": "#008080", "t11": "#800000", "t12": "#000075",
    "t13": "#9a6324", "t14": "#808000", "t15": "#ff00ff", "t16": "#00ff80",
}


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def locate(png: bytes) -> dict[str, tuple[float, float, int]]:
    """Each target seen on the image: the centre of its pixels' box (x, y) and how many there are.
    Pixels within a small distance of the colour count (downscaling blends only the edges)."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    found = {}
    for target, colour in COLOURS.items():
        red, green, blue = ImageChops.difference(image, Image.new("RGB", image.size, _rgb(colour))).split()
        mask = ImageChops.lighter(ImageChops.lighter(red, green), blue).point(lambda v: 255 if v <= 6 else 0)
        count = mask.histogram()[255]
        box = mask.getbbox()
        # A target cut by the image's edge still shows; it needs some area to be clicked surely.
        if box and count >= 40:
            found[target] = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2, count)
    return found


@dataclass(frozen=True)
class Case:
    name: str
    width: int
    height: int
    scale: float = 1.0
    scroll: tuple[int, int] = (0, 0)
    full_page: bool = False


CASES = [
    Case("DPR 1", 1280, 720),
    Case("DPR 2", 1280, 720, 2),
    Case("DPR 3", 1280, 720, 3),
    Case("scrolled (150, 250)", 1280, 720, 1, (150, 250)),
    Case("full page", 1280, 720, full_page=True),
    Case("2560x1600, downscaled", 2560, 1600),
]


@pytest.fixture(scope="module")
async def vision(webhand) -> AsyncIterator[object]:
    """One conversation for the module's tests: their pages are loaded again as each needs."""
    context = webhand.context(f"test-vision-{uuid.uuid4().hex[:8]}")
    yield context
    await webhand.end_conversation(context.conversation_id)


async def _ok(tools, name: str, arguments: dict | None = None):
    reply = await tools.call(name, arguments or {})
    assert not reply.is_error, f"{name}: {reply.text}"
    return reply


async def _evaluate(tools, expression: str):
    reply = await _ok(tools, "browser_eval", {"expression": f"JSON.stringify({expression})"})
    return json.loads(json.loads(re.search(r"^(\".*\")$", reply.text, re.M).group(1)))


async def test_a_click_at_a_target_seen_on_the_image_hits_that_target(vision, site, driver):
    table = []
    # The whole table on the default driver; on the other, the case that exercises every driver
    # primitive (a device scale set per tab, input at a viewport point) without the slow captures.
    for case in CASES if driver == "cdp" else [c for c in CASES if c.name == "DPR 2"]:
        await _ok(vision, "browser_resize", {"width": case.width, "height": case.height, "device_scale": case.scale})
        await _ok(vision, "browser_navigate", {"url": site.url("vision/grid.html")})
        if case.scroll != (0, 0):
            await _ok(vision, "browser_eval", {"expression": f"window.scrollTo({case.scroll[0]}, {case.scroll[1]})"})
        shot = await _ok(vision, "browser_take_screenshot", {"full_page": case.full_page})
        seen = locate(shot.images[0].data)
        sent = Image.open(io.BytesIO(shot.images[0].data)).size
        assert len(seen) >= 5, (case, seen)
        hits = 0
        for target, (x, y, _) in seen.items():
            point = {"x": round(x), "y": round(y)}
            reply = await _ok(vision, "browser_mouse_click_xy", point)
            number = target[1:]
            assert f'button "Target {number}" [e' in reply.text, (case, target, reply.text)
            landed = await _evaluate(vision, "window.hits.slice(-1)[0] || null")
            hits += landed == target
        table.append((case.name, f"{sent[0]}x{sent[1]}", hits, len(seen)))
    print("\nhit table (case, image sent, hits, targets on the image):")
    for row in table:
        print("  {:<24} {:>10} {:>3}/{}".format(*row))
    assert all(hits == seen for _, _, hits, seen in table), table
    await _ok(vision, "browser_resize", {"width": 1280, "height": 720})
