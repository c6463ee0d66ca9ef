"""Anthropic's ``computer`` tool, served from a conversation's browser session (no SDK needed).

    computer = AnthropicComputer(browser)                      # or a Conversation
    tools = [await computer.definition(), *other_tools]        # {"type": "computer_20250124", ...}
    ...                                                        # the model answers with tool_use blocks
    result = await computer.run(block["id"], block["input"])   # its tool_result block
    messages.append({"role": "user", "content": [result.item]})

Pass the beta header ``computer.beta`` with the request. The screen is the tab's viewport: every
screenshot is the viewport as webhand sends images (downscaled to fit the model), and the display
size the model is told is that image's size, so its coordinates are pixels of the image it saw
(``page/coordinates.py`` maps them to the page). Like Anthropic's reference implementation, each
action's result ends with a fresh screenshot (``screenshot_after_action``).

Actions (``computer_20250124``): screenshot, left_click, right_click, middle_click, double_click,
triple_click, left_click_drag, left_mouse_down, left_mouse_up, mouse_move, scroll, type, key,
hold_key, wait, cursor_position; ``computer_20251124`` adds zoom (``enable_zoom``). Clicks take
``text`` as the modifier keys held ("shift", "ctrl+shift"); scrolls do not (a wheel with keys
held is refused rather than turned into a plain one).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from webhand.adapters.computer_use import ActionFailed, Calls, ComputerResult, chord, conversation, point
from webhand.errors import InvalidArgument, WebhandError

if TYPE_CHECKING:
    from webhand.api import Browser
    from webhand.host import Conversation

VERSIONS = {"computer_20250124": "computer-use-2025-01-24", "computer_20251124": "computer-use-2025-11-24"}
#: One ``scroll_amount`` step ("click" of the wheel), in CSS pixels, as a wheel notch scrolls.
SCROLL_STEP = 100
#: The longest ``wait`` or ``hold_key`` duration taken, in seconds (a call must answer in its timeout).
MAX_DURATION = 10.0

_CLICKS = {"left_click": ("left", 1), "right_click": ("right", 1), "middle_click": ("middle", 1),
           "double_click": ("left", 2), "triple_click": ("left", 3)}
_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def actions(version: str = "computer_20250124") -> list[str]:
    """The actions this adapter takes for a tool version."""
    names = ["screenshot", *_CLICKS, "left_click_drag", "left_mouse_down", "left_mouse_up", "mouse_move", "scroll",
             "type", "key", "hold_key", "wait", "cursor_position"]
    return names + (["zoom"] if version == "computer_20251124" else [])


class AnthropicComputer:
    """Anthropic's computer tool on one conversation's browser."""

    name = "computer"

    def __init__(self, target: Conversation | Browser, *, version: str = "computer_20250124",
                 screenshot_after_action: bool = True) -> None:
        if version not in VERSIONS:
            raise ValueError(f"Unknown computer tool version {version!r}; use one of {', '.join(VERSIONS)}.")
        self.context = conversation(target)
        self.version = version
        self.beta = VERSIONS[version]
        self.screenshot_after_action = screenshot_after_action
        self._cursor: tuple[Any, Any] | None = None

    async def definition(self) -> dict[str, Any]:
        """The tool to list in the request: the display is the size of the screenshots it sends
        (one is taken now, which also opens the browser)."""
        shot = await self.context.call("browser_take_screenshot", {})
        if shot.is_error:
            raise WebhandError(shot.text.removeprefix("Error: "), "Fix the browser setup, then build the tool again.")
        width, height = _png_size(shot.images[0].data)
        tool: dict[str, Any] = {"type": self.version, "name": self.name, "display_width_px": width, "display_height_px": height}
        if self.version == "computer_20251124":
            tool["enable_zoom"] = True
        return tool

    async def run(self, tool_use_id: str, action_input: dict[str, Any]) -> ComputerResult:
        """Do one ``tool_use`` of the computer tool; returns its ``tool_result`` block (never raises
        for what the model sent: a refusal is an ``is_error`` result saying what to do)."""
        calls = Calls(self.context)
        request = dict(action_input or {})
        try:
            image, said = await self._act(calls, request)
            if image is None and self.screenshot_after_action and request.get("action") != "cursor_position":
                image = _image(await calls("browser_take_screenshot", {}))
        except ActionFailed:
            return _result(tool_use_id, calls.text, None, True, calls)
        except WebhandError as error:
            return _result(tool_use_id, f"Error: {error}", None, True, calls)
        return _result(tool_use_id, "\n".join(t for t in (said, calls.text) if t), image, False, calls)

    async def _act(self, calls: Calls, request: dict[str, Any]) -> tuple[tuple[bytes, str] | None, str]:
        """Run the action's tool calls; the image it produced (a screenshot, a zoom) and its own text."""
        action = request.get("action")
        if action not in actions(self.version):
            raise InvalidArgument(f"Unknown action {action!r} for {self.version}.", "Use one of: " + ", ".join(actions(self.version)) + ".")
        if action == "screenshot":
            return _image(await calls("browser_take_screenshot", {})), ""
        if action in _CLICKS:
            button, count = _CLICKS[action]
            x, y = self._at(request)
            await calls("browser_mouse_click_xy", {"x": x, "y": y, "button": button, "click_count": count,
                                                   "modifiers": _modifiers(request.get("text"))})
            self._cursor = (x, y)
        elif action == "mouse_move":
            x, y = point(request.get("coordinate"), "coordinate")
            await calls("browser_mouse_move_xy", {"x": x, "y": y})
            self._cursor = (x, y)
        elif action == "left_click_drag":
            start = point(request.get("start_coordinate"), "start_coordinate") if "start_coordinate" in request else self._at({})
            end = point(request.get("coordinate"), "coordinate")
            await calls("browser_mouse_drag_xy", {"start_x": start[0], "start_y": start[1], "end_x": end[0], "end_y": end[1]})
            self._cursor = end
        elif action in ("left_mouse_down", "left_mouse_up"):
            x, y = self._at(request)
            await calls("browser_mouse_button_xy", {"action": action.removeprefix("left_mouse_"), "x": x, "y": y})
            self._cursor = (x, y)
        elif action == "scroll":
            if request.get("text"):
                raise InvalidArgument("Scrolling with keys held is not supported.", "Scroll without text, or press the keys separately.")
            x, y = self._at(request)
            direction = _DIRECTIONS.get(request.get("scroll_direction"))  # type: ignore[arg-type]
            amount = request.get("scroll_amount", 3)
            if direction is None or not isinstance(amount, (int, float)) or isinstance(amount, bool) or amount <= 0:
                raise InvalidArgument("scroll needs scroll_direction (up, down, left, right) and a positive scroll_amount.",
                                      "Call again with both.")
            await calls("browser_mouse_wheel_xy", {"x": x, "y": y, "delta_x": direction[0] * amount * SCROLL_STEP,
                                                   "delta_y": direction[1] * amount * SCROLL_STEP})
            self._cursor = (x, y)
        elif action == "type":
            await calls("browser_keyboard_type", {"text": _text(request)})
        elif action == "key":
            # xdotool's syntax: chords joined by "+", several of them separated by spaces.
            for combo in _text(request).split():
                await calls("browser_press_key", {"key": chord(combo.split("+") if combo != "+" else ["+"])})
        elif action == "hold_key":
            await calls("browser_key_hold", {"key": chord(_text(request).split("+")), "seconds": _duration(request)})
        elif action == "wait":
            await calls("browser_wait_for", {"time": _duration(request)})
        elif action == "cursor_position":
            if self._cursor is None:
                raise InvalidArgument("The mouse has not been moved yet.", "Move it first (mouse_move) or click somewhere.")
            return None, f"X={self._cursor[0]},Y={self._cursor[1]}"
        elif action == "zoom":
            region = request.get("region")
            if not isinstance(region, (list, tuple)) or len(region) != 4:
                raise InvalidArgument("zoom needs region: [x0, y0, x1, y1].", "Give the region's corners in screenshot pixels.")
            return _image(await calls("browser_zoom", dict(zip(("x0", "y0", "x1", "y1"), region, strict=True)))), ""
        return None, ""

    def _at(self, request: dict[str, Any]) -> tuple[Any, Any]:
        if request.get("coordinate") is not None:
            return point(request["coordinate"], "coordinate")
        if self._cursor is None:
            raise InvalidArgument("No coordinate was given and the mouse has not been moved yet.", "Give coordinate: [x, y].")
        return self._cursor


