"""The accessibility snapshot: a compact outline of the page with refs for what can be acted on.

The walk itself runs in the page (``snapshot.js`` with ``roles.js``, once per frame); this module
runs it in every frame, nests each frame's lines under its iframe, keeps each frame's ref counter,
and reports how much was left out. It talks to the Tab interface only.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

from webhand.engine.driver import Frame, Tab
from webhand.errors import InvalidArgument, RefNotFound, WebhandError
from webhand.engine.break_hints import JS_ANY_BREAK_HINT, JS_BREAK_HINTS
from webhand.response import Response

Mode = Literal["page", "interactive", "full"]


@cache
def agent_script() -> str:
    """The page agent's source: a function that installs ``window.__webhand`` when it is missing.

    Function declarations are hoisted, so roles.js, svg.js and grid.js may follow snapshot.js's
    early return (their constants are set before the agent is first called). The
    accname bundle (a ``var``) comes last: it runs only when the agent is installed, and the
    agent's functions are first called after that. ``BREAK_HINTS`` and ``ANY_BREAK_HINT`` come
    from engine/break_hints.py, so the page and Python drop the same characters.
    """
    files = resources.files("webhand.page")
    parts = [files.joinpath(name).read_text() for name in ("snapshot.js", "roles.js", "svg.js", "grid.js", "vendor/accname.js")]
    return "() => {\n" + "\n".join(parts[:1] + [f"const BREAK_HINTS = {JS_BREAK_HINTS}, ANY_BREAK_HINT = {JS_ANY_BREAK_HINT};"] + parts[1:]) + "\n}"


#: The usual call: the agent is already in the document, so only a few bytes cross the wire.
_SNAPSHOT_CALL = "(opts) => window.__webhand && window.__webhand.version === 3 ? window.__webhand.snapshot(opts) : null"


#: Marks the tab's main document with an id of its own (once), and gives it: an action compares the
#: id before and after it, to know whether it brought a new document (not a property of the page's:
#: non-enumerable, and a page that fakes it can only hide a "new page" heading). The id comes from
#: `crypto`, never `Math.random`: drawing on the page's own random numbers would change what a seeded
#: page does next (a MiniWoB task drew another instruction).
_DOCUMENT_MARK = """() => { try {
  if (typeof window.__webhandDocument !== 'string') {
    let id;
    try { id = Array.from(crypto.getRandomValues(new Uint32Array(2)), (n) => n.toString(36)).join('.'); }
    catch (e) { id = performance.timeOrigin + '.' + performance.now(); }
    Object.defineProperty(window, '__webhandDocument', {value: id, configurable: true});
  }
  return String(window.__webhandDocument).slice(0, 40);
} catch (e) { return null; } }"""


async def document_mark(tab: Tab) -> str | None:
    """The id ``_DOCUMENT_MARK`` gives the tab's main document, or None when it cannot be asked."""
    try:
        main = next((frame for frame in await tab.refs.frames() if frame.key == ""), None)
        found = await main.evaluate(_DOCUMENT_MARK) if main is not None else None
    except WebhandError:
        return None
    return found if isinstance(found, str) else None


@cache
def _install_and_snapshot_call() -> str:
    """The first call on a document: ships the agent (~45 kB of source) and installs it."""
    return f"(opts) => {{ ({agent_script()})(); return window.__webhand.snapshot(opts); }}"


@dataclass(frozen=True)
class SnapshotOptions:
    """What was asked for; kept with the last snapshot so a diff compares like with like."""

    mode: Mode = "page"
    scope: str | None = None
    depth: int | None = None
    max_refs: int | None = 200


@dataclass(frozen=True)
class Snapshot:
    text: str
    refs: int
    omitted: int
    url: str
    title: str
    options: SnapshotOptions = SnapshotOptions()
    tab: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)  # per ref'd element, when asked for
    #: The walked document's identity (the page agent's, one per document): a diff compares only
    #: snapshots of one document; a new one means a new page, whatever its URL.
    document: str | None = None
    #: The focused element is where the last real pointer press went: the click's own focus.
    focus_followed_press: bool = False
    #: Where each node of an SVG drawing is (ref -> centre in its drawing): the diff says a move.
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


async def take_snapshot(tab: Tab, *, mode: Mode = "page", scope: str | None = None, depth: int | None = None,
                        max_refs: int | None = 200, records: bool = False, title: str | None = None) -> Snapshot:
    """Snapshot every frame of ``tab`` (or the part ``scope`` names) and nest them into one outline.
    ``title``: the tab's title, when the caller has just read it."""
    if title is None:
        reading = asyncio.ensure_future(tab.title())  # read meanwhile: one round trip less to wait for
    else:
        reading = asyncio.get_running_loop().create_future()
        reading.set_result(title)
    try:
        return await _take(tab, reading, mode, scope, depth, max_refs, records)
    finally:
        reading.cancel()


