"""The tools a page offers agents (WebMCP): list them, call one.

A page declares tools for agents: a script's ``document.modelContext.registerTool({name,
description, inputSchema, execute})``, or a form with ``toolname``/``tooldescription``. Called, a
tool gives the site's own answer, with no clicking and no snapshot. Chromium carries it behind a
feature (the ``page_tools`` setting starts it with it); Firefox has none, and says so.

Everything a page tool brings is page text: its name, description, schema and answer reach the
reply masked, escaped and cut (``Response.page``/``page_block``), never as reply structure; an
answer or a listing past ``text_max_chars`` (what browser_text gives inline) goes to a file. Arguments are checked against the tool's input
schema before the page sees them; a tool named like one of webhand's own is never called.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import exceptions as schema_errors
from jsonschema import validators
from pydantic import Field
from referencing.exceptions import Unresolvable

from webhand.durations import Timeout
from webhand.engine.driver import PageTool, PageToolAnswer
from webhand.errors import EvaluationFailed, InvalidArgument
from webhand.page.page_tools import shadows
from webhand.response import Response, to_json_text
from webhand.session.changes import settle_changes
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

#: A description is cut to this many characters in the listing.
DESCRIPTION_LIMIT = 1_000
#: An input schema is shown on one line, cut to this many characters (browser_page_tools name=… shows it whole).
SCHEMA_LIMIT = 2_000
#: A single tool's full schema (name=…) is cut to this many characters.
SCHEMA_WHOLE_LIMIT = 20_000
#: At most this many validation errors are named.
_ERRORS_SHOWN = 5
#: The structured result carries the page's answer when its JSON is at most this big.
_DATA_LIMIT = 64 * 1024


def _validator(schema: dict[str, Any]) -> Any:
    """A validator for the page's ``schema`` (its own draft, 2020-12 when it names none), that
    leaves regular expressions (``pattern``, ``patternProperties``) to the page: a page's pattern
    could take webhand's process minutes to match (catastrophic backtracking)."""
    base = validators.validator_for(schema, default=validators.Draft202012Validator)
    lenient = validators.extend(base, {"pattern": lambda *_: None, "patternProperties": lambda *_: None})
    lenient.check_schema(schema)
    return lenient(schema)


def check_arguments(page_tool: PageTool, arguments: dict[str, Any], response: Response) -> None:
    """Refuse ``arguments`` that ``page_tool``'s input schema does not take, naming what is wrong."""
    if page_tool.input_schema is None:
        return
    name = response.page(page_tool.name, 100)
    try:
        errors = sorted(_validator(page_tool.input_schema).iter_errors(arguments), key=lambda e: list(e.absolute_path))
    except schema_errors.SchemaError as error:
        raise InvalidArgument(f"The page's input schema for {name} is not valid JSON Schema: "
                              f"{response.page(error.message, 200)}.",
                              "The page's tool cannot be called safely; use the page's own controls.") from None
    except (Unresolvable, RecursionError):
        raise InvalidArgument(f"The page's input schema for {name} cannot be checked (it refers to schemas it "
                              "does not hold, or without end).",
                              "The page's tool cannot be called safely; use the page's own controls.") from None
    if errors:
        said = "; ".join(("/".join(str(p) for p in e.absolute_path) + ": " if e.absolute_path else "")
                         + e.message for e in errors[:_ERRORS_SHOWN])
        raise InvalidArgument(f"The arguments do not fit the input schema of the page's tool {name}: "
                              f"{response.page(said, 600)}" + (f" (and {len(errors) - _ERRORS_SHOWN} more)"
                                                               if len(errors) > _ERRORS_SHOWN else "") + ".",
                              f"browser_page_tools name={page_tool.name[:100]!r} shows its schema.")


def _kind(page_tool: PageTool) -> str:
    if page_tool.form:
        return "a form, filled and submitted as a person would" if not page_tool.autosubmit else \
            "a form that submits itself once filled"
    return "the page's script"


# browser_page_tools ----------------------------------------------------------------------------
class PageToolsArgs(PageArgs):
    name: str | None = Field(None, min_length=1, max_length=300,
                             description="One tool to describe in full (its whole input schema); omit to list them all.")


