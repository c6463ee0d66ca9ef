"""Seeing the page: snapshot, screenshot, viewport size."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from webhand.durations import Timeout
from webhand.engine.page_scripts import MASKED_FIELDS
from webhand.errors import InvalidArgument, WebhandError
from webhand.page.annotate import annotated_screenshot
from webhand.page.coordinates import image_map
from webhand.page.find import find
from webhand.page.page_tools import add_page_tools_line
from webhand.page.snapshot import add_snapshot, lasting_options, left_out_notice, omitted_notice, take_snapshot, viewport
from webhand.response import TITLE_LIMIT, URL_LIMIT, WHOLE_TITLE, WHOLE_URL, Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

if TYPE_CHECKING:
    from pathlib import Path

    from webhand.images.fitting import ModelImage


class SnapshotArgs(PageArgs):
    # None: the snapshot_mode setting (page). What a call asks for applies to that call only.
    mode: Literal["page", "interactive", "full"] | None = Field(
        None, description="page: the visible text and every control; interactive: controls and headings only; "
                          "full: page plus structure (landmarks, lists, tables).")
    scope: str | None = Field(None, description="Ref or CSS selector: snapshot only that part of the page.")
    depth: int | None = Field(None, ge=1, le=100, description="Deepest nesting level to include.")
    max_refs: int = Field(200, ge=1, le=10_000, description="Most elements with refs to list.")


@tool("browser_snapshot", read_only=True)
async def snapshot(session: Session, args: SnapshotArgs, response: Response) -> None:
    """Read the page: its visible text, one line per block, and every control as `role "name" [e3]`; pass refs to other tools."""
    tab = await session.tab()
    lasting = lasting_options(session.settings.snapshot_mode)
    shot = await take_snapshot(tab, mode=args.mode or lasting.mode, scope=args.scope, depth=args.depth,
                               max_refs=args.max_refs)
    # An action's reply tells what changed since the model's view (page/diff.py), in the lasting
    # mode: what this call asked for is not carried over to the next replies.
    session.last_snapshot = shot if shot.options == lasting else \
        await take_snapshot(tab, mode=lasting.mode, max_refs=lasting.max_refs, title=shot.title)
    header = f"Page: {response.page(shot.url, URL_LIMIT, WHOLE_URL)}" \
        + (f" — {response.page(shot.title, TITLE_LIMIT, WHOLE_TITLE)}" if shot.title else "")
    response.add(header)
    await add_page_tools_line(tab, response)  # only when the page offers tools of its own (WebMCP)
    # The header counts against the snapshot's size: the two come back together.
    add_snapshot(response, shot, limit=max(session.settings.snapshot_max_chars - len(header), 1000))
    if shot.omitted:
        response.add(omitted_notice(shot))
    if notice := left_out_notice(shot):
        response.add(notice)


class FindArgs(PageArgs):
    query: str = Field(min_length=1, max_length=500,
                       description='What to find, in plain words: "the login button", "email field", "link Pricing".')
    limit: int = Field(10, ge=1, le=50, description="Most matches to return.")


@tool("browser_find", read_only=True)
async def find_elements(session: Session, args: FindArgs, response: Response) -> None:
    """Find elements anywhere on the page (all frames, past the snapshot's ref cap) by a plain description; replies with their refs, best match first."""
    tab = await session.tab()
    matches, refs = await find(tab, args.query, limit=args.limit)
    if not matches:
        response.add(f"Nothing on the page matches {args.query!r} ({refs} elements with refs were searched). "
                     "Try other words, or call browser_snapshot to read the page.")
        return
    response.add(f"{len(matches)} best matches for {args.query!r}, best first (indented: the section it is in):")
    for match in matches:
        response.add(match.line + (f"\n  in: {match.context}" if match.context else "")
                     + (f"\n  matched: {match.why}" if match.why else ""))
    response.data({"matches": [{"line": m.line, "context": m.context, "why": m.why} for m in matches]})


class ScreenshotArgs(PageArgs):
    full_page: bool = Field(False, description="Whole scrollable page instead of the viewport.")
    ref: str | None = Field(None, description="Element ref: screenshot only that element.")
    selector: str | None = Field(None, description="CSS selector: screenshot only that element.")
    annotate: bool = Field(False, description="Draw each element's ref (e.g. e7) on its box and list them, "
                                              "to act on what you see.")
    timeout: Timeout = None


@tool("browser_take_screenshot", read_only=True)
async def take_screenshot(session: Session, args: ScreenshotArgs, response: Response) -> None:
    """Take a PNG screenshot of the viewport, the full page or one element; saved to disk and shown to you."""
    if args.ref and args.selector:
        raise InvalidArgument("Give `ref` or `selector`, not both.", "Call again with one of them.")
    timeout = args.timeout or session.settings.timeout
    if args.annotate:
        await _annotated(session, args, response, timeout)
        return
    tab = await session.tab()
    whole = not (args.ref or args.selector)
    port = await viewport(tab, layout=True) if whole else None  # where the pixels are on the page (page/coordinates.py)
    png = await capture_png(session, args, timeout)
    fitted, path = response.image(png)
    session.saw_screenshot(tab, image_map(port, full_page=args.full_page, original=(fitted.original_width, fitted.original_height),
                                          sent=(fitted.width, fitted.height)) if port is not None else None)
    size = f"{fitted.original_width}x{fitted.original_height}"
    scaled = f", sent as {fitted.width}x{fitted.height}" if fitted.width != fitted.original_width else ""
    response.add(f"Screenshot {size}{scaled} saved to {path}")
    _say_sent_copy(response, fitted, path)
    await say_masked(session, response)


async def say_masked(session: Session, response: Response) -> None:
    """Say how many fields holding a typed secret the picture shows masked (``page_scripts.MASK_TEXT``)."""
    tab = await session.tab()
    if tab.index not in session.secret_tabs:
        return
    count = 0
    for frame in await tab.refs.frames():
        try:
            count += int(await frame.evaluate(MASKED_FIELDS) or 0)
        except WebhandError:
            continue  # a frame that went away, or a page that broke it: its fields are not counted
    if count:
        response.add(f"{count} field{'s' if count > 1 else ''} holding a secret {'were' if count > 1 else 'was'} masked "
                     "(its text is drawn as dots).")


def _say_sent_copy(response: Response, fitted: ModelImage, path: Path) -> None:
    """Keep the picture the model was sent, when smaller than the full one, and say where it is."""
    sent = response.keep_sent_copy(fitted, path)
    if sent is not None:
        response.add(f"The {fitted.width}x{fitted.height} copy you were sent (the coordinate tools take points on it) "
                     f"is saved to {sent}")
    response.data({"path": str(path), "width": fitted.original_width, "height": fitted.original_height,
                   "sent": {"path": str(sent) if sent else str(path), "width": fitted.width, "height": fitted.height}})


async def _annotated(session: Session, args: ScreenshotArgs, response: Response, timeout: float) -> None:
    if args.ref or args.selector:
        raise InvalidArgument("annotate labels the refs of the viewport or the full page, not of one element.",
                              "Call again without ref and selector, or without annotate.")
    tab = await session.tab()
    png, labels, port = await annotated_screenshot(tab, full_page=args.full_page, timeout=timeout)
    fitted, path = response.image(png, kind="annotated")
    session.saw_screenshot(tab, image_map(port, full_page=args.full_page, original=(fitted.original_width, fitted.original_height),
                                          sent=(fitted.width, fitted.height)))
    scale = fitted.width / fitted.original_width  # the legend's points are on the image you got
    scaled = f", sent as {fitted.width}x{fitted.height}" if fitted.width != fitted.original_width else ""
    response.add(f"Annotated screenshot {fitted.original_width}x{fitted.original_height}{scaled} saved to {path}: "
                 f"{len(labels)} elements labelled with their refs" + (", each with the centre of its box on the image "
                 "(x,y pixels):" if labels else " (none has a box on it)."))
    await say_masked(session, response)
    if labels:
        response.large("\n".join(label.legend_line(scale) for label in labels), what="legend", suffix=".txt",
                       limit=session.settings.snapshot_max_chars, hint="Read the file for the whole legend.")
    sent = response.keep_sent_copy(fitted, path)
    if sent is not None:  # after the legend: its points are on this copy
        response.add(f"The {fitted.width}x{fitted.height} copy you were sent is saved to {sent}")
    response.data({"labels": [{"ref": label.ref, "role": label.role, "name": label.name, "box": list(label.box),
                               "tag": list(label.tag), "centre": list(label.centre(scale))} for label in labels]})


class ResizeArgs(PageArgs):
    width: int = Field(description="Viewport width in CSS pixels.")
    height: int = Field(description="Viewport height in CSS pixels.")
    device_scale: float = Field(1.0, ge=1, le=4, description="Device pixels per CSS pixel: 2 or 3 emulate a high-density screen.")
    timeout: Timeout = None


@tool("browser_resize", capability="extra")
async def resize(session: Session, args: ResizeArgs, response: Response) -> None:
    """Resize the viewport of the current tab."""
    for name, value in (("width", args.width), ("height", args.height)):
        if not 0 < value <= 16384:
            raise InvalidArgument(f"{name} must be between 1 and 16384 pixels, not {value}.", "Call again with a positive size.")
    await (await session.tab()).set_viewport(args.width, args.height, args.device_scale)
    scale = f" at device scale {args.device_scale:g}" if args.device_scale != 1 else ""
    response.add(f"Viewport is now {args.width}x{args.height}{scale}.")


async def capture_png(session: Session, args: Any, timeout: float) -> bytes:
    """A PNG of the element ``args`` names (ref or selector), else of the page (``full_page``)."""
    if args.ref or args.selector:
        element = await session.element(args.ref, args.selector, args.timeout)
        try:
            return await element.screenshot(timeout=timeout)
        finally:
            await element.dispose()
    return await (await session.tab()).capture.screenshot(full_page=args.full_page, timeout=timeout)
