"""Private: finding a step's element on the page as it is now, by the ways recorded for it.

Each way of a ``Target`` (tools/flows/format.py) is tried on its own in the page (engine/js/locate.js,
in the frame the target's ``frame`` path names): its role and name inside its named ancestors,
its label, its placeholder, each stable attribute, its own text, its CSS path. The element is the
one the first way that finds exactly one element finds, when that element agrees with the target:
its role is the recorded role, and its name is the recorded name, or (the name changed, a field's
aria-label say) its label is the recorded label: a person reads the label beside a field, so a
field found by its kept label is the same field.

- Found by the first way: nothing to heal; the other ways that no longer find it (a CSS path
  after a banner was inserted, an id made random) are said, and ``--update`` refreshes them.
- Found by a later way: the step is healed, and the reply says by what and what the first way found.
- No way finds one element that agrees (none, several, or another kind of element): not found,
  and the replay stops there, saying what each way found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webhand.engine.driver import Tab
from webhand.engine.page_scripts import LOCATE
from webhand.tools.flows.format import Target
from webhand.page.snapshot import take_snapshot
from webhand.response import page_line
from webhand.session.recording import describe_ref, frame_path

#: Lines of the page shown around where a target was, when it is not found.
NEARBY_LINES = 12


@dataclass
class Located:
    ref: str = ""  # the element's ref now ("" when not found, or found without one: see ``found``)
    way: str = ""  # the way that found it
    healed: str = ""  # how, when found by another way than the first
    stale: list[str] = field(default_factory=list)  # recorded ways that no longer find it
    tried: str = ""  # what each way found, when not found
    fresh: dict[str, Any] = field(default_factory=dict)  # its ways now (for --update)
    box: dict[str, float] | None = None  # its box in the main frame's viewport, and the scroll (coordinate steps)

    @property
    def found(self) -> bool:
        return bool(self.ref or self.box)


def describe(target: Target) -> str:
    """The target as a person would say it: "button 'Delete' in row 'bob …'"."""
    what = f"{target.role or 'element'} {page_line(target.name, 80)!r}" if target.name else \
        (target.role or "element") + (f" labelled {page_line(target.label, 80)!r}" if target.label else "")
    inside = target.ancestors[0] if target.ancestors else None
    if inside:
        what += f" in {inside.role} {page_line(inside.name, 60)!r}"
    return what


def way_value(target: Target, way: str) -> str:
    if way == "role+name":
        return f"{target.role} {page_line(target.name, 80)!r}"
    if way in ("label", "placeholder", "text", "css"):
        return repr(page_line(getattr(target, way), 120))
    return f'{way}="{page_line(dict(target.attributes).get(way, ""), 120)}"'


def _agrees(target: Target, found: dict[str, Any]) -> bool:
    if target.role and found.get("role") != target.role:
        return False
    if not target.name:
        return True
    return found.get("name") == target.name or (bool(target.label) and found.get("label") == target.label)


async def locate(tab: Tab, target: Target, *, need_ref: bool = True) -> Located:
    """Find ``target`` on ``tab`` now (see the module's docstring). ``need_ref``: the step names the
    element by its ref (a coordinate step needs only its box, and a canvas has no ref)."""
    await take_snapshot(tab, max_refs=None)  # every element on a line gets its ref
    frames = await tab.refs.frames()
    wanted = {**target.model_dump(include={"role", "name", "ancestors", "label", "placeholder", "attributes", "text",
                                           "css"}), "any_element": not need_ref}
    ways: dict[str, dict[str, Any]] = {}
    for frame in frames:
        if (await frame_path(frames, frame) if frame.key else []) != target.frame:
            continue
        for result in await frame.evaluate(LOCATE, wanted) or []:
            way = ways.setdefault(result["way"], {"way": result["way"], "count": 0, "found": []})
            way["count"] += result["count"]
            way["found"] += [{**f, "ref": frame.key + f["ref"] if f.get("ref") else None} for f in result["found"]]
    order = list(ways.values())
    frame_of_box = target.frame
    if not order:
        return Located(tried="it has no way recorded to find it in this frame")
    chosen = next((w for w in order if w["count"] == 1 and (w["found"][0]["ref"] or not need_ref)
                   and _agrees(target, w["found"][0])), None)
    if chosen is None:
        return Located(tried=", ".join(_found(target, w) for w in order))
    element = chosen["found"][0]
    located = Located(ref=element["ref"] or "", way=chosen["way"], box=element.get("box") if frame_of_box == [] else None)
    first = order[0]
    if chosen is not first:
        located.healed = f"found by {chosen['way']} {way_value(target, chosen['way'])} ({_found(target, first)})"
        if element.get("name") != target.name:
            located.healed += f"; its name is now {page_line(element.get('name') or '', 80)!r}"
    for way in order:
        # A way that finds several (a button's text "Delete" in every row) never told this element apart.
        if way is not chosen and way["count"] <= 1 and not (way["count"] == 1 and way["found"][0]["ref"] == element["ref"]):
            located.stale.append(_found(target, way))
    located.fresh = await describe_ref(tab, located.ref) or {} if located.ref else {}
    return located


def _found(target: Target, way: dict[str, Any]) -> str:
    name = way["way"]
    if way["count"] == 1:
        other = way["found"][0]
        return f"{name} found another element ({other.get('role') or 'element'} {page_line(other.get('name') or '', 60)!r})"
    return f"{name} found {way['count']}"


def nearby(snapshot: str, target: Target) -> str:
    """The snapshot lines around where ``target`` was: near its nearest ancestor's or its own name,
    else the page's first lines; bounded."""
    lines = snapshot.splitlines()
    probes = [a.name.split(" ")[0] for a in target.ancestors if a.name] + \
        [p for p in (target.name, target.label, target.placeholder) if p]
    for probe in probes:
        at = next((i for i, line in enumerate(lines) if probe and probe in line), None)
        if at is not None:
            start = max(0, at - NEARBY_LINES // 3)
            return "\n".join(lines[start:start + NEARBY_LINES])
    return "\n".join(lines[:NEARBY_LINES])
