"""A scripted agent for MiniWoB++ that sees the page only as a model would: through tool replies.

It reads the default ``browser_snapshot`` (the snapshot contract: text lines, headings, and
control lines ``role "name" [e12] states…``) and action replies, and acts only through refs with
browser_click / browser_type / browser_select_option / browser_check / browser_press_key. It
never calls browser_eval and never reads the DOM: if the snapshot lacks what a task needs, the
agent fails, which is the point. One small solver per task reads the instruction from the
snapshot text and picks controls by role and name (or by the label hint an unnamed control has).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from corpus_site import controls, fold


class AgentStuck(AssertionError):
    """The snapshot did not show what the task needs, or an action failed."""


@dataclass
class Control:
    role: str
    name: str
    ref: str
    rest: str  # the states after the ref: checked, value="…", hint="…" …

    def state(self, key: str) -> str | None:
        found = re.search(rf'\b{key}=("(?:[^"\\]|\\.)*")', self.rest)
        return json.loads(found.group(1)) if found else None

    @property
    def hint(self) -> str:
        return self.state("hint") or ""


class Screen:
    """One snapshot, as the agent reads it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = [line.strip() for line in text.splitlines()]
        self.controls = [Control(c["role"], c["name"], c["ref"], c["rest"]) for c in controls(text)]
        self.folded = fold(text)

    def instruction(self, pattern: str) -> re.Match[str]:
        found = re.search(pattern, self.folded)
        if not found:
            raise AgentStuck(f"the instruction ({pattern}) is not in the snapshot:\n{self.text}")
        return found

    def all(self, *roles: str) -> list[Control]:
        return [c for c in self.controls if c.role in roles]

    def nth(self, roles: str | tuple[str, ...], index: int = 0) -> Control:
        roles = (roles,) if isinstance(roles, str) else roles
        found = self.all(*roles)
        if index >= len(found):
            raise AgentStuck(f"no {'/'.join(roles)} number {index + 1} in the snapshot:\n{self.text}")
        return found[index]

    def find(self, role: str | tuple[str, ...], name: str | None = None, *, hint: str | None = None) -> Control:
        roles = (role,) if isinstance(role, str) else role
        for control in self.all(*roles):
            if name is not None and fold(control.name) != fold(name):
                continue
            if hint is not None and hint.lower() not in (control.hint + " " + control.name).lower():
                continue
            return control
        hinted = f" hinted {hint!r}" if hint else ""
        raise AgentStuck(f"no {'/'.join(roles)} named {name!r}{hinted} in the snapshot:\n{self.text}")

    def text_after(self, label: str) -> str:
        """The value shown beside a label: the rest of its line, or the next line (a table row, a cell)."""
        for index, line in enumerate(self.lines):
            if line == label and index + 1 < len(self.lines):
                return self.lines[index + 1]
            found = re.match(rf"{re.escape(label)}\s*[:|]?\s*(\S.*)$", line)
            if found:
                return found.group(1).strip(" |")
        raise AgentStuck(f"no line starting with {label!r} in the snapshot:\n{self.text}")


class Agent:
    """Acts through one conversation's tools; every reply is checked, nothing else is read."""

    def __init__(self, tools) -> None:
        self.tools = tools
        self.transcript: list[str] = []

    async def _call(self, name: str, arguments: dict) -> str:
        reply = await self.tools.call(name, arguments)
        self.transcript.append(f"{name} {json.dumps(arguments)} -> {reply.text[:300]}")
        if reply.is_error:
            raise AgentStuck(f"{name} failed: {reply.text}")
        return reply.text

    async def look(self) -> Screen:
        return Screen(await self._call("browser_snapshot", {}))

    async def click(self, control: Control) -> None:
        await self._call("browser_click", {"ref": control.ref})

    async def type(self, control: Control, text: str) -> None:
        await self._call("browser_type", {"ref": control.ref, "text": text})

    async def select(self, control: Control, *values: str) -> None:
        await self._call("browser_select_option", {"ref": control.ref, "values": list(values)})

    async def check(self, control: Control) -> None:
        await self._call("browser_check", {"ref": control.ref})

    async def press(self, key: str, control: Control | None = None) -> None:
        await self._call("browser_press_key", {"key": key, **({"ref": control.ref} if control else {})})

    async def start(self) -> Screen:
        """Click MiniWoB's START cover, then look at the task."""
        screen = await self.look()
        start = next((c for c in screen.controls if c.name == "START"), None)
        if start is None:
            raise AgentStuck(f"no START control in the snapshot:\n{screen.text}")
        await self.click(start)
        return await self.look()

    async def solve(self, task: str) -> None:
        screen = await self.start()
        await SOLVERS[task](self, screen)


