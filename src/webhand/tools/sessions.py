"""Sessions: named browser sessions of this conversation, and ending one.

Every page tool takes an optional `session` name; without it the conversation's default
session is used (and started on first use). A named session is started by browser_session_create:
a page tool given a name that is not open is refused with the open ones listed, so that a typo,
or a session just destroyed, never starts a fresh browser (unless the setting
create_named_sessions_implicitly says to). A named session has its own cookies, storage and
tabs, so one conversation can be logged in as two users at once. Sessions are kept per conversation: a name never reaches
another conversation's browser. Closing a session never runs the pages' beforeunload handlers.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from pydantic import Field

from webhand.config import Viewport
from webhand.durations import Timeout
from webhand.errors import InvalidArgument, shorten
from webhand.response import URL_LIMIT, Response
from webhand.session.conversation import ConversationSessions
from webhand.session.session import Session
from webhand.session.storage_state import read_storage_state
from webhand.tools.definition import PageArgs, ToolArgs, tool


@tool("browser_close", destructive=True, during_dialog=True)
async def close(session: Session, args: PageArgs, response: Response) -> None:
    """Close the browser session and its browser. The next browser call starts a fresh one."""
    await session.close()
    if session.key.name == "default" or session.settings.create_named_sessions_implicitly:
        named = response.caller.session_name if session.key.name == "default" else None
        response.add(f"Closed {f'session {named!r}' if named else f'the {session.key}'}. "
                     "The next browser call starts a new one.")
    else:
        response.add(f"Closed the session {session.key.name!r}. "
                     f"Call browser_session_create name={session.key.name!r} to use that name again.")


class SessionCreateArgs(ToolArgs):
    name: str | None = Field(None, description="Name of the new session (letters, digits, '-', '_', '.'); pass it as "
                             "`session` to page tools. Omit to open the default session.")
    width: int | None = Field(None, ge=1, le=16384, description="Viewport width in CSS pixels (default from config).")
    height: int | None = Field(None, ge=1, le=16384, description="Viewport height in CSS pixels (default from config).")
    storage_state: str | None = Field(None, description="Start logged in: a file saved by browser_storage_state.")
    profile: str | None = Field(None, description="Run the session on a named profile the user gave this agent (its "
                                "configured profile or allowed_profiles): its sign-ins, cookies and storage, kept after "
                                "the session. One session at a time may use a profile.")
    timeout: Timeout = None


@tool("browser_session_create", capability="sessions")
async def session_create(sessions: ConversationSessions, args: SessionCreateArgs, response: Response) -> None:
    """Start a named browser session with its own cookies, storage and tabs."""
    timeout = args.timeout or sessions.settings.timeout
    if args.name is None:  # the other designs' `launch` with no name: the default session
        await _open_default(sessions, args, response, timeout)
        return
    if args.name in ("", "default"):
        raise InvalidArgument("'default' is the session page tools use without a name; it needs no creating.",
                              "Choose another name, e.g. 'admin'.")
    _one_source_of_sign_ins(args)
    state = await _read_state(response, args.storage_state)
    default = sessions.settings.viewport
    viewport = Viewport(width=args.width or default.width, height=args.height or default.height)
    session = await sessions.create(args.name, viewport, profile=args.profile)
    if state is not None:
        try:
            await session.context.set_storage_state(state, timeout=timeout)
        except BaseException:
            await sessions.destroy(args.name)  # half-made sessions would only confuse the next call
            raise
    loaded = " with the saved login" if state is not None else _on_profile(session)
    response.add(f"Started session {args.name!r} ({viewport.width}x{viewport.height}){loaded}. "
                 f"Pass session={args.name!r} to page tools to use it.")


async def _open_default(sessions: ConversationSessions, args: SessionCreateArgs, response: Response,
                        timeout: float) -> None:
    if args.width or args.height:
        raise InvalidArgument("width and height are for a new named session; the default session keeps its size.",
                              "Call browser_resize to change the default session's viewport, or give a name.")
    _one_source_of_sign_ins(args)
    open_now = sessions.find(None)
    if args.profile is not None and open_now is not None and open_now.profile != args.profile:
        raise InvalidArgument(f"The default session is already open{_on_profile(open_now) or ' on a temporary profile'}.",
                              f"Close it with browser_close first, or give a name to open profile {args.profile!r} "
                              "in a session of its own.")
    state = await _read_state(response, args.storage_state)
    session = await sessions.open_default(profile=args.profile)
    if state is not None:
        await session.context.set_storage_state(state, timeout=timeout)
    tab = await session.tab()
    loaded = " with the saved login" if state is not None else _on_profile(session)
    response.add(f"The default session is open{loaded}: tab {tab.index} at {response.page(tab.url, URL_LIMIT)}. "
                 "Page tools use it without `session`.")


async def _read_state(response: Response, path: str | None) -> dict[str, Any] | None:
    """The storage state the model named, checked in a thread (a large file takes a moment)."""
    if path is None:
        return None
    return await asyncio.to_thread(read_storage_state, response.files.confine(path))


def _one_source_of_sign_ins(args: SessionCreateArgs) -> None:
    if args.profile is not None and args.storage_state is not None:
        raise InvalidArgument("profile and storage_state both give the session its sign-ins: give only one.",
                              "A profile keeps its own cookies and storage; leave out storage_state.")


def _on_profile(session: Session) -> str:
    return f" on profile {session.profile!r}" if session.profile else ""


@tool("browser_session_list", capability="sessions", read_only=True)
async def session_list(sessions: ConversationSessions, args: ToolArgs, response: Response) -> None:
    """List this conversation's browser sessions: status, page, tabs, actions, created and last used."""
    infos = sorted(sessions.list(), key=lambda i: (i.name != "default", i.name))
    if not infos:
        response.add("No browser sessions are open; the first page tool starts the default one.")
    else:
        lines = [f"- {i.name}: {i.url or 'about:blank'} ({i.status}, "
                 f"{f'profile {i.profile!r}' if i.profile else 'temporary profile'}, {i.tabs} tab{'s' if i.tabs != 1 else ''}, "
                 f"{i.actions} action{'s' if i.actions != 1 else ''}, created {_clock(i.created_at)}, "
                 f"last used {_clock(i.last_used_at)}, idle {i.idle_seconds:g} s"
                 + (f"; {i.control}" if i.control else "") + ")" for i in infos]
        response.add(f"Sessions ({len(infos)}):\n" + "\n".join(lines))
    response.data({"sessions": [{"name": i.name, "status": i.status, "profile": i.profile, "url": i.url, "tabs": i.tabs,
                                 "actions": i.actions, "created_at": i.created_at, "last_used_at": i.last_used_at,
                                 "idle_seconds": i.idle_seconds, "control": i.control} for i in infos]})


