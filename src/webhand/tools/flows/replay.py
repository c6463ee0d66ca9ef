"""Private: running a flow at browser speed, checking each step, healing small shifts, stopping
where the model is needed.

A step runs through the ordinary tool path (``ConversationSessions.run_tool``), so it settles and
reports its changes like any call, and is recorded in the session's history. Before it, each of
its targets is found on the page as it is now (tools/flows/locate.py) and its ref put in the arguments;
a coordinate step clicks the same place of its element's current box. After it, what the step was
seen to do when recorded (``Expect``) is checked:

- the URL: for a step that is not browser_navigate, the path must be the recorded one's (query
  and fragment may differ: a parameter, a session id); ``url_pattern``, when set, must match;
- a new tab, a download, a dialog, when one came (waited for, capped, since the browser may tell
  of it after the step's settle ended);
- the changes, loosely: each live region or dialog the step added when recorded (a ``status``,
  ``alert``, ``log``, ``dialog`` or ``alertdialog`` line with ``+``) must be added again, and
  none it did not add may be (an error ``alert`` after a save). Text and values are not compared:
  they hold parameters and times. Only a list of changes is compared with a list of changes: when
  either reply is a whole page instead (a new document, a dialog answered), this check is skipped.

When a target is not found, the call fails, or an expectation differs, the flow stops there: the
session is left as it is, and the account says which step, what was expected, what the page shows
near where the target was, and the calls that would go on, so the model carries on with the
ordinary tools.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from webhand.config import Settings
from webhand.conversation_files import ConversationFiles
from webhand.engine.url_glob import url_matches
from webhand.errors import ActionTimeout, InvalidArgument, WebhandError
from webhand.tools.flows.format import PARAM_PATTERN, Expect, Flow, Step, Target, catalog
from webhand.tools.flows.locate import Located, describe, locate, nearby
from webhand.page.snapshot import take_snapshot
from webhand.response import Response, ToolResult, page_line
from webhand.session.conversation import ConversationSessions
from webhand.session.recording import POINT_ARGUMENTS, REF_FIELDS
from webhand.session.session import Session

#: Roles whose lines, added by a step, are its outcome (tools/flows/replay.py's change check).
OUTCOME_ROLES = ("status", "alert", "log", "dialog", "alertdialog")
#: How a reply's list of changes starts (session/changes.py); a new page is a whole snapshot instead.
_DIFF = "Page changes since the last snapshot"
_ADDED = re.compile(r"^\+ (" + "|".join(OUTCOME_ROLES) + r")\b")
#: Most remaining calls listed in a stop's account.
REMAINING_LIMIT = 10


@dataclass
class FlowRun:
    flow: Flow
    ran: int = 0  # steps that ran and matched
    healed: list[str] = field(default_factory=list)  # "step 3: found by label 'Email' (role+name found 0)"
    refreshed: list[str] = field(default_factory=list)  # recorded ways that no longer find their element
    stopped_at: int = 0  # the step the flow stopped at (0: it ran to its end)
    expected: str = ""  # at a stop: what the step expected
    instead: str = ""  # at a stop: what happened instead
    page: str = ""  # at a stop: the snapshot lines near where the target was (page text)
    remaining: list[str] = field(default_factory=list)  # at a stop: the calls that would go on
    last_reply: str = ""  # the last step's reply
    values: dict[str, str] = field(default_factory=dict)  # the parameters' values this run
    updated: bool = False  # healed ways were written back into ``flow``

    @property
    def finished(self) -> bool:
        return not self.stopped_at


class Runner:
    """The conversation a flow runs in: its tools called as a host calls them, on one session."""

    def __init__(self, sessions: ConversationSessions, settings: Settings, files: ConversationFiles,
                 session: str | None = None) -> None:
        self.sessions, self.settings, self.files, self.session = sessions, settings, files, session

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        tool = catalog()[name]
        response = Response(self.settings, name, self.files)
        try:
            if not tool.is_enabled(self.settings):
                raise InvalidArgument(f"The flow calls {name}, which this configuration turns off.",
                                      "Enable it, or run the flow where it is on.")
            args = tool.parse({**arguments, **({"session": self.session} if self.session else {})})
            timeout = float(getattr(args, "timeout", None) or self.settings.timeout)
            try:
                async with asyncio.timeout(timeout + 5):
                    await self.sessions.run_tool(tool, args, response, timeout=timeout)
            except TimeoutError:
                raise ActionTimeout(f"{name} did not finish within {timeout + 5:g} s.",
                                    "The page may be hung: call browser_snapshot.") from None
        except WebhandError as error:
            response.fail(error)
        return response.result()

    async def on_session(self, work: Callable[[Session], Awaitable[Any]]) -> Any:
        """``work`` on the flow's session, in its turn (as a call runs, unrecorded); it may run
        while a dialog is open, so it reads no page then (``Session.open_dialogs``)."""
        box: list[Any] = []
        response = Response(self.settings, "browser_run_flow", self.files)

        async def run(session: Session) -> None:
            box.append(await work(session))

        await self.sessions.run(self.session, run, response, timeout=self.settings.timeout, during_dialog=True)
        return box[0] if box else None


def with_params(flow: Flow, given: dict[str, str]) -> dict[str, str]:
    """The value of each parameter: given, else its default; refused before anything runs when one
    is missing or unknown."""
    unknown = [name for name in given if name not in flow.params]
    if unknown:
        raise InvalidArgument(f"The flow {flow.name} takes no parameter {page_line(unknown[0], 64)!r}.",
                              "Its parameters: " + (", ".join(flow.params) or "none") + ".")
    values = {name: given[name] if name in given else param.default for name, param in flow.params.items()}
    missing = [name for name, value in values.items() if value is None]
    if missing:
        raise InvalidArgument(f"The flow {flow.name} needs the parameter {missing[0]!r}.",
                              "Give params={" + ", ".join(f'"{m}": "…"' for m in missing) + "}.")
    return {name: str(value) for name, value in values.items()}


def _substitute(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        return PARAM_PATTERN.sub(lambda m: values.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {k: _substitute(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, values) for v in value]
    return value


def _with_refs(value: Any, refs: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: refs.get(v, v) if k in REF_FIELDS and isinstance(v, str) else _with_refs(v, refs)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_with_refs(v, refs) for v in value]
    return value


def as_call(step: Step, values: dict[str, str] | None = None) -> str:
    """A step as the tool call it makes, its targets described and its parameters given their
    values (for a stop's remaining calls, which the model makes itself)."""
    described = {key: f"<{describe(target)}>" for key, target in step.targets.items()}
    arguments = json.dumps(_with_refs(_substitute(step.arguments, values or {}), described), ensure_ascii=False)
    return f"{step.tool} {page_line(arguments, 300)}"


async def run_flow(flow: Flow, params: dict[str, str], runner: Runner, *, update: bool = False) -> FlowRun:
    """Run ``flow`` on the runner's session (see the module's docstring); ``update``: write the
    ways of healed and refreshed targets back into the returned ``run.flow``."""
    values = with_params(flow, params)
    run = FlowRun(flow, values=values)
    updated = flow.model_copy(deep=True)
    if flow.start_url:
        result = await runner.call("browser_navigate", {"url": _substitute(flow.start_url, values)})
        if result.is_error:
            run.stopped_at, run.expected = 1, "the flow's start page to open"
            run.instead = result.text.removeprefix("Error: ").split("\n", 1)[0]
            run.remaining = [as_call(s, values) for s in flow.steps[:REMAINING_LIMIT]]
            return run
    for number, step in enumerate(flow.steps, 1):
        arguments = _substitute(step.arguments, values)
        refs: dict[str, str] = {}
        # The step's point targets, in order, are its points' elements (a drag's start, then its end).
        points = iter(POINT_ARGUMENTS.get(step.tool, {}).values())
        for key, target in step.targets.items():
            names = next(points, None) if target.point is not None else None
            by_point = names is not None
            located: Located = await runner.on_session(lambda s, t=target, p=by_point: _locate(s, t, p))
            if not located.found:
                page = await runner.on_session(lambda s, t=target: _nearby(s, t))
                return _stop(run, number, f"{describe(target)} (the step: {step.note or step.tool})",
                             f"no way finds exactly one element that agrees: {located.tried}", page)
            if located.ref:
                refs[key] = located.ref
            if located.healed:
                run.healed.append(f"step {number}: {describe(target)} {located.healed}")
            if located.stale and not located.healed:  # a heal's line already says which ways failed
                run.refreshed.append(f"step {number}: {describe(target)} found by {located.way}; "
                                     f"no longer: {'; '.join(located.stale)}")
            if (located.healed or located.stale) and located.fresh:
                fresh = {k: v for k, v in located.fresh.items() if k in Target.model_fields}
                updated.steps[number - 1].targets[key] = Target.model_validate({**fresh, "point": target.point})
            if names is not None:
                point = await runner.on_session(lambda s, b=located.box, t=target: _point(s, b, t))
                if point is None:
                    return _stop(run, number, f"a point in {describe(target)}", "its element has no box to click", "")
                arguments = {**arguments, names[0]: point[0], names[1]: point[1]}
        before = await runner.on_session(_baseline)
        result = await runner.call(step.tool, _with_refs(arguments, refs))
        run.last_reply = result.text
        if result.is_error:
            return _stop(run, number, f"{step.note or step.tool} to succeed",
                         "the call failed: " + result.text.removeprefix("Error: ").split("\n", 1)[0],
                         await runner.on_session(lambda s, t=next(iter(step.targets.values()), None): _nearby(s, t)))
        after = await runner.on_session(lambda s, e=step.expect, b=before: _state_once_due(s, e, b))
        difference = _differs(step, before, after, result.text)
        if difference:
            return _stop(run, number, difference[0], difference[1],
                         await runner.on_session(lambda s, t=next(iter(step.targets.values()), None): _nearby(s, t)))
        run.ran = number
    if update and (run.healed or run.refreshed):
        run.flow, run.updated = updated, True
    return run


def _stop(run: FlowRun, number: int, expected: str, instead: str, page: str) -> FlowRun:
    run.stopped_at, run.expected, run.instead, run.page = number, expected, instead, page
    run.remaining = [f"{n}. {as_call(s, run.values)}" for n, s in enumerate(run.flow.steps[number - 1:], number)][:REMAINING_LIMIT]
    return run


async def _locate(session: Session, target: Target, by_point: bool) -> Located:
    return await locate(await session.tab(), target, need_ref=not by_point)


async def _nearby(session: Session, target: Target | None) -> str:
    tab = session.active_tab
    if tab is None or tab.closed or session.open_dialogs():
        return ""
    shot = await take_snapshot(tab, max_refs=None)
    return nearby(shot.text, target) if target is not None else "\n".join(shot.text.splitlines()[:12])


async def _baseline(session: Session) -> dict[str, Any]:
    """The page just before a step, as the model's view (``Session.last_snapshot``): its reply then
    says what the step itself changed, as the recorded reply did. And the session's state."""
    tab = session.active_tab
    if tab is not None and not tab.closed and not session.open_dialogs():
        session.last_snapshot = await take_snapshot(tab, mode=session.settings.snapshot_mode)
    return await _state(session)


async def _state(session: Session) -> dict[str, Any]:
    tab = session.active_tab
    return {"tabs": len(session.context.tabs), "downloads": len(session.downloads),
            "dialogs": [d.kind for d in session.open_dialogs()], "url": tab.url if tab is not None and not tab.closed else ""}


async def _state_once_due(session: Session, expect: Expect, before: dict[str, Any]) -> dict[str, Any]:
    """The session's state after a step, once the tab, download or dialog the recording saw has
    begun (capped at ``action_timeout``): the browser may tell of a download after the click's
    settle ended, and a check made at once would stop a flow that did what it should."""
    def due() -> bool:
        return ((not expect.new_page or len(session.context.tabs) > before["tabs"])
                and (not expect.download or len(session.downloads) > before["downloads"])
                and (not expect.dialog or any(d.kind == expect.dialog for d in session.open_dialogs())))

    if expect.new_page or expect.download or expect.dialog:
        await session.until_news(due, session.settings.action_timeout)
    return await _state(session)


async def _point(session: Session, box: dict[str, float] | None, target: Target) -> tuple[float, float] | None:
    """Where in the last screenshot the recorded place of the element (``target.point``, fractions
    of its box) is now: its box now, as a document point, then as a point of the image the
    coordinate tools read (page/coordinates.py)."""
    tab = await session.tab()
    seen, image = session.last_screenshot(tab)
    if box is None or not seen or image is None or target.point is None or box["width"] <= 0 or box["height"] <= 0:
        return None
    x = box["scroll_x"] + box["x"] + target.point.x * box["width"]  # a document point, CSS pixels
    y = box["scroll_y"] + box["y"] + target.point.y * box["height"]
    image_x, image_y = image.to_image(x, y)
    return round(image_x, 1), round(image_y, 1)


def _differs(step: Step, before: dict[str, Any], after: dict[str, Any], reply: str) -> tuple[str, str] | None:
    expect = step.expect
    what = step.note or step.tool
    if expect.url_pattern and not url_matches(expect.url_pattern, after["url"]):
        return f"{what} to end on a URL matching {page_line(expect.url_pattern, 200)}", f"it ended on {page_line(after['url'], 300)}"
    if expect.url and step.tool != "browser_navigate" and urlsplit(expect.url).path != urlsplit(after["url"]).path:
        return (f"{what} to end on {page_line(urlsplit(expect.url).path, 200)}",
                f"it ended on {page_line(after['url'], 300)}")
    if expect.new_page and after["tabs"] <= before["tabs"]:
        return f"{what} to open a new tab", "no tab opened"
    if expect.download and after["downloads"] <= before["downloads"]:
        return f"{what} to download {page_line(expect.download, 100)!r}", "no download started"
    if expect.dialog and expect.dialog not in after["dialogs"]:
        return f"{what} to open a {expect.dialog} dialog", "no dialog opened"
    if not (any(line.startswith(_DIFF) for line in expect.changes) and _DIFF in reply):
        return None  # a whole page (a new document, a dialog answered) is not compared line by line
    wanted = {m.group(1) for line in expect.changes if (m := _ADDED.match(line))}
    got = {m.group(1) for line in reply.splitlines() if (m := _ADDED.match(line.strip()))}
    if wanted - got:
        role = sorted(wanted - got)[0]
        lines = [page_line(line, 160) for line in expect.changes if _ADDED.match(line)][:3]
        # What it showed instead, in the page's own words (an error alert after a save says why).
        instead = [page_line(line.strip(), 160) for line in reply.splitlines() if _ADDED.match(line.strip())][:2]
        return f"{what} to show a new {role} (recorded: {' / '.join(lines)})", \
            f"it showed no new {role}" + (f"; it showed: {' / '.join(instead)}" if instead else "")
    if got - wanted:
        role = sorted(got - wanted)[0]
        shown = [page_line(line.strip(), 160) for line in reply.splitlines() if line.strip().startswith("+ " + role)][:2]
        return f"{what} to show no new {role}", f"it showed: {' / '.join(shown)}"
    return None
