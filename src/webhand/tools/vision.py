"""Acting at pixel coordinates, for vision models: the ``vision`` group.

A point is given in pixels of the last screenshot the model was given of the tab (plain or
annotated, viewport or full page): ``page/coordinates.py`` maps it back to the page exactly,
whatever the downscaling, device scale and scroll offset were, and scrolls it into view when it is
not on screen. Each action is sent as the browser's own mouse or keyboard input at that point
(``tab.live_view.dispatch_input``), and its reply says what was under the point (role, name and ref, as the
snapshot gives them) and then, like every action's, what it changed.

Keys at whatever has focus are ``browser_press_key`` without a ref (core); typing there is
``browser_keyboard_type`` here. The computer-use adapters (``webhand.adapters.computer_use``) are
built on these tools.
"""

from __future__ import annotations

import asyncio
import io
import json
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from webhand.engine.keys import LAYOUT, MODIFIER_BITS, parse_chord
from webhand.engine.driver import InputEvent, MouseButton, Tab
from webhand.durations import Timeout
from webhand.errors import ElementNotActionable, InvalidArgument
from webhand.page.annotate import quoted_name
from webhand.page.coordinates import ImageMap, PagePoint, UnderPoint, describe_point, image_map, reveal
from webhand.page.snapshot import take_snapshot, viewport
from webhand.response import NAME_LIMIT, Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool
from webhand.tools.interaction import Modifier, act, wait_for

Button = Literal["left", "right", "middle"]
#: Pointer moves a drag is sent as between its two ends: enough for a page that follows
#: ``mousemove`` (a slider, a sortable list) to see a path, not a jump.
_DRAG_STEPS = 8
#: The longest key hold: a hold blocks the session's other calls meanwhile.
MAX_HOLD_SECONDS = 10.0



def _a_number(value: object) -> object:
    """A coordinate as sent: a JSON number. ``true`` or ``"12"`` are refused, not read as 1 or 12: a
    model that sent them did not name a point, and a click where nobody aimed may press anything."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        shown = f"a JSON {'object' if isinstance(value, dict) else 'array'}" if isinstance(value, (dict, list)) \
            else json.dumps(value, default=str)[:40]
        raise ValueError(f"a coordinate is a JSON number such as 140 or 140.5, not {shown}")
    return value


#: Pixels on a screenshot, or CSS pixels to scroll by: a number, strictly (see ``_a_number``).
Pixels = Annotated[float, BeforeValidator(_a_number)]

#: What a coordinate action is measured on: a replay runs the screenshot again before it (``Tool.needs_before``).
ON_THE_LAST_SCREENSHOT = ("browser_take_screenshot",)

_X = "Pixels from the left edge of the last screenshot you were given of this tab."
_Y = "Pixels from the top edge of that screenshot."


class VisionArgs(PageArgs):
    timeout: Timeout = None  # how long the page may take to take the input (default action_timeout)


class PointArgs(VisionArgs):
    x: Pixels = Field(description=_X)
    y: Pixels = Field(description=_Y)


async def last_map(session: Session, tab: Tab) -> ImageMap:
    """The map of the last screenshot of ``tab``, or the error that says to take one."""
    seen, image = session.last_screenshot(tab)
    if not seen:
        raise InvalidArgument("No screenshot of this tab was taken yet: coordinates are pixels of the last screenshot "
                              "you were given.", "Take one first with browser_take_screenshot, then give points on it.")
    if image is None:
        raise InvalidArgument("The last screenshot was of one element: its pixels are not points of the page.",
                              "Take a screenshot of the viewport or the full page (browser_take_screenshot without "
                              "ref or selector), then give points on it.")
    return image


async def landing(session: Session, x: object, y: object, what: str = "The point") -> tuple[Tab, ImageMap, PagePoint]:
    """Where image point (x, y) is on the page now, scrolled into view if needed."""
    tab = await session.tab()
    image = await last_map(session, tab)
    x, y = image.check(x, y, what)
    point = await reveal(tab, image, image.to_document(x, y))
    await baseline(session, tab)
    return tab, image, point


async def baseline(session: Session, tab: Tab) -> None:
    """A model that only looks at screenshots has no snapshot of the page for the reply to say
    what the action changed against (``report_snapshot_changes``): take one first, as its view."""
    last = session.last_snapshot
    if last is None or last.tab != tab.index:
        session.last_snapshot = await take_snapshot(tab, mode=session.settings.snapshot_mode)


def _held(session: Session, tab: Tab) -> MouseButton | Literal["none"]:
    """The button held down on ``tab`` (a move then drags with it), or "none"."""
    return session.held_button.get(tab.index, "none")


def modifier_bits(modifiers: list[str]) -> int:
    bits = 0
    for name in modifiers:
        bits |= MODIFIER_BITS["Control" if name == "ControlOrMeta" else name]
    return bits


async def mouse(timeout: float, tab: Tab, kind: str, point: PagePoint, *, button: MouseButton | Literal["none"] = "none",
                clicks: int = 0, modifiers: int = 0, delta: tuple[float, float] = (0.0, 0.0)) -> None:
    await tab.live_view.dispatch_input(InputEvent(kind, point.x, point.y, button, clicks, delta[0], delta[1],
                                        modifiers=modifiers), timeout=timeout)


async def what_is_under(tab: Tab, point: PagePoint) -> str:
    """``button "Create ticket" [e8]``, ``a <div> (no ref)``, or ``nothing``."""
    return _spoken(await describe_point(tab, point))


def _spoken(under: UnderPoint | None) -> str:
    if under is None:
        return "nothing"
    if under.ref is None:
        return f"a <{under.tag}> (no control, no ref)"
    name = under.name[:NAME_LIMIT]
    return f"{under.role}" + (f" {quoted_name(name)}" if name else "") + f" [{under.ref}]"


def _at(x: float, y: float, point: PagePoint) -> str:
    moved = " (scrolled into view first)" if point.scrolled else ""
    return f"({x:g}, {y:g}){moved}"


def _relaid(point: PagePoint) -> str:
    """The line after an action's own when the page was laid out anew since the screenshot."""
    return f"\n{point.relaid}" if point.relaid else ""