@tool("browser_page_tools", capability="page_tools", read_only=True)
async def page_tools(session: Session, args: PageToolsArgs, response: Response) -> None:
    """List the tools the page itself offers agents (WebMCP: its name, description, input schema); call one with browser_call_page_tool."""
    tab = await session.tab()
    tools, over = await tab.page_tools.listing(timeout=session.settings.timeout)
    if args.name is not None:
        found = [t for t in tools if t.name == args.name]
        if not found:
            raise InvalidArgument(f"The page offers no tool named {response.page(args.name, 100)}.",
                                  "Call browser_page_tools without a name to list the tools it offers.")
        _describe_whole(found[0], response)
        return
    if not tools:
        response.add("The page offers no tools of its own (WebMCP); use its controls (browser_snapshot).")
        return
    callable_ = [t for t in tools if not shadows(t)]
    lines = [f"The page offers {len(tools) + over:,} tools of its own (WebMCP; page text, not webhand's words). "
             "Call one with browser_call_page_tool name=… arguments={…}:"]
    for page_tool in tools:
        lines.append(_listed(page_tool, response))
    if over:
        lines.append(f"… and {over:,} more the page registered past webhand's limit of {len(tools):,}; "
                     "they are not listed and cannot be called.")
    text = "\n".join(lines)
    limit = session.settings.text_max_chars
    if len(text) <= limit:
        response.add(text)
    else:
        path = response.write_file(text, "page-tools", ".txt")
        names = ", ".join(response.page(t.name, 60) for t in callable_[:20])
        response.add(f"The page offers {len(tools) + over:,} tools of its own (WebMCP); their list is "
                     f"{len(text):,} characters, more than the {limit:,}-character limit (text_max_chars): "
                     f"saved to {path}.")
        response.add(f"The first: {names}" + (" …" if len(callable_) > 20 else "")
                     + " (browser_page_tools name=… describes one).")
    response.data({"tools": [{"name": t.name, "description": t.description[:DESCRIPTION_LIMIT], "form": t.form,
                              "read_only": t.read_only, "callable": not shadows(t) and not t.schema_too_large}
                             for t in tools[:200]], "count": len(tools) + over})


def _listed(page_tool: PageTool, response: Response) -> str:
    """One tool in the listing: ``- name (how it runs): description`` and its schema on the next line."""
    name = response.page(page_tool.name, 300)
    if shadows(page_tool):
        return f"- {name}: not callable: it is named like one of webhand's own tools"
    hints = [_kind(page_tool)] + (["read-only, by the page's word"] if page_tool.read_only else [])
    line = f"- {name} ({', '.join(hints)}): {response.page(page_tool.description, DESCRIPTION_LIMIT) or '(no description)'}"
    if page_tool.schema_too_large:
        return line + "\n  input: its schema is over 64 kB: not callable"
    schema = json.dumps(page_tool.input_schema, ensure_ascii=False, separators=(",", ":")) \
        if page_tool.input_schema is not None else "none (takes no arguments)"
    return line + f"\n  input: {response.page(schema, SCHEMA_LIMIT, 'browser_page_tools name=… shows it whole')}"


def _describe_whole(page_tool: PageTool, response: Response) -> None:
    response.add(_listed(page_tool, response).split("\n", 1)[0])
    if page_tool.input_schema is not None and not shadows(page_tool):
        schema = json.dumps(page_tool.input_schema, ensure_ascii=False, indent=1)
        response.add(f"Input schema: {response.page_block(schema, SCHEMA_WHOLE_LIMIT, max_lines=2_000)}")
    response.data({"name": page_tool.name, "description": page_tool.description, "input_schema": page_tool.input_schema,
                   "form": page_tool.form, "read_only": page_tool.read_only})


# browser_call_page_tool ------------------------------------------------------------------------
class CallPageToolArgs(PageArgs):
    name: str = Field(min_length=1, max_length=300, description="The page tool's name, as browser_page_tools lists it.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Its input, as its input schema says.")
    timeout: Timeout = None


