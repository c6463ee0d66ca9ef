"""What the computer-use adapters share: the conversation's tools, key names, and results.

The vendors' computer-use tools (``anthropic_computer``, ``openai_computer``) are translations: a
model's action becomes calls of webhand's own ``vision`` tools (and ``browser_take_screenshot``,
``browser_press_key`` …) on the conversation's ``Conversation``, so they run in the same session,
with the same history, locks and masking as every other call, and one agent can mix refs and
pixels. No vendor SDK is needed: the tool definitions and results are the plain JSON the vendors'
APIs take.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webhand.errors import ConfigError, InvalidArgument

if TYPE_CHECKING:
    from webhand.api import Browser
    from webhand.host import Conversation
    from webhand.response import ToolResult

#: The tools an adapter calls: the ``vision`` group, and the screenshot, keys, waits and history of core.
NEEDED = ("browser_take_screenshot", "browser_mouse_click_xy", "browser_mouse_move_xy", "browser_mouse_drag_xy",
          "browser_mouse_button_xy", "browser_mouse_wheel_xy", "browser_keyboard_type", "browser_press_key",
          "browser_key_hold", "browser_wait_for", "browser_zoom", "browser_back")


def conversation(target: Conversation | Browser) -> Conversation:
    """The Conversation of ``target``, once it serves the tools the adapters translate into."""
    from webhand.host import Conversation

    context = getattr(target, "context", target)
    if not isinstance(context, Conversation):
        raise TypeError("Pass a webhand Browser (from open_browser) or a Conversation (from Webhand.context), "
                        f"not {type(target).__name__}.")
    missing = [name for name in NEEDED if name not in context.webhand.tools]
    if missing:
        raise ConfigError(f"The computer-use adapters need the 'vision' and 'core' tools, which this host does not serve "
                          f"({', '.join(missing)} missing).", "Add 'vision' to the capabilities (e.g. --caps core,vision).")
    return context


@dataclass
class ComputerResult:
    """One action's outcome: ``item`` is what goes back to the vendor's API (a ``tool_result``
    block, a ``computer_call_output`` item); ``text`` what webhand said (what was under the point,
    what changed, or the error), also for a host that logs it."""

    item: dict[str, Any]
    text: str
    is_error: bool
    screenshot: bytes | None = None
    mime_type: str = "image/png"
    replies: list[ToolResult] = field(default_factory=list)


class Calls:
    """Tool calls of one action on the conversation: the texts join, the first error stops them."""

    def __init__(self, context: Conversation) -> None:
        self.context = context
        self.replies: list[ToolResult] = []

    async def __call__(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        reply = await self.context.call(name, arguments or {})
        self.replies.append(reply)
        if reply.is_error:
            raise ActionFailed(reply.text)
        return reply

    @property
    def text(self) -> str:
        return "\n".join(r.text for r in self.replies if r.text)


class ActionFailed(Exception):
    """A tool call of the action failed: its reply (``Error: … what to do``) is the action's result."""


def data_url(mime_type: str, data: bytes) -> str:
    return f"data:{mime_type};base64,{base64.b64encode(data).decode()}"


def point(value: Any, what: str) -> tuple[Any, Any]:
    """An ``[x, y]`` pair as the model sent it (checked further by the tool: numbers on the image)."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise InvalidArgument(f"{what} must be [x, y], not {value!r}.", "Give two numbers: pixels of the last screenshot.")
    return value[0], value[1]


# Key names --------------------------------------------------------------------------------------
# xdotool's keysyms (Anthropic: "ctrl+a", "Return", "Page_Down", "KP_0") and OpenAI's names
# (["CTRL", "A"], "ENTER", "ESC", "ARROWLEFT"), lower-cased, to the names browser_press_key takes.
_KEYS = {
    "ctrl": "Control", "control": "Control", "control_l": "Control", "control_r": "Control",
    "alt": "Alt", "alt_l": "Alt", "alt_r": "Alt", "option": "Alt",
    "shift": "Shift", "shift_l": "Shift", "shift_r": "Shift",
    "super": "Meta", "super_l": "Meta", "super_r": "Meta", "meta": "Meta", "cmd": "Meta", "command": "Meta", "win": "Meta",
    "return": "Enter", "enter": "Enter", "kp_enter": "Enter", "backspace": "Backspace", "escape": "Escape", "esc": "Escape",
    "tab": "Tab", "space": "Space", "delete": "Delete", "del": "Delete", "insert": "Insert", "home": "Home", "end": "End",
    "page_up": "PageUp", "pageup": "PageUp", "prior": "PageUp", "page_down": "PageDown", "pagedown": "PageDown", "next": "PageDown",
    "up": "ArrowUp", "arrowup": "ArrowUp", "down": "ArrowDown", "arrowdown": "ArrowDown",
    "left": "ArrowLeft", "arrowleft": "ArrowLeft", "right": "ArrowRight", "arrowright": "ArrowRight",
    "caps_lock": "CapsLock", "capslock": "CapsLock", "menu": "ContextMenu",
    "minus": "-", "plus": "+", "equal": "=", "comma": ",", "period": ".", "slash": "/", "backslash": "\\",
    "semicolon": ";", "apostrophe": "'", "grave": "`", "bracketleft": "[", "bracketright": "]", "underscore": "_",
    "exclam": "!", "at": "@", "numbersign": "#", "dollar": "$", "percent": "%", "asciicircum": "^", "ampersand": "&",
    "asterisk": "*", "parenleft": "(", "parenright": ")", "question": "?", "colon": ":", "quotedbl": '"', "less": "<",
    "greater": ">", "bar": "|", "asciitilde": "~", "braceleft": "{", "braceright": "}",
    **{f"kp_{digit}": str(digit) for digit in range(10)}, **{f"f{n}": f"F{n}" for n in range(1, 13)},
}
_MODIFIERS = {"Control", "Alt", "Shift", "Meta"}


def key_name(name: str) -> str:
    """One vendor key name as browser_press_key names it; a single character stays itself."""
    if len(name) == 1:
        return name
    known = _KEYS.get(name.lower())
    if known is None:
        raise InvalidArgument(f"{name!r} is not a key name webhand knows.",
                              "Use names like Return, Tab, Escape, BackSpace, Up, Page_Down, F5, ctrl, shift, alt, or one character.")
    return known


def chord(names: list[str]) -> str:
    """Keys pressed together (modifiers first) as one chord: ["CTRL", "A"] -> "Control+a"."""
    keys = [key_name(n) for n in names if n]
    if not keys:
        raise InvalidArgument("No key was given.", "Give at least one key name.")
    modifiers, last = keys[:-1], keys[-1]
    if any(m not in _MODIFIERS for m in modifiers):
        raise InvalidArgument(f"Only the last key of {'+'.join(names)!r} may be other than ctrl, alt, shift or super.",
                              "Press the keys one after the other instead.")
    # A shortcut names its letter in capitals (CTRL+A); the key is the lower-case one (as a person
    # presses it: Shift is its own modifier).
    if modifiers and len(last) == 1 and last.isalpha():
        last = last.lower()
    return "+".join([*modifiers, last])
