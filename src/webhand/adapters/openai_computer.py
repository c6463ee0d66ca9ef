"""OpenAI's computer-use tool, served from a conversation's browser session (no SDK needed).

    computer = OpenAIComputer(browser)                         # or a Conversation
    tools = [await computer.definition()]                      # {"type": "computer_use_preview", ...}
    ...                                                        # the model answers with computer_call items
    result = await computer.run(call)                          # the computer_call item, as a dict
    next_input = [result.item]                                 # its computer_call_output

The screen is the tab's viewport, as webhand sends images (downscaled to fit the model); the
display size in the definition is that image's size, so the model's x and y are pixels of the
screenshot it saw (``page/coordinates.py``). Every result is a fresh screenshot, as the API wants;
what webhand said (what was under the point, what changed, or why the action was refused) is
``result.text``, for the host to log or pass on as a message. Pending safety checks are the
host's to acknowledge: this adapter never acknowledges one.

Actions: click (button left, right, wheel; back and forward go back and forward in the history),
double_click, drag (along its path), keypress, move, screenshot, scroll, type, wait; a call with
several ``actions`` runs them in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webhand.adapters.computer_use import ActionFailed, Calls, ComputerResult, chord, conversation, data_url
from webhand.errors import InvalidArgument, WebhandError

if TYPE_CHECKING:
    from webhand.api import Browser
    from webhand.host import Conversation

ACTIONS = ("click", "double_click", "drag", "keypress", "move", "screenshot", "scroll", "type", "wait")
#: How long ``wait`` (which has no duration) waits: the pause of OpenAI's own sample code.
WAIT_SECONDS = 2.0
_BUTTONS = {"left": "left", "right": "right", "wheel": "middle"}


class OpenAIComputer:
    """OpenAI's computer-use tool on one conversation's browser."""

    def __init__(self, target: Conversation | Browser, *, tool_type: str = "computer_use_preview") -> None:
        self.context = conversation(target)
        self.tool_type = tool_type

    async def definition(self) -> dict[str, Any]:
        """The tool to list in the request (a screenshot is taken now to learn the display size)."""
        from webhand.images.fitting import open_image

        shot = await self.context.call("browser_take_screenshot", {})
        if shot.is_error:
            raise WebhandError(shot.text.removeprefix("Error: "), "Fix the browser setup, then build the tool again.")
        width, height = open_image(shot.images[0].data).size
        return {"type": self.tool_type, "display_width": width, "display_height": height, "environment": "browser"}

    async def run(self, call: dict[str, Any]) -> ComputerResult:
        """Do the actions of one ``computer_call`` item; returns its ``computer_call_output``."""
        calls = Calls(self.context)
        steps = call.get("actions") if call.get("actions") is not None else [call.get("action")]
        failed = False
        try:
            if not isinstance(steps, list) or not steps:
                raise InvalidArgument("The computer_call has no action.", "Send an action.")
            for step in steps:
                await self._act(calls, step)
        except ActionFailed:
            failed = True
        except WebhandError as error:
            failed = True
            calls.replies.append(_said(f"Error: {error}"))
        text = calls.text
        # The output is always a screenshot: after a failure too, so the model sees where things are.
        shot = await self.context.call("browser_take_screenshot", {})
        if shot.is_error or not shot.images:
            text += "\n" + shot.text
            return ComputerResult({"type": "computer_call_output", "call_id": call.get("call_id", ""),
                                   "output": {"type": "computer_screenshot", "image_url": ""}}, text, True, None,
                                  replies=calls.replies)
        image = shot.images[0]
        item = {"type": "computer_call_output", "call_id": call.get("call_id", ""),
                "output": {"type": "computer_screenshot", "image_url": data_url(image.mime_type, image.data)}}
        return ComputerResult(item, text, failed, image.data, image.mime_type, calls.replies)

    async def _act(self, calls: Calls, action: Any) -> None:
        if not isinstance(action, dict) or action.get("type") not in ACTIONS:
            kind = action.get("type") if isinstance(action, dict) else action
            raise InvalidArgument(f"Unknown computer action {kind!r}.", "Use one of: " + ", ".join(ACTIONS) + ".")
        kind = action["type"]
        if kind == "screenshot":
            return  # the output is a screenshot anyway
        if kind == "click":
            button = action.get("button", "left")
            if button in ("back", "forward"):  # a mouse's side buttons move in the history
                await calls("browser_back" if button == "back" else "browser_forward", {})
                return
            if button not in _BUTTONS:
                raise InvalidArgument(f"Unknown button {button!r}.", "Use left, right, wheel, back or forward.")
            await calls("browser_mouse_click_xy", {"x": action.get("x"), "y": action.get("y"), "button": _BUTTONS[button],
                                                   "modifiers": _held(action)})
        elif kind == "double_click":
            await calls("browser_mouse_click_xy", {"x": action.get("x"), "y": action.get("y"), "click_count": 2,
                                                   "modifiers": _held(action)})
        elif kind == "move":
            await calls("browser_mouse_move_xy", {"x": action.get("x"), "y": action.get("y")})
        elif kind == "drag":
            path = action.get("path")
            if not isinstance(path, list) or len(path) < 2 or not all(isinstance(p, dict) for p in path):
                raise InvalidArgument("drag needs a path of at least two points {x, y}.", "Give the path from start to end.")
            if len(path) == 2:
                await calls("browser_mouse_drag_xy", {"start_x": path[0].get("x"), "start_y": path[0].get("y"),
                                                      "end_x": path[1].get("x"), "end_y": path[1].get("y")})
                return
            await calls("browser_mouse_button_xy", {"action": "down", "x": path[0].get("x"), "y": path[0].get("y")})
            for middle in path[1:-1]:
                await calls("browser_mouse_move_xy", {"x": middle.get("x"), "y": middle.get("y")})
            await calls("browser_mouse_button_xy", {"action": "up", "x": path[-1].get("x"), "y": path[-1].get("y")})
        elif kind == "scroll":
            await calls("browser_mouse_wheel_xy", {"x": action.get("x"), "y": action.get("y"),
                                                   "delta_x": action.get("scroll_x", 0), "delta_y": action.get("scroll_y", 0)})
        elif kind == "type":
            await calls("browser_keyboard_type", {"text": action.get("text")})
        elif kind == "keypress":
            keys = action.get("keys")
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise InvalidArgument("keypress needs keys: a list of key names, e.g. [\"CTRL\", \"A\"].", "Call again with keys.")
            await calls("browser_press_key", {"key": _pressed(keys)})
        elif kind == "wait":
            await calls("browser_wait_for", {"time": WAIT_SECONDS})


def _pressed(keys: list[str]) -> str:
    # ["ENTER"] is Enter; a lone letter is that letter's key (OpenAI writes them in capitals).
    if len(keys) == 1 and len(keys[0]) == 1 and keys[0].isalpha():
        return keys[0].lower()
    return chord(keys)


def _held(action: dict[str, Any]) -> list[str]:
    keys = action.get("keys") or []
    if not isinstance(keys, list):
        raise InvalidArgument("keys (held during the click) must be a list of key names.", "Call again.")
    return chord([*keys, "a"]).split("+")[:-1] if keys else []


def _said(text: str) -> Any:
    from webhand.response import ToolResult

    return ToolResult(text, [], None, True, [])
