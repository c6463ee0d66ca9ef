"""Many actions in one call: browser_interact (a list of actions) and browser_fill_form (a form).

Both run the single-action implementations of interaction.py (``ACTIONS``) and waiting.py, in
order, waiting for each step's effects before the next; they stop at the first failure and say
which step failed, why, and what did not run. Every step is validated before the first runs.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, model_validator

from webhand.durations import Timeout
from webhand.errors import InvalidArgument, WebhandError
from webhand.response import Response
from webhand.session.changes import BeforeAction, settle, settle_changes
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, ToolArgs, tool
from webhand.tools.definition import ElementArgs
from webhand.tools.interaction import (ACTIONS, Perform, SelectArgs, TypeArgs, perform_check,
                                       perform_select_option, perform_type, perform_uncheck)
from webhand.tools.waiting import WaitArgs, perform_wait

STEP_ACTIONS: dict[str, tuple[type[ToolArgs], Perform]] = {**ACTIONS, "wait_for": (WaitArgs, perform_wait)}
ActionName = Literal["click", "type", "press_key", "hover", "focus", "select_option", "check", "uncheck",
                     "scroll", "drag", "wait_for"]


async def run_steps(session: Session, response: Response, steps: list[tuple[str, ToolArgs, Perform]], noun: str) -> None:
    """Run ``steps`` (label, arguments, implementation) in order; on a failure, raise. The reply
    ends with what they changed, after a failure too (what the steps before it did)."""
    before: BeforeAction = await settle_changes(session, response, action="steps", after_failure=True)
    total = len(steps)
    for number, (label, args, perform) in enumerate(steps, 1):
        response.waiting_for(f"step {number} of {total} ({label})")
        try:
            if before.settling is not None:  # follow what this step schedules, as a single action would
                before.settling.begin()
                await before.settling.begun()  # a step may be a key press with no script before its input
            line = await perform(session, args)
            await settle(before)  # the next step acts on the page this one left
        except WebhandError as error:
            rest = f" {noun.capitalize()}s {number + 1}–{total} did not run." if number < total else ""
            raise type(error)(f"{noun.capitalize()} {number} of {total} ({label}) failed: {error.message}",
                              (error.hint + rest).strip()) from None
        response.add(f"{number}. {line}")


# browser_interact --------------------------------------------------------------------------------
class Step(ToolArgs):
    model_config = ConfigDict(extra="allow")
    other_names = {"type": ("action",)}  # steps keyed as other designs key them: {"type": "click", ...}
    action: ActionName = Field(description="The action; the other keys are that tool's arguments, "
                                           "e.g. {\"action\": \"type\", \"ref\": \"e4\", \"text\": \"hi\"}.")


class InteractArgs(PageArgs):
    steps: list[Step] = Field(min_length=1, max_length=100,
                              description="Actions to run in order, each like the matching browser_<action> tool.")
    timeout: Timeout = None  # the whole list


def _parse_step(number: int, step: Step) -> tuple[str, ToolArgs, Perform]:
    model, perform = STEP_ACTIONS[step.action]
    arguments: dict[str, Any] = dict(step.model_extra or {})
    try:
        args = model.model_validate(arguments)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg'].removeprefix('Value error, ')}"
                             for e in error.errors())
        raise InvalidArgument(f"Step {number} ({step.action}) has invalid arguments: {problems}.",
                              f"Fix it; no step ran. Its arguments are those of browser_{step.action}.") from None
    what = arguments.get("ref") or arguments.get("selector") or arguments.get("key") or ""
    return (f"{step.action} {what}".strip(), args, perform)


@tool("browser_interact", capability="extra", destructive=True)
async def interact(session: Session, args: InteractArgs, response: Response) -> None:
    """Run several actions in order (click, type, press_key, hover, focus, select_option, check, uncheck, scroll, drag, wait_for), each waiting for the previous one's effects; stops at the first failure and says which step failed and why."""
    steps = [_parse_step(number, step) for number, step in enumerate(args.steps, 1)]
    await run_steps(session, response, steps, "step")


# browser_fill_form -------------------------------------------------------------------------------
class FormField(ToolArgs):
    # Playwright MCP's fields also carry a human-readable `name` and the field's `type`; webhand
    # reads the kind of field from the page itself.
    unused_arguments = {"name": "", "type": ""}
    ref: str | None = Field(None, description="Field ref from browser_snapshot.")
    selector: str | None = Field(None, description="CSS selector of the field, when there is no ref.")
    value: str | bool | list[str] = Field(
        description="Text for text fields (<secret>NAME</secret> for a secret); true/false for checkboxes and radios; "
                    "an option value or label, or a list of them, for selects.")

    @model_validator(mode="after")
    def _one_target(self) -> "FormField":
        if bool(self.ref) == bool(self.selector):
            raise ValueError("give exactly one of `ref` and `selector`")
        return self


class FillFormArgs(PageArgs):
    fields: list[FormField] = Field(min_length=1, max_length=200, description="Fields to fill, in order.")
    timeout: Timeout = None  # all the fields


_TRUE = {"true", "on", "yes", "checked", "1"}


def _field_step(field: FormField) -> tuple[str, ToolArgs, Perform]:
    """A step that looks at the field's kind, then runs the matching single action."""
    where = {"ref": field.ref, "selector": field.selector}

    async def fill(session: Session, _: ToolArgs) -> str:
        element = await session.element(field.ref, field.selector)
        try:
            kind = await element.kind()
        finally:
            await element.dispose()
        value = field.value
        if kind == "select":
            return await perform_select_option(session, SelectArgs(**where, values=value if isinstance(value, list) else [str(value)]))
        if kind in ("checkbox", "radio"):
            on = value if isinstance(value, bool) else str(value).strip().lower() in _TRUE
            return await (perform_check if on else perform_uncheck)(session, ElementArgs(**where))
        if kind == "text":
            if isinstance(value, list):
                raise InvalidArgument(f"{field.ref or field.selector} is a text field: give it a string, not a list.", "")
            return await perform_type(session, TypeArgs(**where, text=str(value).lower() if isinstance(value, bool) else value))
        raise InvalidArgument(f"{field.ref or repr(field.selector)} is not a form field (text, select, checkbox or radio).",
                              "Call browser_snapshot and use the field's ref; click buttons with browser_click.")

    return (field.ref or repr(field.selector), field, fill)


@tool("browser_fill_form", destructive=True)
async def fill_form(session: Session, args: FillFormArgs, response: Response) -> None:
    """Fill many form fields in one call: text fields, selects, checkboxes and radios (each by ref or selector)."""
    await run_steps(session, response, [_field_step(field) for field in args.fields], "field")
