"""Annotated screenshots: each ref's label drawn on its element's box, for vision models.

A model that sees the picture reads ``e7`` on a button and can act on that ref directly. Each box
gets an outline and, at its top-left corner, a filled tag with the ref: inside the box, or just
above it for a box too low to show its content under the tag. Colours
cycle through a palette dark enough for white text, so neighbouring boxes are told apart.
"""

from __future__ import annotations

import io
import math
from typing import Any
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from webhand.engine.driver import Tab
from webhand.engine.pointer import quoted_name
from webhand.page.boxes import RefBox, ref_boxes
from webhand.page.coordinates import capture_scale
from webhand.page.snapshot import viewport

_PALETTE = [(214, 39, 40), (31, 119, 180), (44, 140, 44), (148, 103, 189), (200, 82, 0), (23, 130, 140),
            (227, 56, 150), (90, 90, 90)]
_TEXT = (255, 255, 255)


@dataclass(frozen=True)
class Label:
    """A drawn label: the element's box and the label's tag, in pixels of the screenshot."""

    ref: str
    role: str
    name: str
    box: tuple[int, int, int, int]  # left, top, width, height
    tag: tuple[int, int, int, int]
    #: The part of ``box`` that is on the picture (left, top, width, height); None: all of it.
    seen: tuple[int, int, int, int] | None = None

    def centre(self, scale: float = 1.0) -> tuple[int, int]:
        """The middle of the box, in pixels of the picture shrunk by ``scale`` (sent / original
        width): where a coordinate click on the sent image hits this element."""
        left, top, width, height = self.seen or self.box
        return (math.floor((left + width / 2) * scale), math.floor((top + height / 2) * scale))

    def legend_line(self, scale: float | None = None) -> str:
        """``e8 button "Create ticket"``: the name quoted as JSON, so that it cannot forge a line;
        with ``scale``, followed by ``at 412,380``: the box's centre on the image the model got."""
        at = " at {},{}".format(*self.centre(scale)) if scale is not None else ""
        return f"{self.ref} {self.role}" + (f" {quoted_name(self.name)}" if self.name else "") + at


def annotate(png: bytes, boxes: list[RefBox], *, scale: float, origin: tuple[float, float] = (0.0, 0.0)
             ) -> tuple[bytes, list[Label]]:
    """Draw ``boxes`` (CSS pixels, relative to ``origin``) on the screenshot ``png``, whose pixels
    are ``scale`` times CSS pixels; return the new PNG and what was drawn where."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=max(10, round(14 * scale)))
    line = max(2, round(2 * scale))
    pad = max(2, round(2 * scale))
    labels: list[Label] = []
    for index, box in enumerate(boxes):
        left, top = round((box.x - origin[0]) * scale), round((box.y - origin[1]) * scale)
        right, bottom = round((box.x - origin[0] + box.width) * scale), round((box.y - origin[1] + box.height) * scale)
        if right <= 0 or bottom <= 0 or left >= image.width or top >= image.height:
            continue  # not on this picture
        color = _PALETTE[index % len(_PALETTE)]
        draw.rectangle((left, top, right - 1, bottom - 1), outline=color, width=line)
        text_left, text_top, text_right, text_bottom = font.getbbox(box.ref)
        tag_width, tag_height = text_right - text_left + 2 * pad, text_bottom - text_top + 2 * pad
        # At the box's top-left corner: inside it, or just above it when the box is too low to
        # keep its content readable under the tag (a link in a line of text) and there is room.
        tag_x = min(max(left, 0), image.width - tag_width)
        above = bottom - top < 2 * tag_height and top - tag_height >= 0
        tag_y = top - tag_height if above else min(max(top, 0), image.height - tag_height)
        draw.rectangle((tag_x, tag_y, tag_x + tag_width - 1, tag_y + tag_height - 1), fill=color)
        draw.text((tag_x + pad - text_left, tag_y + pad - text_top), box.ref, fill=_TEXT, font=font)
        seen_left, seen_top = max(left, 0), max(top, 0)
        seen = (seen_left, seen_top, min(right, image.width) - seen_left, min(bottom, image.height) - seen_top)
        labels.append(Label(box.ref, box.role, box.name, (left, top, right - left, bottom - top),
                            (tag_x, tag_y, tag_width, tag_height), seen))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue(), labels


async def annotated_screenshot(tab: Tab, *, full_page: bool, timeout: float) -> tuple[bytes, list[Label], dict[str, Any]]:
    """A screenshot of the viewport (or the whole page) with every ref on it labelled, and the
    viewport it was taken at (``page.snapshot.viewport``: what maps its pixels to the page)."""
    port = await viewport(tab, layout=True)
    visible = None if full_page else (0.0, 0.0, float(port["width"]), float(port["height"]))
    boxes = await ref_boxes(tab, visible=visible)
    png = await tab.capture.screenshot(full_page=full_page, timeout=timeout)
    # The boxes are viewport-relative; a full-page picture starts at the top of the document.
    origin = (-float(port["scroll_x"]), -float(port["scroll_y"])) if full_page else (0.0, 0.0)
    width = Image.open(io.BytesIO(png)).width  # reads the header only
    drawn, labels = annotate(png, boxes, scale=capture_scale(port, full_page=full_page, image_width=width), origin=origin)
    return drawn, labels, port