# move -------------------------------------------------------------------------------------------
async def perform_hover(session: Session, args: PointArgs) -> str:
    timeout = wait_for(session, args)
    tab, _, point = await landing(session, args.x, args.y)
    held = _held(session, tab)
    await mouse(timeout, tab, "mouseMoved", point, button=held)
    session.pointer[tab.index] = (args.x, args.y)
    return ("Dragged" if held != "none" else "Moved") + f" the mouse to {_at(args.x, args.y, point)}, over {await what_is_under(tab, point)}." \
        + _relaid(point)


@tool("browser_mouse_move_xy", capability="vision", needs_before=ON_THE_LAST_SCREENSHOT)
async def mouse_move(session: Session, args: PointArgs, response: Response) -> None:
    """Move the mouse to a point of the last screenshot (hover)."""
    await act(session, response, perform_hover, args)


# click ------------------------------------------------------------------------------------------
class ClickArgs(PointArgs):
    button: Button = Field("left", description="Mouse button.")
    click_count: int = Field(1, ge=1, le=3, description="1: a click, 2: a double click, 3: a triple click (selects a line).")
    modifiers: list[Modifier] = Field(default_factory=list, description='Keys held during the click, e.g. ["Shift"].')


async def perform_click(session: Session, args: ClickArgs) -> str:
    timeout = wait_for(session, args)
    tab, _, point = await landing(session, args.x, args.y)
    aimed = await describe_point(tab, point)  # what the model saw there
    bits = modifier_bits(list(args.modifiers))
    await mouse(timeout, tab, "mouseMoved", point, modifiers=bits)
    # Asked again once the pointer is there (and before the click, which may remove it): a page can
    # put something else under the pointer as it arrives, and the press goes only where it aimed.
    pressed = await describe_point(tab, point)
    if pressed != aimed:
        raise ElementNotActionable(
            f"Clicking at ({args.x:g}, {args.y:g}) failed: when the pointer reached the point, the page put {_spoken(pressed)} "
            f"there instead of {_spoken(aimed)}. Nothing was pressed.",
            "Take a new screenshot (browser_take_screenshot) to see the page as it is now, then click on it.")
    under = _spoken(pressed)
    await mouse(timeout, tab, "click", point, button=args.button, clicks=args.click_count, modifiers=bits)
    session.pointer[tab.index] = (args.x, args.y)
    how = {1: "Clicked", 2: "Double-clicked", 3: "Triple-clicked"}[args.click_count]
    how += f" ({args.button} button)" if args.button != "left" else ""
    held = f" holding {'+'.join(args.modifiers)}" if args.modifiers else ""
    return f"{how} at {_at(args.x, args.y, point)}{held}, on {under}.{_relaid(point)}"