async def _take(tab: Tab, title: "asyncio.Future[str]", mode: Mode, scope: str | None, depth: int | None,
                max_refs: int | None, records: bool) -> Snapshot:
    frames = await tab.refs.frames()
    scope_arg = _scope_argument(scope)
    root = _scope_frame(scope) if scope_arg else ""
    if root and root not in {f.key for f in frames}:
        raise RefNotFound(f"The scope {scope!r} is in a frame that is gone.",
                          "Call browser_snapshot without scope and use the new refs.")
    wanted = _with_descendants(frames, root)
    counters = tab.next_ref
    results: dict[str, dict[str, Any]] = {}
    children: dict[tuple[str, str], str] = {}  # (parent frame, its iframe's marker) -> child frame
    indent = {root: 0}  # how deep each frame's lines start, so that `depth` counts across frames
    refs_left = max_refs
    for frame in frames:  # parents come before their children
        if frame.key not in wanted:
            continue
        if frame.key != root:
            slot = await _iframe_slot(frame, results.get(frame.parent_key or ""))
            if slot is None:
                continue  # its iframe is hidden, outside the scope or past the depth: not shown
            children[(frame.parent_key or "", slot["frame"])] = frame.key
            indent[frame.key] = indent[frame.parent_key or ""] + slot["depth"]
        frame_depth = None if depth is None else depth - indent[frame.key]
        if frame_depth is not None and frame_depth <= 0:
            continue
        options = {"mode": mode, "depth": frame_depth, "maxRefs": refs_left, "nextRef": counters.get(frame.key, 1),
                   "prefix": frame.key, "scope": scope_arg if frame.key == root else None, "records": records}
        try:
            result = await frame.evaluate(_SNAPSHOT_CALL, options)
            if result is None:
                result = await frame.evaluate(_install_and_snapshot_call(), options)
        except WebhandError:
            if frame.key == root:
                raise
            continue  # a child frame that navigated or detached mid-walk is left out
        if result.get("error") == "selector":
            raise InvalidArgument(f"The scope {scope!r} is not a valid CSS selector: {result.get('message', '')}",
                                  "Pass a ref from the last browser_snapshot or a valid CSS selector.")
        if result.get("error") == "scope":
            raise RefNotFound(f"The scope {scope!r} matches no element on the current page.",
                              "Pass a ref from the last browser_snapshot or a CSS selector that matches; "
                              "call browser_snapshot without scope to see the page.")
        if frame.key != root and not any(isinstance(line, str) for line in result["lines"]):
            result["lines"] = await _error_page_line(frame)
        counters[frame.key] = result["nextRef"]
        results[frame.key] = result
        if refs_left is not None:
            refs_left = max(0, refs_left - result["refs"])

    out: list[str] = []

    def splice(key: str, base: int) -> None:
        for line in results[key]["lines"]:
            if isinstance(line, dict):
                child = children.get((key, line["frame"]))
                if child is not None and child in results:
                    splice(child, base + line["depth"])
                continue
            out.append(" " * base + line)

    if root in results:
        splice(root, 0)
    found = list(results.values())
    top = results.get(root, {})
    return Snapshot(
        "\n".join(out), sum(r["refs"] for r in found), sum(r["omitted"] for r in found), tab.url, await title,
        SnapshotOptions(mode, scope, depth, max_refs), tab.index,
        [rec for r in found for rec in (r.get("records") or [])],
        top.get("document"), any(r.get("focusFollowedPress") for r in found),
        {ref: (int(x), int(y)) for r in found for ref, (x, y) in (r.get("positions") or {}).items()})


def lasting_options(mode: Mode) -> SnapshotOptions:
    """The snapshot replies keep as the model's view (``Session.last_snapshot``) and compare the next
    with: the whole page in the lasting mode (``Settings.snapshot_mode``). What one browser_snapshot
    call asks for (another mode, a scope, a depth) applies to that call only."""
    return SnapshotOptions(mode=mode)


#: What a reply whose snapshot leaves the page's text out says, once.
TEXT_LEFT_OUT = ("Interactive mode: the page's text is left out (only controls, headings and live regions "
                 'are shown); browser_snapshot with mode="page" shows it.')


def left_out_notice(shot: Snapshot) -> str | None:
    """The line a reply adds when its snapshot leaves the page's text out, else None."""
    return TEXT_LEFT_OUT if shot.options.mode == "interactive" else None


