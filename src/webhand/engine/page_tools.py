"""The tools a page offers agents (WebMCP), the same on both Chromium drivers: a tab's ``page_tools``
component (``driver.PageTools``) over the CDP ``WebMCP`` domain of the tab's ``CdpChannel``.

Chromium carries WebMCP behind a feature (``--enable-features=WebMCP``, the ``page_tools`` setting).
With it, a page has ``document.modelContext``: a script registers tools (``registerTool({name,
description, inputSchema, execute})``, removed again by aborting the ``signal`` it passed), and a
``<form toolname=… tooldescription=…>`` is one too, its fields the input schema. The domain reports
them (``toolsAdded``/``toolsRemoved``; enabling it reports those already there), runs one
(``invokeTool``, answered by ``toolResponded``), and cancels one (``cancelInvocation``).

What Chromium 156 does, measured (tests/test_page_tools.py):

- a new document's tools arrive after its ``Page.frameNavigated``; the old document's are never
  reported removed: a frame's navigation clears its tools here;
- a form tool is filled by ``invokeTool`` and submitted only when it has ``toolautosubmit``; a
  person's form is submitted here as a person would (``requestSubmit`` with its submit button,
  after the browser's own validation), and answers once its submission ends (a new document, or
  the page's ``respondWith``);
- a script tool that throws answers ``Error`` with the exception; one cancelled answers ``Canceled``;
- without the feature, the domain enables all the same and reports nothing: the page's
  ``document.modelContext`` tells (a page can fake it, which only changes the wording of "none").

Only the page's own session is heard: a cross-origin frame in a process of its own (a CDP session
of its own) keeps its tools to itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from webhand.engine.channel import CdpChannel
from webhand.engine.driver import PageTool, PageToolAnswer
from webhand.engine.js import source
from webhand.errors import ActionTimeout, InvalidArgument, WebhandError

#: At most this many tools are kept for a tab; past it the page's further tools are counted, not kept.
MAX_TOOLS = 2_000
#: A tool's description is kept up to this many characters (a reply cuts it much shorter).
MAX_DESCRIPTION = 4_000
#: A tool's input schema is kept up to this size (as JSON); a larger one makes the tool uncallable.
MAX_SCHEMA_BYTES = 64 * 1024
#: How long enabling the domain and asking the page may take.
_ASK = 5.0

# Submit a form tool's form as a person would: the browser's validation first, then its submit button.
_SUBMIT = source("submit_form_tool.js")


class WebMcpUnavailable(WebhandError):
    """The browser offers no page tools: Firefox, or a Chromium without WebMCP."""


def not_started_with_it() -> WebMcpUnavailable:
    return WebMcpUnavailable(
        "This browser offers no page tools (WebMCP): its Chromium was started without the WebMCP feature.",
        "Set page_tools = true (WEBHAND_PAGE_TOOLS=1) so that webhand starts Chromium with "
        "--enable-features=WebMCP; a browser webhand connects to (cdp_url) needs that flag at its own start. "
        "Meanwhile use the page's own controls (browser_snapshot, browser_click, browser_fill_form).")


class ChromiumPageTools:
    """A tab's ``page_tools`` on Chromium: the page's tools, kept current from the WebMCP events."""

    def __init__(self, channel: CdpChannel) -> None:
        self.channel = channel
        self._tools: dict[tuple[str, str], PageTool] = {}  # (frame, name) -> tool, in the order they came
        self._over = 0  # tools past MAX_TOOLS, counted and not kept
        self._calls: dict[str, tuple[str, asyncio.Future[PageToolAnswer]]] = {}  # invocation -> (frame, answer)
        self._early: dict[str, PageToolAnswer] = {}  # answers that came before their invocation's id
        self._starting: asyncio.Future[None] | None = None
        self._stops: list[Callable[[], None]] = []
        self._refusal: WebhandError | None = None  # why this tab has no page tools, once the browser said so
        self.feature_seen = False  # the page had document.modelContext once: the browser has the feature

    # events ------------------------------------------------------------------------------------
    def _added(self, params: dict[str, Any]) -> None:
        for raw in params.get("tools") or []:
            tool = _tool(raw)
            if tool is None:
                continue
            key = (tool.frame, tool.name)
            if key not in self._tools and len(self._tools) >= MAX_TOOLS:
                self._over += 1
                continue
            self._tools[key] = tool
            self.feature_seen = True

    def _removed(self, params: dict[str, Any]) -> None:
        for raw in params.get("tools") or []:
            if self._tools.pop((str(raw.get("frameId", "")), str(raw.get("name", ""))), None) is None and self._over:
                self._over -= 1

    def _navigated(self, params: dict[str, Any]) -> None:
        self._forget_frame(str(params.get("frame", {}).get("id", "")))

    def _detached(self, params: dict[str, Any]) -> None:
        self._forget_frame(str(params.get("frameId", "")))

    def _forget_frame(self, frame: str) -> None:
        """A frame's new document (or its removal) ends its tools and the calls still waiting in it."""
        for key in [key for key in self._tools if key[0] == frame]:
            del self._tools[key]
        if not self._tools:
            self._over = 0
        for invocation, (where, answer) in list(self._calls.items()):
            if where == frame and not answer.done():
                answer.set_result(PageToolAnswer("navigated"))

    def _responded(self, params: dict[str, Any]) -> None:
        status = str(params.get("status", ""))
        if status == "Completed":
            answer = PageToolAnswer("completed", params.get("output"))
        elif status == "Canceled":
            answer = PageToolAnswer("canceled", error=str(params.get("errorText") or ""))
        else:
            exception = params.get("exception") or {}
            error = str(exception.get("description") or params.get("errorText") or "") if isinstance(exception, dict) else ""
            answer = PageToolAnswer("error", error=error or str(params.get("errorText") or "") or "no reason given")
        invocation = str(params.get("invocationId", ""))
        waiting = self._calls.get(invocation)
        if waiting is None:
            if len(self._early) < 16:
                self._early[invocation] = answer
        elif not waiting[1].done():
            waiting[1].set_result(answer)

    # starting ----------------------------------------------------------------------------------
    async def _start(self, timeout: float) -> None:
        """Listen, then enable the domain (which reports the tools already there), once per tab;
        waits at most ``timeout`` (and ``_ASK``) for it."""
        if self._refusal is not None:
            raise self._refusal  # asked once: the browser's answer does not change
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._enable())
        try:
            await asyncio.wait_for(asyncio.shield(self._starting), min(timeout, _ASK))
        except asyncio.TimeoutError:
            raise ActionTimeout(f"The browser did not start reporting the page's tools within "
                                f"{min(timeout, _ASK):g} s.",
                                "Retry; browser_snapshot shows whether the page still answers.") from None
        except WebhandError:
            self._starting = None  # a later call tries again
            raise

    async def _enable(self) -> None:
        channel = self.channel
        try:
            await channel.send("Page.getFrameTree")  # opens a session that is opened on first use (Playwright's)
            for event, handler in (("WebMCP.toolsAdded", self._added), ("WebMCP.toolsRemoved", self._removed),
                                   ("WebMCP.toolResponded", self._responded), ("Page.frameNavigated", self._navigated),
                                   ("Page.frameDetached", self._detached)):
                self._stops.append(channel.on(event, handler))
            await channel.send("WebMCP.enable")
        except (WebhandError, *channel.errors) as error:
            for stop in self._stops:
                stop()
            self._stops.clear()
            if isinstance(error, WebhandError):  # a connection that forwards no such command (the extension bridge)
                self._refusal = error
                raise
            message = str(error)
            if "wasn't found" in message or "not found" in message.lower():
                self._refusal = WebMcpUnavailable(
                    "This browser offers no page tools (WebMCP): its DevTools protocol has no WebMCP domain "
                    "(Chromium 156 or later carries it).", "Use the page's own controls (browser_snapshot, browser_click).")
                raise self._refusal from None
            raise channel.translate(error, "Listening to the page's tools", _ASK) from None

    async def _has_feature(self) -> bool:
        """Whether the page has ``document.modelContext`` (the browser runs with the feature)."""
        try:
            reply = await asyncio.wait_for(self.channel.send("Runtime.evaluate", {
                "expression": "typeof document.modelContext", "returnByValue": True}), _ASK)
        except (asyncio.TimeoutError, *self.channel.errors):
            return True  # a busy page: not the browser's fault; say "none" rather than blame the launch
        return (reply.get("result") or {}).get("value") == "object"

    # the component -----------------------------------------------------------------------------
    async def listing(self, *, timeout: float, quiet: bool = False) -> tuple[list[PageTool], int]:
        await self._start(timeout)
        if not self._tools and not self.feature_seen and not quiet:
            if not await self._has_feature():
                raise not_started_with_it()
            self.feature_seen = True
        # By name: the browser reports a page's tools in the order they were registered, or by name
        # when the domain is enabled after they were: the same page lists the same either way.
        return sorted(self._tools.values(), key=lambda t: (t.name, t.frame)), self._over

    async def call(self, tool: PageTool, arguments: dict[str, Any], *, timeout: float) -> PageToolAnswer:
        await self._start(timeout)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        answer: asyncio.Future[PageToolAnswer] = loop.create_future()
        try:
            async with asyncio.timeout(timeout):
                sent = await self.channel.send("WebMCP.invokeTool", {"frameId": tool.frame, "toolName": tool.name,
                                                                     "input": arguments})
        except TimeoutError:
            raise _timed_out(tool, timeout) from None
        except self.channel.errors as error:
            if "not found" in str(error).lower():
                raise InvalidArgument(f"The page no longer offers the tool {tool.name!r}.",
                                      "Call browser_page_tools to see the tools it offers now.") from None
            raise self.channel.translate(error, f"Calling the page's tool {tool.name!r}", timeout) from None
        invocation = str(sent.get("invocationId", ""))
        self._calls[invocation] = (tool.frame, answer)
        try:
            early = self._early.pop(invocation, None)
            if early is not None:
                return early
            if tool.form and not tool.autosubmit:
                invalid = await self._submit(tool, max(0.1, deadline - loop.time()))
                if invalid is not None:
                    await self._cancel(invocation)
                    return PageToolAnswer("error", error="The form was filled but not submitted: its fields are "
                                                         "not valid: " + "; ".join(invalid))
            try:
                return await asyncio.wait_for(asyncio.shield(answer), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                await self._cancel(invocation)
                raise _timed_out(tool, timeout) from None
        finally:
            self._calls.pop(invocation, None)

    async def _submit(self, tool: PageTool, timeout: float) -> list[str] | None:
        """Submit a filled form tool's form; its fields' validation messages when the browser refuses."""
        try:
            async with asyncio.timeout(timeout):
                node = await self.channel.send("DOM.resolveNode", {"backendNodeId": tool.node})
                object_id = node["object"]["objectId"]
                done = await self.channel.send("Runtime.callFunctionOn", {
                    "objectId": object_id, "functionDeclaration": _SUBMIT, "returnByValue": True})
        except TimeoutError:
            raise _timed_out(tool, timeout) from None
        except self.channel.errors as error:
            raise self.channel.translate(error, f"Submitting the form {tool.name!r}", timeout) from None
        try:  # the form's document may already be gone (its submission loaded a new one)
            await asyncio.wait_for(self.channel.send("Runtime.releaseObject", {"objectId": object_id}), _ASK)
        except (asyncio.TimeoutError, *self.channel.errors):
            pass
        value = (done.get("result") or {}).get("value") or {}
        invalid = value.get("invalid") if isinstance(value, dict) else None
        return [str(line) for line in invalid] if isinstance(invalid, list) else None

    async def _cancel(self, invocation: str) -> None:
        try:
            await asyncio.wait_for(self.channel.send("WebMCP.cancelInvocation", {"invocationId": invocation}), _ASK)
        except (asyncio.TimeoutError, *self.channel.errors):
            pass  # the page or its frame is gone: nothing is left running


def _timed_out(tool: PageTool, timeout: float) -> ActionTimeout:
    return ActionTimeout(f"The page's tool {tool.name!r} did not answer within {timeout:g} s; the call was cancelled.",
                         "Retry with a larger timeout if the tool does slow work, or do the task with the page's own "
                         "controls (browser_snapshot, then click and type).")


def _tool(raw: dict[str, Any]) -> PageTool | None:
    """A tool as the browser reported it, bounded; None when it names none."""
    name = raw.get("name")
    if not isinstance(name, str) or not name or len(name) > 300:
        return None
    schema = raw.get("inputSchema")
    too_large = False
    if schema is not None:
        if not isinstance(schema, dict):
            schema = None
        elif len(json.dumps(schema)) > MAX_SCHEMA_BYTES:
            schema, too_large = None, True
    annotations = raw.get("annotations") if isinstance(raw.get("annotations"), dict) else {}
    node = raw.get("backendNodeId")
    return PageTool(name, str(raw.get("description") or "")[:MAX_DESCRIPTION], schema, str(raw.get("frameId", "")),
                    form=isinstance(node, int), autosubmit=bool(annotations.get("autosubmit")),
                    read_only=bool(annotations.get("readOnly")), schema_too_large=too_large,
                    node=node if isinstance(node, int) else 0)