Solver = Callable[[Agent, Screen], Awaitable[None]]
SOLVERS: dict[str, Solver] = {}


def solves(*tasks: str) -> Callable[[Solver], Solver]:
    def register(solver: Solver) -> Solver:
        for task in tasks:
            SOLVERS[task] = solver
        return solver
    return register


ORDINAL = r"(\d+)(?:st|nd|rd|th)"


@solves("click-button", "unicode-test")
async def click_named_button(agent: Agent, screen: Screen) -> None:
    name = screen.instruction(r'Click on the "(.+?)" button\.').group(1)
    await agent.click(screen.find("button", name))


@solves("click-link")
async def click_named_link(agent: Agent, screen: Screen) -> None:
    name = screen.instruction(r'Click on the link "(.+?)"\.').group(1)
    await agent.click(screen.find(("link", "clickable"), name))  # MiniWoB's links are spans with a click handler


@solves("click-test")
async def click_the_button(agent: Agent, screen: Screen) -> None:
    screen.instruction(r"Click the button\.")
    await agent.click(screen.nth("button", 0))


@solves("click-test-2", "click-test-transfer")
async def click_button_by_word(agent: Agent, screen: Screen) -> None:
    name = screen.instruction(r"Click button (\w+)\.").group(1)
    await agent.click(screen.find("button", name))


@solves("click-button-sequence")
async def click_two_buttons(agent: Agent, screen: Screen) -> None:
    first, second = screen.instruction(r"Click button (\w+), then click button (\w+)\.").groups()
    await agent.click(screen.find("button", first))
    await agent.click((await agent.look()).find("button", second))


@solves("enter-text", "enter-text-dynamic", "enter-text-2")
async def enter_text(agent: Agent, screen: Screen) -> None:
    found = screen.instruction(r'(?:Enter|Type) "(.+?)" (into the text field|in all (?:lower|upper) case)')
    case = found.group(2)  # enter-text-2 draws either case
    text = found.group(1).lower() if "lower" in case else found.group(1).upper() if "upper" in case else found.group(1)
    await agent.type(screen.nth("textbox", 0), text)
    await agent.click(screen.find("button", "Submit"))


@solves("login-user")
async def login(agent: Agent, screen: Screen) -> None:
    user, password = screen.instruction(r'Enter the username "(.+?)" and the password "(.+?)"').groups()
    await agent.type(screen.find("textbox", hint="Username"), user)
    await agent.type(screen.find("textbox", hint="Password"), password)
    await agent.click(screen.find("button", "Login"))


@solves("enter-password")
async def enter_password_twice(agent: Agent, screen: Screen) -> None:
    password = screen.instruction(r'Enter the password "(.+?)" into both text fields').group(1)
    for field in screen.all("textbox")[:2]:
        await agent.type(field, password)
    await agent.click(screen.find("button", "Submit"))


@solves("focus-text", "focus-text-2")
async def focus_textbox(agent: Agent, screen: Screen) -> None:
    found = screen.instruction(rf"Focus into the (?:{ORDINAL} input )?textbox\.")
    index = int(found.group(1)) - 1 if found.group(1) else 0
    await agent.click(screen.nth("textbox", index))


@solves("click-checkboxes", "click-checkboxes-transfer")
async def tick_checkboxes(agent: Agent, screen: Screen) -> None:
    listed = screen.instruction(r"Select (.+?) and click Submit\.").group(1)
    wanted = [] if listed == "nothing" else [word.strip() for word in listed.split(",")]
    for word in wanted:
        await agent.check(screen.find("checkbox", word))
    await agent.click(screen.find("button", "Submit"))


@solves("click-option")
async def pick_radio(agent: Agent, screen: Screen) -> None:
    name = screen.instruction(r"Select (.+?) and click Submit\.").group(1)
    await agent.click(screen.find("radio", name))
    await agent.click(screen.find("button", "Submit"))


@solves("choose-list")
async def choose_from_list(agent: Agent, screen: Screen) -> None:
    name = screen.instruction(r"Select (.+?) from the list and click Submit\.").group(1)
    await agent.select(screen.nth(("combobox", "listbox")), name)
    await agent.click(screen.find("button", "Submit"))


