"""Flows: a task saved from the session's history and run again without the model; its three
tools here, the machinery in the modules beside them.

``browser_save_flow`` keeps calls of the session's history as a named flow in the user's flows
folder (save.py, store.py); ``browser_list_flows`` lists them; ``browser_run_flow`` runs one in
the calling session at browser speed, healing small shifts of the page and stopping, with an
account, where the model is needed (replay.py, locate.py, docs/flows.md). ``format`` is the flow
file (what is saved, validated, replayed and exported); ``playwright_script`` exports a flow as a
script that runs without webhand.

The flows live in the tools room because they are made of tool calls: a flow file is validated
against the catalog's tools and a replay runs them, and the catalog holds the flow tools; in a
room of their own the two would import each other.

Private: webhand's public API is what ``webhand`` exports (``webhand.__all__``) and the adapters
(``webhand.adapters``); the modules here may change in any release.
"""

from __future__ import annotations

from pydantic import Field

from webhand.config import Settings
from webhand.durations import Timeout
from webhand.errors import InvalidArgument
from webhand.tools.flows.format import Flow
from webhand.tools.flows.replay import FlowRun, Runner, run_flow
from webhand.tools.flows.save import flow_from_history
from webhand.tools.flows.store import check_name, list_flows, load_flow, save_flow
from webhand.response import NAME_LIMIT, Response, page_line
from webhand.session.conversation import ConversationSessions
from webhand.tools.definition import ToolArgs, tool

_NAME = "The flow's name: letters, digits, '.', '-', '_' (a file name in the user's flows folder)."
_SESSION = "The session (default: the conversation's default session)."
#: How long a whole flow may run by default (each step also keeps its own tool's timeout).
FLOW_TIMEOUT_SECONDS = 300.0
#: Longest page excerpt in a stop's account.
_PAGE_LIMIT = 2_000


class SaveFlowArgs(ToolArgs):
    name: str = Field(description=_NAME)
    from_: int | None = Field(None, alias="from", ge=1, description="The first call of the session's history to keep "
                              "(its number in browser_session_history); default: the first.")
    to: int | None = Field(None, ge=1, description="The last call to keep; default: the last.")
    params: dict[str, str] = Field(default_factory=dict, description="Typed values to make parameters: "
                                   "{\"email\": \"dan@example.org\"} writes {{email}} where that value was typed, so "
                                   "browser_run_flow takes another. Secrets typed as <secret>NAME</secret> stay so.")
    description: str = Field("", max_length=2_000, description="What the flow does, for whoever lists it.")
    session: str | None = Field(None, description=_SESSION)


@tool("browser_save_flow", capability="flows")
async def save(sessions: ConversationSessions, args: SaveFlowArgs, response: Response) -> None:
    """Save calls of this session's history as a named flow that browser_run_flow runs again without you: each element
    kept with several ways to find it, each call with what it did. Save once a task worked."""
    check_name(args.name)
    session = sessions.find(args.session)
    if session is None:
        raise InvalidArgument("This session has no history yet.", "Do the task first, then save it.")
    flow = flow_from_history(session.history.all(), args.name, first=args.from_, last=args.to, params=args.params,
                             description=args.description)
    path = save_flow(flow)
    response.add(f"Saved the flow {flow.name!r}: {len(flow.steps)} steps"
                 + (f", parameters {', '.join(flow.params)}" if flow.params else "") + f". File: {path}")
    response.add(f"Run it with browser_run_flow name={flow.name!r}" + (" params={…}." if flow.params else "."))


class ListFlowsArgs(ToolArgs):
    pass


@tool("browser_list_flows", capability="flows", read_only=True)
async def list_(settings: Settings, args: ListFlowsArgs, response: Response) -> None:
    """List the saved flows: name, what it does, its parameters and steps."""
    found = list_flows()
    if not found:
        response.add("No flows saved yet. Save one with browser_save_flow once a task worked.")
    items = []
    for flow in found:
        if isinstance(flow, Flow):
            response.add(summary(flow))
            items.append({"name": flow.name, "description": flow.description, "params": list(flow.params),
                          "steps": len(flow.steps)})
        else:
            response.add("Not a valid flow: " + page_line(flow, 300))
    response.data({"flows": items})


def summary(flow: Flow) -> str:
    params = ", ".join(name + ("" if p.default is None else "?") for name, p in flow.params.items())
    return (f"- {flow.name}: {len(flow.steps)} steps" + (f"; params: {params}" if params else "")
            + (f" — {page_line(flow.description, NAME_LIMIT)}" if flow.description else ""))


class RunFlowArgs(ToolArgs):
    name: str = Field(description=_NAME)
    params: dict[str, str] = Field(default_factory=dict, description="A value for each of the flow's parameters.")
    update: bool = Field(False, description="Write the ways that found healed elements back into the flow file.")
    session: str | None = Field(None, description=_SESSION)
    # The whole run's cap (each step keeps its own tool's timeout): a flow is many calls.
    timeout: Timeout = Field(FLOW_TIMEOUT_SECONDS, description="Max seconds for the whole flow (default 300).")


@tool("browser_run_flow", capability="flows", destructive=True)
async def run(sessions: ConversationSessions, args: RunFlowArgs, response: Response) -> None:
    """Run a saved flow in this session at browser speed: each element found again (healed when the page shifted), each
    step checked. It stops where the page differs, saying what it expected and what it found, and leaves the session
    there for you to go on."""
    flow = load_flow(check_name(args.name))
    result = await run_flow(flow, args.params, Runner(sessions, sessions.settings, response.files, args.session),
                            update=args.update)
    if result.updated:
        save_flow(result.flow)
    say_run(result, response)


def say_run(result: FlowRun, response: Response) -> None:
    """A flow's run as a reply: the last step's reply and the heals, or the stop's account."""
    flow, total = result.flow, len(result.flow.steps)
    if result.finished:
        response.add(f"Ran the flow {flow.name!r}: {total} of {total} steps.")
    else:
        ran = result.stopped_at - 1
        response.add(f"The flow {flow.name!r} stopped at step {result.stopped_at} of {total}"
                     + ("." if not ran else "; step 1 ran." if ran == 1 else f"; steps 1-{ran} ran."))
    for line in result.healed:
        response.add("Healed " + line + ".")
    for line in result.refreshed:
        response.add("Still found " + line + ("." if result.updated else " (update=true refreshes them)."))
    if result.updated:
        response.add("The healed ways are written back into the flow.")
    if result.finished:
        if result.last_reply:
            response.add("The last step's reply:\n" + result.last_reply)
        return
    response.add("Expected: " + result.expected + ".")
    response.add("Instead: " + result.instead + ".")
    if result.page:
        response.add("The page near there:\n" + response.page_block(result.page, _PAGE_LIMIT, 15))
    response.add("The session is left where the flow stopped; go on with the ordinary tools. The calls that would "
                 "go on:\n" + "\n".join(result.remaining))
