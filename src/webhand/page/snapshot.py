"""The accessibility snapshot: a compact outline of the page with refs for what can be acted on.

The walk itself runs in the page (``snapshot.js``, once per frame); this module runs it in every
frame, nests each frame's lines under its iframe, keeps each frame's ref counter, and reports how
much was left out. It talks to the Tab interface only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

from webhand.engine.driver import Tab
from webhand.errors import InvalidArgument, RefNotFound, WebhandError

Mode = Literal["interactive", "full"]


@cache
def agent_script() -> str:
    """The page agent's source: a function that installs ``window.__webhand`` when it is missing."""
    return resources.files("webhand.page").joinpath("snapshot.js").read_text()


def _snapshot_call() -> str:
    return f"(opts) => {{ ({agent_script()})(); return window.__webhand.snapshot(opts); }}"


@dataclass(frozen=True)
class Snapshot:
    text: str
    refs: int
    omitted: int
    url: str
    title: str

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


async def take_snapshot(tab: Tab, *, mode: Mode = "interactive", scope: str | None = None,
                        depth: int | None = None, max_refs: int | None = 200) -> Snapshot:
    """Snapshot every frame of ``tab`` and nest them into one outline."""
    frames = await tab.frames()
    by_key = {frame.key: frame for frame in frames}
    counters = tab.next_ref
    results: dict[str, dict[str, Any]] = {}
    refs_left = max_refs
    scope_arg = _scope_argument(scope)
    root = _scope_frame(scope) if scope_arg else ""
    for frame in frames:  # parents come before their children
        if scope_arg and frame.key != _scope_frame(scope):
            continue
        options = {"mode": mode, "depth": depth, "maxRefs": refs_left, "nextRef": counters.get(frame.key, 1),
                   "prefix": frame.key, "scope": scope_arg if frame.key == _scope_frame(scope) else None}
        try:
            result = await frame.evaluate(_snapshot_call(), options)
        except WebhandError:
            if frame.key == root:
                raise
            continue  # a child frame that navigated or detached mid-walk is left out
        if result.get("error") == "scope":
            raise RefNotFound(f"The scope {scope!r} matches no element on the page.",
                              "Pass a ref from the last browser_snapshot or a CSS selector that matches.")
        counters[frame.key] = result["nextRef"]
        results[frame.key] = result
        if refs_left is not None:
            refs_left = max(0, refs_left - result["refs"])

    # Map each child frame to the marker its iframe element got in the parent's walk.
    children: dict[tuple[str, str], str] = {}
    for frame in frames:
        if frame.parent_key is not None and frame.key in results:
            marker = await frame.owner_marker("el => window.__webhand ? window.__webhand.frameMarker(el) : null")
            if marker:
                children[(frame.parent_key, marker)] = frame.key

    out: list[str] = []

    def splice(key: str, indent: int) -> None:
        for line in results[key]["lines"]:
            if isinstance(line, dict):
                child = children.get((key, line["frame"]))
                if child is not None and child in results:
                    splice(child, indent + line["depth"])
                continue
            out.append(" " * indent + line)

    if root in results:
        splice(root, 0)
    refs = sum(r["refs"] for r in results.values())
    omitted = sum(r["omitted"] for r in results.values())
    return Snapshot("\n".join(out), refs, omitted, tab.url, await tab.title())


_REF = re.compile(r"(f\d+)?(e\d+)")


def _scope_argument(scope: str | None) -> str | None:
    """What the page agent gets: ``ref:e3`` for a ref (of any frame), else the CSS selector."""
    if not scope or not scope.strip():
        return None
    match = _REF.fullmatch(scope.strip())
    return f"ref:{match.group(2)}" if match else scope.strip()


def _scope_frame(scope: str | None) -> str:
    """The frame a scope lives in: "f2" for a ref f2e7, "" for main-frame refs and selectors."""
    match = _REF.fullmatch(scope.strip()) if scope else None
    return (match.group(1) or "") if match else ""


def validate_mode(mode: str) -> Mode:
    if mode not in ("interactive", "full"):
        raise InvalidArgument(f"mode must be 'interactive' or 'full', not {mode!r}.", "Call again with one of them.")
    return mode  # type: ignore[return-value]