@tool("browser_mouse_click_xy", capability="vision", destructive=True, needs_before=ON_THE_LAST_SCREENSHOT)
async def mouse_click(session: Session, args: ClickArgs, response: Response) -> None:
    """Click at a point of the last screenshot (any button, double or triple click, modifier keys held); says what is there."""
    await act(session, response, perform_click, args)


# press or release one button ---------------------------------------------------------------------
class ButtonArgs(VisionArgs):
    action: Literal["down", "up"] = Field(description="down: press the button and hold it; up: release it.")
    button: Button = Field("left", description="Mouse button.")
    x: Pixels | None = Field(None, description=_X + " Omit both for where the mouse is.")
    y: Pixels | None = Field(None, description=_Y)


async def perform_click_button(session: Session, args: ButtonArgs) -> str:
    timeout = wait_for(session, args)
    tab = await session.tab()
    if (args.x is None) != (args.y is None):
        raise InvalidArgument("Give both x and y, or neither (where the mouse is).", "Call again with both or none.")
    x, y = (args.x, args.y) if args.x is not None else session.pointer.get(tab.index, (None, None))
    if x is None or y is None:
        raise InvalidArgument("The mouse has not been moved on this screenshot yet.",
                              "Give x and y, or move it first with browser_mouse_move_xy.")
    tab, _, point = await landing(session, x, y)
    await mouse(timeout, tab, "mouseMoved", point, button=_held(session, tab))
    await mouse(timeout, tab, "mousePressed" if args.action == "down" else "mouseReleased", point,
                button=args.button, clicks=1)
    if args.action == "down":
        session.held_button[tab.index] = args.button
    else:
        session.held_button.pop(tab.index, None)
    session.pointer[tab.index] = (x, y)
    done = "Pressed and held" if args.action == "down" else "Released"
    return f"{done} the {args.button} button at {_at(x, y, point)}, on {await what_is_under(tab, point)}.{_relaid(point)}"


@tool("browser_mouse_button_xy", capability="vision", destructive=True, needs_before=ON_THE_LAST_SCREENSHOT)
async def mouse_button(session: Session, args: ButtonArgs, response: Response) -> None:
    """Press (down) or release (up) a mouse button at a point of the last screenshot, for drags a single call cannot express."""
    await act(session, response, perform_click_button, args)


# drag -------------------------------------------------------------------------------------------
class DragArgs(VisionArgs):
    start_x: Pixels = Field(description="Where the drag starts: " + _X)
    start_y: Pixels = Field(description="Where the drag starts: " + _Y)
    end_x: Pixels = Field(description="Where it ends, on the same screenshot.")
    end_y: Pixels = Field(description="Where it ends, on the same screenshot.")
    button: Button = Field("left", description="Mouse button held during the drag.")


