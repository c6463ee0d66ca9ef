"""Comparing two screenshots pixel by pixel: the share that changed, and an image that shows where.

Pixels count as changed when a colour channel differs by more than a tolerance (anti-aliasing and
image compression move values a little). When the sizes differ, the area only one image covers
counts as changed. The diff image is the newer screenshot faded to grey, with every changed pixel
red and a red box around the changed area.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, ImageChops, ImageDraw

from webhand.images.fitting import open_image

_RED = (230, 0, 0)


@dataclass(frozen=True)
class Comparison:
    changed: int  # pixels
    total: int  # pixels of the compared area (the larger width by the larger height)
    box: tuple[int, int, int, int] | None  # left, top, right, bottom of the changed area
    before_size: tuple[int, int]
    after_size: tuple[int, int]
    diff_png: bytes

    @property
    def share(self) -> float:
        return self.changed / self.total if self.total else 0.0


def compare(before: bytes, after: bytes, *, tolerance: int) -> Comparison:
    earlier = open_image(before, "The earlier screenshot").convert("RGB")
    later = open_image(after, "The new screenshot").convert("RGB")
    size = (max(earlier.width, later.width), max(earlier.height, later.height))
    first, second = _on_canvas(earlier, size), _on_canvas(later, size)
    red, green, blue = ImageChops.difference(first, second).split()
    largest = ImageChops.lighter(ImageChops.lighter(red, green), blue)
    mask = largest.point(lambda value: 255 if value > tolerance else 0)
    common = (min(earlier.width, later.width), min(earlier.height, later.height))
    if common != size:  # what only one image covers has changed too
        outside = Image.new("L", size, 255)
        outside.paste(0, (0, 0, *common))
        mask = ImageChops.lighter(mask, outside)
    changed = mask.histogram()[255]
    box = mask.getbbox()
    faded = Image.blend(second.convert("L").convert("RGB"), Image.new("RGB", size, (255, 255, 255)), 0.6)
    marked = Image.composite(Image.new("RGB", size, _RED), faded, mask)
    if box is not None:
        left, top, right, bottom = box
        ImageDraw.Draw(marked).rectangle((max(0, left - 3), max(0, top - 3), min(size[0] - 1, right + 2),
                                          min(size[1] - 1, bottom + 2)), outline=_RED, width=2)
    out = io.BytesIO()
    marked.save(out, "PNG")
    return Comparison(changed, size[0] * size[1], box, earlier.size, later.size, out.getvalue())


def _on_canvas(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    if image.size == size:
        return image
    canvas = Image.new("RGB", size, (0, 0, 0))
    canvas.paste(image, (0, 0))
    return canvas
