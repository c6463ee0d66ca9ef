"""Recording one tool call into its session's history (session/history.py).

``record_call`` wraps the call inside the session's lock, so the URLs before and after are the
page this call saw. Before the call it also notes, for each ref the call names, a CSS selector
that finds the same element on a fresh load and the element's role and name: a ref is only good
for the page it was given on, and an export (``webhand export``) must run on a fresh page.
After the call, when a dashboard is attached, it keeps a small thumbnail of the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from webhand.engine.driver import Frame, Tab
from webhand.engine.page_scripts import DESCRIBE_AT_POINT, DESCRIBE_OF_REF, STABLE_SELECTOR
from webhand.errors import WebhandError
from webhand.page.snapshot import take_snapshot
from webhand.response import Response
from webhand.session.session import Session

log = logging.getLogger("webhand")

#: Argument names that hold a ref, and the field that takes a selector in their place.
REF_FIELDS = {"ref": "selector", "to_ref": "to_selector"}
#: Tools that act at points of the last screenshot, and the arguments that give each point (x, y):
#: the element under each is recorded, with where in its box the point is, under the key named
#: here in the entry's targets (a flow keeps them in this order: a drag's start, then its end).
POINT_ARGUMENTS: dict[str, dict[str, tuple[str, str]]] = {
    "browser_mouse_click_xy": {"xy": ("x", "y")},
    "browser_mouse_move_xy": {"xy": ("x", "y")},
    "browser_mouse_wheel_xy": {"xy": ("x", "y")},
    "browser_mouse_drag_xy": {"xy": ("start_x", "start_y"), "to_xy": ("end_x", "end_y")},
}
POINT_TOOLS = frozenset(POINT_ARGUMENTS)
#: How long reading a ref's selector, or a thumbnail, may take: bookkeeping must not slow the agent.
_BOOKKEEPING_CAP_SECONDS = 1.0
#: Thumbnails in the timeline: small JPEGs.
THUMBNAIL_WIDTH = 320


def _active_url(session: Session) -> str:
    tab = session.active_tab
    return tab.url if tab is not None and not tab.closed else ""


def _ref_names(arguments: dict[str, Any]) -> list[str]:
    found = [v for k, v in arguments.items() if k in REF_FIELDS and isinstance(v, str)]
    for value in arguments.values():  # browser_fill_form's fields, batch steps
        if isinstance(value, list):
            found += [r for item in value if isinstance(item, dict) for r in _ref_names(item)]
    return found


def _role_and_name(session: Session, ref: str) -> dict[str, str]:
    """Role and name of ``ref`` as the last snapshot showed it (``role "name" [ref]``)."""
    snapshot = session.last_snapshot
    if snapshot is None:
        return {}
    match = re.search(r'(\w[\w-]*) "((?:[^"\\]|\\.)*)" \[' + re.escape(ref) + r"\]", snapshot.text)
    return {"role": match.group(1), "name": match.group(2)} if match else {}


async def _targets(session: Session, refs: list[str], response: Response) -> dict[str, dict[str, Any]]:
    targets: dict[str, dict[str, Any]] = {}
    tab = session.active_tab
    for ref in dict.fromkeys(refs):
        target: dict[str, Any] = dict(_role_and_name(session, ref))
        if tab is not None and not tab.closed:
            with contextlib.suppress(WebhandError, asyncio.TimeoutError):
                described = await asyncio.wait_for(describe_ref(tab, ref), _BOOKKEEPING_CAP_SECONDS)
                if described:
                    # The page's own role and name (as the snapshot computes them, unclipped) and the rest.
                    target = {**target, **{k: v for k, v in described.items() if v or k not in target}}
                    target["selector"] = "" if described.get("frame") else described.get("css", "")
            if "selector" not in target:
                with contextlib.suppress(WebhandError, asyncio.TimeoutError):
                    selector = await tab.refs.stable_selector(ref, timeout=_BOOKKEEPING_CAP_SECONDS)
                    if selector:
                        target["selector"] = selector
        if target:
            targets[ref] = response.masker.data(target)
    return targets


_REF = re.compile(r"^(f[0-9]+)?(e[0-9]+)$")
#: The stable selector of an iframe element, run in its parent frame (Frame.owner_marker).
_IFRAME_SELECTOR = "f => (" + STABLE_SELECTOR + ")(f)"


#: DESCRIBE_AT_POINT for each of several points, in one round trip (a drag's two).
_DESCRIBE_AT_POINTS = "(points) => points.map(" + DESCRIBE_AT_POINT + ")"


async def _under_points(session: Session, points: list[tuple[Any, Any]]) -> list[dict[str, Any]] | None:
    """The element under each of a coordinate call's points (x, y of the last screenshot) and where
    in its box the point is: what a flow acts on again wherever that element has moved. None
    unless every point has one."""
    tab = session.active_tab
    if tab is None or tab.closed or not all(isinstance(v, (int, float)) for point in points for v in point):
        return None
    seen, image = session.last_screenshot(tab)
    if not seen or image is None:
        return None
    main = next((f for f in await tab.refs.frames() if f.key == ""), None)
    if main is None:
        return None
    document_points = [list(image.to_document(float(x), float(y))) for x, y in points]
    found = await main.evaluate(_DESCRIBE_AT_POINTS, document_points)
    if isinstance(found, list) and "no agent" in found:
        # No snapshot was taken of this document yet: the page agent comes with one.
        await take_snapshot(tab, mode="interactive", max_refs=0)
        found = await main.evaluate(_DESCRIBE_AT_POINTS, document_points)
    if not isinstance(found, list) or len(found) != len(points) or not all(isinstance(f, dict) for f in found):
        return None
    for under in found:
        under["frame"] = []
    return found


async def frame_path(frames: list[Frame], frame: Frame) -> list[str] | None:
    """The stable selectors of the iframes that hold ``frame``, top first ([] for the main frame);
    None when one has none."""
    by_key = {f.key: f for f in frames}
    path: list[str] = []
    current: Frame | None = frame
    while current is not None and current.key:
        selector = await current.owner_marker(_IFRAME_SELECTOR)
        if not isinstance(selector, str) or not selector:
            return None
        path.insert(0, selector)
        current = by_key.get(current.parent_key or "")
    return path


async def describe_ref(tab: Tab, ref: str) -> dict[str, Any] | None:
    """The ways to find ``ref``'s element again on another build of its page (tools/flows/format.py's
    Target: role, name, named ancestors, label, placeholder, stable attributes, text, CSS path, and
    the iframes it is in); None when the ref is gone."""
    match = _REF.match(ref.strip())
    if not match:
        return None
    frames = await tab.refs.frames()
    frame = next((f for f in frames if f.key == (match.group(1) or "")), None)
    if frame is None:
        return None
    found = await frame.evaluate(DESCRIBE_OF_REF, match.group(2))
    if not isinstance(found, dict):
        return None
    path = await frame_path(frames, frame)
    found["frame"] = path or []
    return found


#: Most lines of a reply kept as what the call was seen to do, and their length.
_CHANGE_LINES, _CHANGE_LINE_CHARS = 20, 200


def _seen(session: Session) -> tuple[int, int, set[int]]:
    """What the session holds before a call: its tabs, its downloads, its open dialogs."""
    return len(session.context.tabs), len(session.downloads), {id(d) for d in session.dialogs}


def _expect(session: Session, seen: tuple[int, int, set[int]], response: Response) -> dict[str, Any]:
    """What the call was seen to do (tools/flows/format.py's Expect, less the URL, which the entry has):
    a new tab, a download's suggested name, a dialog it opened, the reply's lines after its first
    (what changed), masked and bounded."""
    tabs, downloads, dialogs = seen
    expect: dict[str, Any] = {}
    if len(session.context.tabs) > tabs:
        expect["new_page"] = True
    if len(session.downloads) > downloads:
        expect["download"] = response.masker.text(session.downloads[downloads].name)[:300]
    opened = [d for d in session.dialogs if id(d) not in dialogs]
    if opened:
        expect["dialog"] = opened[0].kind
    lines = response.lines()[1:_CHANGE_LINES + 1]
    if lines:
        expect["changes"] = [response.masker.text(line)[:_CHANGE_LINE_CHARS] for line in lines]
    return expect


async def _thumbnail(session: Session) -> str | None:
    tab = session.active_tab
    if tab is None or tab.closed or tab.liveness.crashed:
        return None
    try:
        jpeg = await tab.live_view.thumbnail(width=THUMBNAIL_WIDTH, timeout=_BOOKKEEPING_CAP_SECONDS)
    except (WebhandError, asyncio.TimeoutError):
        return None
    path = session.history.spill_file.parent / "thumbnails" / f"{session.history.spill_file.stem}-{session.history.count}.jpg"
    try:
        return str(session.files.write(path, jpeg))
    except WebhandError:
        return None


@dataclass(frozen=True)
class CallRecord:
    """What the host knows of a call for its history entry."""

    tool: str
    arguments: dict[str, Any]
    thumbnail: bool = False  # a dashboard is looking: keep a picture of the page after the call
    acts: bool = True  # the tool may change the page: what it was seen to do is kept (``HistoryEntry.expect``)


@contextlib.asynccontextmanager
async def record_call(session: Session, record: CallRecord, response: Response) -> AsyncIterator[None]:
    """Record the call run inside this block; its outcome comes from the block's exception, if any."""
    tool, arguments, thumbnail = record.tool, record.arguments, record.thumbnail
    # The reply's masker: the history keeps nothing the reply could not show.
    masker = response.masker
    # The URLs are masked too: a secret typed into a GET form comes back in the next page's URL.
    entry = session.history.begin(tool, masker.data(arguments), masker.text(_active_url(session)))
    started = time.monotonic()
    refs = _ref_names(arguments)
    if refs:
        with contextlib.suppress(Exception):  # bookkeeping never fails the call
            entry.targets = await _targets(session, refs, response)
    elif tool in POINT_TOOLS:
        with contextlib.suppress(Exception):
            points = POINT_ARGUMENTS[tool]
            found = await asyncio.wait_for(
                _under_points(session, [(arguments.get(x), arguments.get(y)) for x, y in points.values()]),
                _BOOKKEEPING_CAP_SECONDS)
            if found:  # a drag is replayed from both its elements, or from its pixels
                entry.targets = {key: response.masker.data(under) for key, under in zip(points, found)}
    seen = _seen(session)
    outcome, message = "ok", ""
    try:
        yield
        outcome, message = ("error", response.summary()) if response.failed else ("ok", response.summary())
    except WebhandError as error:
        outcome, message = "error", masker.text(str(error))
        raise
    except asyncio.CancelledError:
        outcome, message = "timeout", "The call ran out of time."
        raise
    except Exception as error:
        outcome, message = "error", f"{type(error).__name__}"
        raise
    finally:
        try:
            url_after = masker.text(_active_url(session))
        except WebhandError:  # the secrets file went away: no URL rather than an unmasked one
            url_after = ""
        session.history.finish(entry, outcome, message, url_after, started)
        if record.acts:
            with contextlib.suppress(Exception):  # bookkeeping never fails the call
                entry.expect = _expect(session, seen, response)
        entry.reply_chars = response.reply_chars()
        entry.unchanged = outcome == "ok" and response.changed_nothing
        session.history.reply_chars += entry.reply_chars
        if thumbnail and outcome != "timeout":
            with contextlib.suppress(Exception):
                entry.thumbnail = await _thumbnail(session)