async def perform_drag(session: Session, args: DragArgs) -> str:
    timeout = wait_for(session, args)
    tab, image, start = await landing(session, args.start_x, args.start_y, "The drag's start")
    end_x, end_y = image.check(args.end_x, args.end_y, "The drag's end")
    end_document = image.to_document(end_x, end_y)
    # The start was scrolled into view: the end is read at the same scroll offset.
    end = PagePoint(end_document[0] - start.scroll_x, end_document[1] - start.scroll_y, False, start.scroll_x, start.scroll_y)
    if not (0 <= end.x < image.viewport_width and 0 <= end.y < image.viewport_height):
        raise InvalidArgument("The drag's end is not in the viewport together with its start.",
                              "Drag in shorter steps, scrolling in between (browser_mouse_wheel_xy), on viewport screenshots.")
    under = await what_is_under(tab, start)
    await mouse(timeout, tab, "mouseMoved", start)
    await mouse(timeout, tab, "mousePressed", start, button=args.button, clicks=1)
    for step in range(1, _DRAG_STEPS + 1):
        between = PagePoint(start.x + (end.x - start.x) * step / _DRAG_STEPS,
                            start.y + (end.y - start.y) * step / _DRAG_STEPS, False, start.scroll_x, start.scroll_y)
        await mouse(timeout, tab, "mouseMoved", between, button=args.button)
    await mouse(timeout, tab, "mouseReleased", end, button=args.button, clicks=1)
    session.pointer[tab.index] = (end_x, end_y)
    return (f"Dragged from {_at(args.start_x, args.start_y, start)} to ({end_x:g}, {end_y:g}), "
            f"starting on {under}, ending on {await what_is_under(tab, end)}.{_relaid(start)}")


@tool("browser_mouse_drag_xy", capability="vision", destructive=True, needs_before=ON_THE_LAST_SCREENSHOT)
async def mouse_drag(session: Session, args: DragArgs, response: Response) -> None:
    """Drag with a mouse button held from one point of the last screenshot to another (a slider, a handle, a selection)."""
    await act(session, response, perform_drag, args)


# wheel ------------------------------------------------------------------------------------------
class WheelArgs(PointArgs):
    delta_x: Pixels = Field(0, description="CSS pixels to scroll right (negative: left).")
    delta_y: Pixels = Field(0, description="CSS pixels to scroll down (negative: up).")


async def perform_scroll(session: Session, args: WheelArgs) -> str:
    timeout = wait_for(session, args)
    if not args.delta_x and not args.delta_y:
        raise InvalidArgument("delta_x and delta_y are both 0: nothing to scroll.", "Give delta_y (down) or delta_x (right).")
    tab, _, point = await landing(session, args.x, args.y)
    under = await what_is_under(tab, point)
    await mouse(timeout, tab, "mouseMoved", point)
    await mouse(timeout, tab, "mouseWheel", point, delta=(args.delta_x, args.delta_y))
    session.pointer[tab.index] = (args.x, args.y)
    # Not "it scrolled": the browser scrolls the innermost scroller there that can still move, if any.
    return f"Turned the wheel by ({args.delta_x:g}, {args.delta_y:g}) at {_at(args.x, args.y, point)}, over {under}.{_relaid(point)}"


@tool("browser_mouse_wheel_xy", capability="vision", needs_before=ON_THE_LAST_SCREENSHOT)
async def mouse_wheel(session: Session, args: WheelArgs, response: Response) -> None:
    """Turn the mouse wheel at a point of the last screenshot: scrolls what is under it (a panel, a list, the page)."""
    await act(session, response, perform_scroll, args)


# the keyboard at whatever has focus ----------------------------------------------------------------
class KeyboardTypeArgs(VisionArgs):
    text: str = Field(max_length=10_000, description="Text to type, key by key, into whatever has focus (click it first).")


async def perform_type(session: Session, args: KeyboardTypeArgs) -> str:
    await baseline(session, await session.tab())
    await (await session.tab()).keyboard.type_text(args.text, timeout=wait_for(session, args))
    shown = repr(args.text) if len(args.text) <= 60 else f"{len(args.text)} characters"
    return f"Typed {shown} into whatever has focus."


@tool("browser_keyboard_type", capability="vision", destructive=True)
async def keyboard_type(session: Session, args: KeyboardTypeArgs, response: Response) -> None:
    """Type text with the keyboard into whatever has focus (after a coordinate click); keys and chords: browser_press_key."""
    await act(session, response, perform_type, args, typing=True)