@tool("browser_call_page_tool", capability="page_tools", destructive=True)
async def call_page_tool(session: Session, args: CallPageToolArgs, response: Response) -> None:
    """Call a tool the page itself offers (browser_page_tools lists them) with arguments; replies with its answer and what it changed on the page."""
    tab = await session.tab()
    timeout = args.timeout or session.settings.timeout
    tools, _ = await tab.page_tools.listing(timeout=timeout)
    found = [t for t in tools if t.name == args.name]
    if not found:
        names = ", ".join(response.page(t.name, 60) for t in tools if not shadows(t))[:1_000]
        raise InvalidArgument(f"The page offers no tool named {response.page(args.name, 100)}.",
                              f"Its tools: {names}." if names else "It offers none now; use its controls (browser_snapshot).")
    page_tool = found[0]
    if shadows(page_tool):
        raise InvalidArgument(f"The page's tool {response.page(page_tool.name, 100)} is named like one of webhand's "
                              "own tools, so it is never called (a page must not pass for webhand).",
                              "Use webhand's own tool of that name, or the page's controls.")
    if page_tool.schema_too_large:
        raise InvalidArgument(f"The page's tool {response.page(page_tool.name, 100)} has an input schema over 64 kB: "
                              "it is not called.", "Use the page's own controls (browser_snapshot).")
    check_arguments(page_tool, args.arguments, response)
    # Like any action: the settling starts before the call, and the reply ends with what it changed.
    await settle_changes(session, response, action="page tool's call", after_failure=True)
    response.waiting_for(f"the page's tool {response.page(page_tool.name, 60)}")
    answer = await tab.page_tools.call(page_tool, args.arguments, timeout=timeout)
    _say_answer(page_tool, answer, session, response)


def _answer_text(output: Any) -> str:
    """The text of a tool's answer: an MCP-style ``{content: [{type: "text", text}]}``'s texts, a
    string as it is, anything else as JSON."""
    if isinstance(output, dict) and isinstance(output.get("content"), list):
        parts = []
        for item in output["content"]:
            if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif isinstance(item, dict):
                parts.append(f"[{str(item.get('type'))[:40]} content, not shown]")
        return "\n".join(parts)
    if isinstance(output, str):
        return output
    return to_json_text(output)


def _say_answer(page_tool: PageTool, answer: PageToolAnswer, session: Session, response: Response) -> None:
    name = response.page(page_tool.name, 100)
    if answer.status == "error":
        thrown = answer.error.strip().split("\n    at ", 1)[0]  # what was thrown, without the page's stack
        raise EvaluationFailed(f"The page's tool {name} failed: {response.page(thrown, 1_000)}",
                               "It is the page's own failure: check the arguments against browser_page_tools, "
                               "or use the page's own controls.")
    if answer.status == "canceled":
        raise EvaluationFailed(f"The page cancelled the call of its tool {name}.",
                               "Call it again, or use the page's own controls.")
    did = f"Filled and submitted the form {name}" if page_tool.form else f"Called the page's tool {name}"
    if answer.status == "navigated":
        response.add(f"{did}; the submission loaded a new document." if page_tool.form else
                     f"{did}; its frame loaded a new document before the tool answered.")
        response.data({"status": "navigated"})
        return
    empty = answer.output is None or answer.output == [] or answer.output == ""
    if empty:
        response.add(f"{did}; it answered nothing.")
        response.data({"status": "completed"})
        return
    text = _answer_text(answer.output)
    limit = session.settings.text_max_chars
    if len(text) <= limit:
        response.add(f"{did}. Its answer (page text): {response.page_block(text, limit, max_lines=1_000)}")
    else:
        path = response.write_file(text, "page-tool-answer", ".txt")
        response.add(f"{did}. Its answer is {len(text):,} characters, more than the {limit:,}-character limit "
                     f"(text_max_chars): saved to {path}. It begins: {response.page(text[:200], 300)}…")
    data: dict[str, Any] = {"status": "completed"}
    if len(to_json_text(answer.output)) <= _DATA_LIMIT:
        data["answer"] = answer.output
    response.data(data)
