"""Where each ref'd element is on screen: the boxes an annotated screenshot draws its labels on.

The refs come from the page agent's own walk (``take_snapshot`` with records), so a label names
exactly the element a later ``browser_click(ref=…)`` acts on. Each frame's boxes are read by the
agent in that frame (``resolve`` gives the element of a ref) and moved into the main frame's
coordinates by the iframe's content offset, frame by frame; an element outside its iframe's
visible area is left out, as it is not on the screenshot either.
"""

from __future__ import annotations

from dataclasses import dataclass

from webhand.engine.driver import Frame, Tab
from webhand.errors import WebhandError
from webhand.page.snapshot import take_snapshot

# Boxes of refs in one frame, viewport-relative CSS pixels; null for a ref that is gone or has no box.
_BOXES = """(refs) => refs.map((ref) => {
  const el = window.__webhand && window.__webhand.resolve(ref);
  if (!el || typeof el === 'string') return null;
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0 ? [r.left, r.top, r.width, r.height] : null;
})"""

# An iframe's content area (inside border and padding) in its parent's viewport coordinates.
_CONTENT_AREA = """(el) => {
  const r = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  const left = r.left + el.clientLeft + parseFloat(style.paddingLeft || '0');
  const top = r.top + el.clientTop + parseFloat(style.paddingTop || '0');
  return [left, top, el.clientWidth - parseFloat(style.paddingLeft || '0') - parseFloat(style.paddingRight || '0'),
          el.clientHeight - parseFloat(style.paddingTop || '0') - parseFloat(style.paddingBottom || '0')];
}"""


@dataclass(frozen=True)
class RefBox:
    """One ref'd element and its box in the main frame's viewport, in CSS pixels."""

    ref: str
    role: str
    name: str
    x: float
    y: float
    width: float
    height: float


Rect = tuple[float, float, float, float]  # left, top, right, bottom


def _intersect(a: Rect, b: Rect) -> Rect | None:
    left, top, right, bottom = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    return (left, top, right, bottom) if right > left and bottom > top else None


async def ref_boxes(tab: Tab, *, visible: Rect | None = None) -> list[RefBox]:
    """Every ref'd element of ``tab`` (all frames, no ref cap) that has a box within ``visible``
    (main-frame viewport coordinates; None: anywhere), in snapshot order."""
    shot = await take_snapshot(tab, mode="interactive", max_refs=None, records=True)
    by_frame: dict[str, list[dict]] = {}
    for record in shot.records:
        frame_key = record["ref"][: record["ref"].index("e")] if not record["ref"].startswith("e") else ""
        by_frame.setdefault(frame_key, []).append(record)
    # Each frame's offset and visible area in main-frame coordinates; parents come before children.
    areas: dict[str, tuple[float, float, Rect | None]] = {"": (0.0, 0.0, visible)}
    boxes: list[RefBox] = []
    for frame in await tab.refs.frames():
        if frame.key not in areas:
            area = await _frame_area(frame, areas)
            if area is None:
                continue
            areas[frame.key] = area
        records = by_frame.get(frame.key)
        if not records:
            continue
        offset_x, offset_y, clip = areas[frame.key]
        try:
            found = await frame.evaluate(_BOXES, [r["ref"][len(frame.key):] for r in records])
        except WebhandError:
            continue  # a child frame that navigated away since the walk: its elements are gone
        for record, box in zip(records, found or [], strict=False):
            if not box:
                continue
            x, y, width, height = box[0] + offset_x, box[1] + offset_y, box[2], box[3]
            if clip is not None and _intersect((x, y, x + width, y + height), clip) is None:
                continue
            boxes.append(RefBox(record["ref"], record["role"], record["name"] or "", x, y, width, height))
    return boxes


async def _frame_area(frame: Frame, areas: dict[str, tuple[float, float, Rect | None]]
                      ) -> tuple[float, float, Rect | None] | None:
    """Where a child frame's viewport is in the main frame, and what of it is visible there."""
    parent = areas.get(frame.parent_key or "")
    if parent is None:
        return None  # its parent was left out, so it is too
    content = await frame.owner_marker(_CONTENT_AREA)
    if not content:
        return None
    parent_x, parent_y, parent_clip = parent
    x, y = parent_x + content[0], parent_y + content[1]
    own: Rect = (x, y, x + content[2], y + content[3])
    clip = own if parent_clip is None else _intersect(own, parent_clip)
    return None if clip is None else (x, y, clip)