def _clock(unix_time: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(unix_time))


class SessionHistoryArgs(ToolArgs):
    name: str | None = Field(None, description="Session name; omit for the default session.")
    limit: int = Field(20, ge=1, le=500, description="How many of the most recent calls to return.")


def _session_label(name: str) -> str:
    """How a reply names a session: "the default session", "session s0"."""
    return "the default session" if name == "default" else f"session {name}"


@tool("browser_session_history", capability="sessions", read_only=True)
async def session_history(sessions: ConversationSessions, args: SessionHistoryArgs, response: Response) -> None:
    """The session's most recent tool calls: tool, arguments (secrets masked), outcome, duration, URLs."""
    session = sessions.find(args.name)
    if session is None:
        names = ", ".join(sorted(i.name for i in sessions.list())) or "none"
        raise InvalidArgument(f"No session named {args.name or 'default'!r} is open (open: {names}).",
                              "Call browser_session_list.")
    history = session.history
    entries = history.recent(args.limit)
    if not entries:
        label = _session_label(session.key.name)
        response.add(f"{label[0].upper()}{label[1:]} has made no calls yet.")
    else:
        shown = f"the last {len(entries)} of {history.count}" if history.count > len(entries) else f"all {len(entries)}"
        lines = [f"{e.index}. {_clock(e.started_at)} {e.tool} {_arguments(e.arguments)} -> {e.outcome} "
                 f"({e.duration_ms} ms){_moved(e.url_before, e.url_after)}"
                 + (f": {e.message}" if e.outcome != "ok" and e.message else "") for e in entries]
        response.add(f"History of {_session_label(session.key.name)} ({shown} calls):\n" + "\n".join(lines))
        if history.spilled:
            response.add(f"Older calls are in {history.spill_file}.")
    response.data({"session": session.key.name, "count": history.count,
                   "entries": [e.to_dict() for e in entries]})


def _arguments(arguments: dict[str, object]) -> str:
    return shorten(json.dumps(arguments, ensure_ascii=False), 200) if arguments else "{}"


def _moved(before: str, after: str) -> str:
    return f", {shorten(before, 80) or 'about:blank'} -> {shorten(after, 80)}" if after and after != before else ""


class SessionDestroyArgs(ToolArgs):
    name: str = Field(description="Name of the session to close ('default' for the unnamed one).")


@tool("browser_session_destroy", capability="sessions", destructive=True)
async def session_destroy(sessions: ConversationSessions, args: SessionDestroyArgs, response: Response) -> None:
    """Close a named browser session: its pages, cookies and storage are gone."""
    if not await sessions.destroy(args.name):
        names = ", ".join(sorted(i.name for i in sessions.list())) or "none"
        raise InvalidArgument(f"No session named {args.name!r} is open (open: {names}).", "Call browser_session_list.")
    response.add(f"Closed session {args.name!r}.")