class KeyHoldArgs(VisionArgs):
    key: str = Field(description="Key or chord held down: Shift, Control+Shift, ArrowDown, a.")
    seconds: float = Field(ge=0, le=MAX_HOLD_SECONDS, description="How long to hold it, in seconds (at most 10).")


async def perform_press_key(session: Session, args: KeyHoldArgs) -> str:
    modifiers, key = parse_chord(args.key)
    tab = await session.tab()
    held = [LAYOUT[m] for m in modifiers] + [key]
    bits = 0
    timeout = wait_for(session, args)
    try:
        for down in held:
            bits |= MODIFIER_BITS.get(down.key, 0)
            await tab.live_view.dispatch_input(InputEvent("keyDown", key=down.key, code=down.code,
                                                text=down.text if not bits & ~8 else "", modifiers=bits), timeout=timeout)
        await asyncio.sleep(args.seconds)  # the model asked for this hold
    finally:
        for up in reversed(held):
            await tab.live_view.dispatch_input(InputEvent("keyUp", key=up.key, code=up.code, modifiers=bits), timeout=timeout)
            bits &= ~MODIFIER_BITS.get(up.key, 0)
    return f"Held {args.key} for {args.seconds:g} s."


@tool("browser_key_hold", capability="vision", destructive=True)
async def key_hold(session: Session, args: KeyHoldArgs, response: Response) -> None:
    """Hold a key or chord down for some seconds at whatever has focus (a game, a press-and-hold control)."""
    await act(session, response, perform_press_key, args)


# zoom -------------------------------------------------------------------------------------------
class ZoomArgs(VisionArgs):
    x0: Pixels = Field(description="Left edge of the region, in pixels of the last screenshot.")
    y0: Pixels = Field(description="Top edge of the region.")
    x1: Pixels = Field(description="Right edge of the region.")
    y1: Pixels = Field(description="Bottom edge of the region.")


@tool("browser_zoom", capability="vision", read_only=True, needs_before=ON_THE_LAST_SCREENSHOT)
async def zoom(session: Session, args: ZoomArgs, response: Response) -> None:
    """Look closer: a region of the last screenshot, captured again at full resolution. Coordinates stay those of the last screenshot."""
    from PIL import Image

    tab = await session.tab()
    image = await last_map(session, tab)
    left, top = image.check(args.x0, args.y0, "The region's top-left corner")
    right, bottom = image.check(args.x1, args.y1, "The region's bottom-right corner")
    if right <= left or bottom <= top:
        raise InvalidArgument("The region is empty: x1 must be greater than x0, and y1 than y0.", "Call again with x0 < x1 and y0 < y1.")
    port = await viewport(tab, layout=True)
    if image.document is not None and port.get("document") != image.document:
        raise InvalidArgument("The last screenshot shows another page than the tab holds now (it navigated or reloaded "
                              "since): a region of it cannot be captured again.",
                              "Take a new screenshot (browser_take_screenshot) and zoom into it.")
    png = await tab.capture.screenshot(full_page=image.full_page, timeout=args.timeout or session.settings.timeout)
    picture = Image.open(io.BytesIO(png))
    fresh = image_map(port, full_page=image.full_page, original=picture.size, sent=picture.size)
    corners = [fresh.to_image(*image.to_document(x, y)) for x, y in ((left, top), (right, bottom))]
    box = tuple(round(v) for v in (*corners[0], *corners[1]))
    cropped = picture.crop((max(0, box[0]), max(0, box[1]), min(picture.width, box[2]), min(picture.height, box[3])))
    if cropped.width < 1 or cropped.height < 1:
        raise InvalidArgument("That region is no longer on the page's screen.", "Take a new screenshot and pick the region on it.")
    out = io.BytesIO()
    cropped.save(out, "PNG")
    fitted, path = response.image(out.getvalue(), kind="zoom")
    response.add(f"Region ({left:g}, {top:g})–({right:g}, {bottom:g}) of the last screenshot at full resolution "
                 f"({fitted.width}x{fitted.height}), saved to {path}. Points you give are still on the last screenshot.")