@solves("click-scroll-list")
async def choose_several(agent: Agent, screen: Screen) -> None:
    listed = screen.instruction(r"Select (.+?) from the scroll list and click Submit\.").group(1)
    await agent.select(screen.nth(("listbox", "combobox")), *[item.strip() for item in listed.split(",")])
    await agent.click(screen.find("button", "Submit"))


@solves("click-tab")
async def open_tab(agent: Agent, screen: Screen) -> None:
    number = screen.instruction(r"Click on Tab #(\d+)\.").group(1)
    await agent.click(screen.find(("link", "tab"), f"Tab #{number}"))


@solves("click-dialog", "click-dialog-2")
async def close_dialog(agent: Agent, screen: Screen) -> None:
    label = screen.instruction(r'(?:clicking the|labeled) "(.+?)"').group(1)
    # jQuery UI's "x" is a button whose accessible name is "Close".
    await agent.click(screen.find("button", "Close" if label == "x" else label))


@solves("click-widget")
async def click_widget(agent: Agent, screen: Screen) -> None:
    kind = screen.instruction(r'Click on a "(\w+)" widget\.').group(1)
    roles = {"button": "button", "text": "textbox", "textarea": "textbox", "checkbox": "checkbox", "radio": "radio"}
    if kind not in roles:
        raise AgentStuck(f"unknown widget kind {kind!r}")
    await agent.click(screen.nth(roles[kind]))


@solves("click-collapsible", "click-collapsible-nodelay")
async def expand_then_submit(agent: Agent, screen: Screen) -> None:
    screen.instruction(r"Expand the section below and click submit\.")
    section = next((c for c in screen.controls if c.name.startswith("Section #")), None)
    if section is None:
        raise AgentStuck(f"no section header in the snapshot:\n{screen.text}")
    await agent.click(section)
    await agent.click((await agent.look()).find("button", "Submit"))


@solves("read-table")
async def copy_table_value(agent: Agent, screen: Screen) -> None:
    label = screen.instruction(r"Enter the value of (.+?) into the text field").group(1)
    await agent.type(screen.nth("textbox", 0), screen.text_after(label))
    await agent.click(screen.find("button", "Submit"))


@solves("find-word")
async def type_nth_word(agent: Agent, screen: Screen) -> None:
    found = screen.instruction(rf"Find the {ORDINAL} word in the paragraph")
    index = int(found.group(1)) - 1
    # The paragraph is the text line right after the instruction's line.
    at = next((i for i, line in enumerate(screen.lines) if found.group(0) in fold(line)), len(screen.lines))
    paragraph = next((line for line in screen.lines[at + 1:] if line and not controls(line)), "")
    words = [re.sub(r"[^A-Za-z0-9]", "", word) for word in paragraph.split()]
    if index >= len(words):
        raise AgentStuck(f"no paragraph of {index + 1} words after the instruction:\n{screen.text}")
    await agent.type(screen.nth("textbox", 0), words[index])
    await agent.click(screen.find("button", "Submit"))


@solves("simple-arithmetic")
async def do_the_sum(agent: Agent, screen: Screen) -> None:
    screen.instruction(r"Solve the math problem")
    left, operator, right = screen.instruction(r"(-?\d+) ([-+x*]) (-?\d+) =").groups()
    a, b = int(left), int(right)
    answer = a + b if operator == "+" else a - b if operator == "-" else a * b
    await agent.type(screen.nth("textbox", 0), str(answer))
    await agent.click(screen.find("button", "Submit"))


@solves("copy-paste")
async def copy_textarea(agent: Agent, screen: Screen) -> None:
    screen.instruction(r"Copy the text in the textarea below, paste it into the textbox")
    boxes = screen.all("textbox")
    source = next((b.state("value") for b in boxes if b.state("value")), None)
    if source is None:
        raise AgentStuck(f"the textarea's text is not in the snapshot:\n{screen.text}")
    empty = next((b for b in boxes if not b.state("value")), None)
    if empty is None:
        raise AgentStuck(f"no empty textbox in the snapshot:\n{screen.text}")
    await agent.type(empty, source)
    await agent.click(screen.find("button", "Submit"))


@solves("use-spinner")
async def set_spinner(agent: Agent, screen: Screen) -> None:
    number = screen.instruction(r"Select (-?\d+) with the spinner").group(1)
    await agent.type(screen.nth("spinbutton", 0), number)
    await agent.click(screen.find("button", "Submit"))