def omitted_notice(shot: Snapshot) -> str:
    """What a capped snapshot says about what it left out, and how to reach it."""
    options = shot.options
    limits = f"max_refs={options.max_refs}" + (f", depth={options.depth}" if options.depth else "")
    return (f"{shot.omitted} more elements with refs were left out ({limits}): call browser_find with what you "
            'look for (e.g. "link Pricing") to get its ref, browser_snapshot with scope (a ref or CSS selector) '
            "to see one part, or a larger max_refs or depth.")


#: The lines a snapshot past the reply limit keeps: headings, and controls (lines with a ref).
_OUTLINE_LINE = re.compile(r"^\s*#{1,6} |\[(?:f\d+)?e\d+\]")
#: Room left under the limit for the note that follows the kept lines.
_NOTE_ROOM = 600


def add_snapshot(response: Response, shot: Snapshot, *, limit: int) -> None:
    """Put ``shot`` in the reply. Past ``limit`` bytes it goes whole to a file, and the reply keeps
    its headings and controls with their refs, in page order up to the limit: on a big page the
    model still sees where it is and what it can act on, and reaches the rest with browser_find."""
    text = shot.text or "(no visible content)"
    size = len(response.masker.text(text).encode())  # measured as the reply will be: masked
    if size <= limit:
        response.add(text)
        return
    path = response.write_file(text, "snapshot", ".txt")
    lines = text.splitlines()
    chosen = [line for line in lines if _OUTLINE_LINE.search(line)]
    what = "its headings and controls"
    if not chosen:  # nothing to act on: its text, from the top
        chosen, what = lines, "its first lines"
    budget = max(limit - _NOTE_ROOM, 200)
    kept: list[str] = []
    used = 0
    for line in chosen:
        used += len(line.encode()) + 1
        if used > budget:
            break
        kept.append(line)
    if not kept:  # one line longer than the limit
        kept = [response.clip(chosen[0], budget)]
    rest = "" if len(kept) == len(chosen) else \
        f" up to the limit ({len(kept):,} of {len(chosen):,} lines; the rest are in the file)"
    response.add("\n".join(kept))
    response.add(f"The snapshot is {size:,} bytes, more than the {limit:,}-byte reply limit: saved to {path}. "
                 f"Above are {what}{rest}. Call browser_find to get the ref of one element "
                 '(e.g. "link Next"), browser_snapshot with scope (a ref or CSS selector) to see one part, '
                 "or read the file.")


#: What an iframe showing the browser's error page says. The full Chromium's error page has text
#: ("127.0.0.1 is blocked"); the headless shell's is empty, and an empty iframe would not tell the
#: agent that a request was refused.
FRAME_NOT_LOADED = "(this frame did not load: its request was blocked or failed)"


async def _error_page_line(frame: Frame) -> list[str]:
    """For a child frame with nothing to show: a line when it holds the browser's error page."""
    try:
        href = await frame.evaluate("() => location.href")
    except WebhandError:
        return []
    return [FRAME_NOT_LOADED] if isinstance(href, str) and href.startswith("chrome-error://") else []


async def _iframe_slot(frame: Frame, parent: dict[str, Any] | None) -> dict[str, Any] | None:
    """Where the parent's walk left room for this frame (its iframe's marker and depth), if it did."""
    if parent is None:
        return None
    slots = [line for line in parent["lines"] if isinstance(line, dict)]
    if not slots:
        return None
    marker = await frame.owner_marker("el => window.__webhand ? window.__webhand.frameMarker(el) : null")
    return next((slot for slot in slots if slot["frame"] == marker), None)


def _with_descendants(frames: list[Frame], root: str) -> set[str]:
    keys = {root}
    for frame in frames:  # parents come first, so one pass reaches every depth
        if frame.parent_key in keys:
            keys.add(frame.key)
    return keys


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


async def viewport(tab: Tab, *, layout: bool = False) -> dict[str, Any]:
    """Scroll position, size and device scale of the tab's main frame, and the width of its
    document (what a full-page screenshot shows). With ``layout``, also its height and which
    document it is (``performance.timeOrigin``, new with each document and kept by a same-document
    navigation), which a screenshot's map keeps to tell a stale picture (page/coordinates.py)."""
    main = next(f for f in await tab.refs.frames() if f.key == "")
    extra = (", content_height: document.documentElement.scrollHeight, "
             "document: (() => { try { return performance.timeOrigin; } catch (e) { return null; } })()") if layout else ""
    return await main.evaluate("() => ({scroll_x: scrollX, scroll_y: scrollY, width: innerWidth, "
                               "height: innerHeight, device_scale: devicePixelRatio, "
                               f"content_width: document.documentElement.scrollWidth{extra}}})")