def _text(request: dict[str, Any]) -> str:
    text = request.get("text")
    if not isinstance(text, str) or not text:
        raise InvalidArgument("This action needs text.", "Give text (the keys or the text to type).")
    return text


def _duration(request: dict[str, Any]) -> float:
    duration = request.get("duration")
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or not 0 <= duration <= MAX_DURATION:
        raise InvalidArgument(f"duration must be a number of seconds from 0 to {MAX_DURATION:g}, not {duration!r}.",
                              "Call again with a shorter duration, several times if needed.")
    return float(duration)


def _modifiers(text: Any) -> list[str]:
    if not text:
        return []
    if not isinstance(text, str):
        raise InvalidArgument("text (the keys held during the click) must be a string like 'shift' or 'ctrl+shift'.", "Call again.")
    held = chord(text.split("+") + ["a"]).split("+")[:-1]  # modifiers only: checked as a chord's
    return held


def _image(reply: Any) -> tuple[bytes, str] | None:
    return (reply.images[0].data, reply.images[0].mime_type) if reply.images else None


def _png_size(data: bytes) -> tuple[int, int]:
    from webhand.images.fitting import open_image

    return open_image(data).size


def _result(tool_use_id: str, text: str, image: tuple[bytes, str] | None, failed: bool, calls: Calls) -> ComputerResult:
    content: list[dict[str, Any]] = [{"type": "text", "text": text or "Done."}]
    if image is not None:
        content.append({"type": "image", "source": {"type": "base64", "media_type": image[1],
                                                    "data": base64.b64encode(image[0]).decode()}})
    item = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if failed:
        item["is_error"] = True
    return ComputerResult(item, text, failed, image[0] if image else None, image[1] if image else "image/png", calls.replies)
