"""Points on a screenshot, as a vision model names them, and the page points they show.

A screenshot reaches the model changed three ways: its pixels are device pixels (CSS pixels times
the device scale factor, 1, 2 or 3), it was downscaled to fit the model (``images/fitting.py``),
and it shows part of the document (the viewport at its scroll offset) or all of it (a full-page
capture). ``ImageMap`` records those three facts when the screenshot is taken, so that a point of
the image the model saw is turned back into a point of the document, exactly: one image pixel is
at most ``original / sent`` device pixels, so the error is under one image pixel whatever the scale.

A document point is then brought into the viewport (the page is scrolled so that it is in the
middle, when it is not on screen: a full-page capture, or a page scrolled since) and clicked at its
viewport point. ``describe_point`` says what is there: the page agent's hit test, then the ref and
role the snapshot gives that element or the nearest ancestor that has one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from webhand.engine.driver import Tab
from webhand.errors import InvalidArgument


@dataclass(frozen=True)
class ImageMap:
    """How the pixels of one screenshot the model was given relate to its page.

    ``origin``: the document point (CSS pixels) at the image's top-left corner; ``device_scale``:
    device pixels per CSS pixel of the capture; ``original``: the captured image's size (device
    pixels); ``sent``: the size of the image the model got (after downscaling)."""

    origin_x: float
    origin_y: float
    device_scale: float
    original_width: int
    original_height: int
    sent_width: int
    sent_height: int
    full_page: bool
    viewport_width: float  # CSS pixels, at capture time
    viewport_height: float
    # Which document the picture shows (its ``performance.timeOrigin``; None: unknown) and how big
    # it was (CSS pixels): a point on it means nothing on another document (``reveal`` refuses it),
    # and after a big change of layout it may show something else (``reveal`` says so).
    document: float | None = None
    content_width: float = 0.0
    content_height: float = 0.0

    @property
    def downscale(self) -> float:
        """How many captured pixels one pixel of the sent image stands for (1 when not downscaled)."""
        return self.original_width / self.sent_width

    def to_document(self, x: float, y: float) -> tuple[float, float]:
        """The document point (CSS pixels) that image point (x, y) shows."""
        return (self.origin_x + x * self.original_width / self.sent_width / self.device_scale,
                self.origin_y + y * self.original_height / self.sent_height / self.device_scale)

    def to_image(self, doc_x: float, doc_y: float) -> tuple[float, float]:
        """Where document point (doc_x, doc_y) is on the sent image: the inverse of ``to_document``."""
        return ((doc_x - self.origin_x) * self.device_scale * self.sent_width / self.original_width,
                (doc_y - self.origin_y) * self.device_scale * self.sent_height / self.original_height)

    def check(self, x: Any, y: Any, what: str = "The point") -> tuple[float, float]:
        """(x, y) as numbers inside the image, or ``InvalidArgument`` saying what is wrong with it."""
        for name, value in (("x", x), ("y", y)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise InvalidArgument(f"{what}'s {name} must be a number of image pixels, not {value!r}.",
                                      "Give x and y as numbers, in pixels of the last screenshot.")
        if not (0 <= x < self.sent_width and 0 <= y < self.sent_height):
            raise InvalidArgument(
                f"{what} ({x:g}, {y:g}) is outside the last screenshot, which is {self.sent_width}x{self.sent_height} pixels.",
                f"Give a point with 0 <= x < {self.sent_width} and 0 <= y < {self.sent_height}, "
                "or take a new screenshot (browser_take_screenshot) to see the rest of the page.")
        return float(x), float(y)

    def describe(self) -> str:
        kind = "full page" if self.full_page else "viewport"
        scaled = f", downscaled ×{self.downscale:.3g}" if self.sent_width != self.original_width else ""
        return f"{kind} screenshot {self.sent_width}x{self.sent_height} (device scale {self.device_scale:g}{scaled})"


def capture_scale(port: dict[str, Any], *, full_page: bool, image_width: int) -> float:
    """Device pixels per CSS pixel of a screenshot, measured on it: its width over the CSS width
    it shows. Not ``devicePixelRatio``: a driver may capture at another scale than the page
    reports (Playwright captures at its context's scale, whatever a tab emulates)."""
    css_width = float(port.get("content_width") or 0) if full_page else float(port["width"])
    return image_width / css_width if css_width > 0 else float(port.get("device_scale") or 1)


def image_map(port: dict[str, Any], *, full_page: bool, original: tuple[int, int], sent: tuple[int, int]) -> ImageMap:
    """The map of a screenshot taken with the page at ``port`` (``page.snapshot.viewport``)."""
    scale = capture_scale(port, full_page=full_page, image_width=original[0])
    origin = (0.0, 0.0) if full_page else (float(port["scroll_x"]), float(port["scroll_y"]))
    document = port.get("document")
    return ImageMap(origin[0], origin[1], scale, original[0], original[1], sent[0], sent[1], full_page,
                    float(port["width"]), float(port["height"]),
                    float(document) if isinstance(document, (int, float)) else None,
                    float(port.get("content_width") or 0), float(port.get("content_height") or 0))


# Brings document point (x, y) into the viewport when it is not there (scrolls it to the middle),
# and returns its viewport point and the scroll offset then, with the layout now; on another
# document than the screenshot's (``seen``), nothing is scrolled and it says so.
_REVEAL = """([x, y, seen]) => {
  let now = null;
  try { now = performance.timeOrigin; } catch (e) {}
  const layout = {width: innerWidth, height: innerHeight, content_width: document.documentElement.scrollWidth,
                  content_height: document.documentElement.scrollHeight};
  if (seen !== null && now !== seen) return {stale: true, url: location.href, ...layout};
  const inside = (vx, vy) => vx >= 0 && vy >= 0 && vx < innerWidth && vy < innerHeight;
  let scrolled = false;
  if (!inside(x - scrollX, y - scrollY)) {
    window.scrollTo({left: x - innerWidth / 2, top: y - innerHeight / 2, behavior: 'instant'});
    scrolled = true;
  }
  return {x: x - scrollX, y: y - scrollY, scrolled, inside: inside(x - scrollX, y - scrollY),
          scroll_x: scrollX, scroll_y: scrollY, ...layout};
}"""

# What is at viewport point (x, y): the deepest element (through open shadow roots), and the ref
# the page agent gave it or its nearest ancestor that has one.
_HIT = """([x, y]) => {
  let el = document.elementFromPoint(x, y);
  while (el && el.shadowRoot) {
    const inner = el.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === el) break;
    el = inner;
  }
  if (!el) return null;
  const up = (n) => n.assignedSlot || n.parentElement || (n.parentNode && n.parentNode.host) || null;
  const agent = window.__webhand;
  for (let n = el; n; n = up(n)) {
    const ref = agent && agent.refOf(n);
    if (ref) return {ref, tag: el.tagName.toLowerCase()};
  }
  return {ref: null, tag: el.tagName.toLowerCase()};
}"""


@dataclass(frozen=True)
class PagePoint:
    """Where an image point lands now: its viewport point (CSS pixels) and whether it had to scroll."""

    x: float
    y: float
    scrolled: bool
    scroll_x: float = 0.0  # the page's scroll offset then (CSS pixels)
    scroll_y: float = 0.0
    relaid: str = ""  # how the layout changed since the screenshot, when it changed a lot (``layout_change``)


async def reveal(tab: Tab, image: ImageMap, document_point: tuple[float, float]) -> PagePoint:
    """Scroll ``document_point`` of the page ``image`` shows into the viewport if it is not there;
    its viewport point. Refused when the tab holds another document than the picture showed."""
    main = next(f for f in await tab.refs.frames() if f.key == "")
    found = await main.evaluate(_REVEAL, [*document_point, image.document])
    if found.get("stale"):
        raise InvalidArgument(
            "The last screenshot shows another page than the tab holds now: the page navigated or reloaded since it "
            "was taken, so its points would land on whatever the new page has there. Nothing was done.",
            "Take a new screenshot (browser_take_screenshot) and give points on it.")
    if not found["inside"]:
        raise InvalidArgument(
            f"The point ({document_point[0]:.0f}, {document_point[1]:.0f}) of the page could not be scrolled into view "
            "(the page is shorter or narrower now than on the screenshot).",
            "Take a new screenshot (browser_take_screenshot) and pick the point on it.")
    return PagePoint(float(found["x"]), float(found["y"]), bool(found["scrolled"]), float(found["scroll_x"]),
                     float(found["scroll_y"]), layout_change(image, found))


#: How much the document may grow or shrink since a screenshot before a point on it is said to be
#: suspect: a quarter of the viewport's height (or width), and at least this many CSS pixels. Text
#: that appears under a form or a list that loads more leaves what is on screen where it was.
_BIG_CHANGE = 100.0


def layout_change(image: ImageMap, now: dict[str, Any]) -> str:
    """"" when the page is laid out as on ``image`` (or changed little), else a sentence that says
    how it changed: the viewport resized, or the document grew or shrank by much."""
    width, height = float(now["width"]), float(now["height"])
    if (round(width), round(height)) != (round(image.viewport_width), round(image.viewport_height)):
        change = (f"the viewport was {image.viewport_width:g}x{image.viewport_height:g} CSS pixels, "
                  f"now {width:g}x{height:g}")
    elif image.content_height and image.content_width and (
            abs(float(now["content_height"]) - image.content_height) >= max(_BIG_CHANGE, height / 4)
            or abs(float(now["content_width"]) - image.content_width) >= max(_BIG_CHANGE, width / 4)):
        change = (f"the page was {image.content_width:g}x{image.content_height:g} CSS pixels, "
                  f"now {float(now['content_width']):g}x{float(now['content_height']):g}")
    else:
        return ""
    return (f"The page's layout changed since the last screenshot ({change}): what is at this point may have "
            "moved. Take a new screenshot if the element named here is not the one you meant.")


@dataclass(frozen=True)
class UnderPoint:
    ref: str | None
    role: str
    name: str
    tag: str


async def describe_point(tab: Tab, point: PagePoint) -> UnderPoint | None:
    """What is at ``point`` of the viewport: the element with a ref there (role and name as the
    snapshot gives them), else the bare tag; None when nothing is (outside the page)."""
    from webhand.page.snapshot import take_snapshot

    # Gives refs to every control (the same refs a snapshot shows), with their role and name.
    shot = await take_snapshot(tab, mode="interactive", max_refs=None, records=True)
    main = next(f for f in await tab.refs.frames() if f.key == "")
    hit = await main.evaluate(_HIT, [point.x, point.y])
    if not hit:
        return None
    record = next((r for r in shot.records if r["ref"] == hit.get("ref")), None) if hit.get("ref") else None
    if record is None:
        return UnderPoint(None, "", "", str(hit.get("tag") or ""))
    return UnderPoint(record["ref"], record["role"], record["name"] or "", str(hit.get("tag") or ""))
