"""``webhand profile list | delete NAME | login NAME [URL] | unlock NAME``: the named profiles a
user keeps (session/profiles.py). ``unlock`` clears a lock another machine's webhand left. ``login`` opens a session on the profile for a person to sign in by hand:
a window of its own where there is a display, else a headless browser and the dashboard's live
view (where the person takes control); it ends when they press Enter or Ctrl-C or close the
window (never on a closed input), and says what the profile holds then (cookies and site storage
counted), or that nothing was saved."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from webhand.session.profiles import delete_profile, list_profiles, profile_dir, unlock_profile
from webhand.security.locations import check_profile_name

if TYPE_CHECKING:
    from typing import Any

    from webhand.config import Settings
    from webhand.host import Webhand
    from webhand.session.session import Session
    from webhand.surfaces.dashboard import DashboardServer

#: How often ``login`` looks whether the person closed the browser's window (no event tells a
#: window closed by hand on both drivers); Enter on the terminal ends it at once.
_WINDOW_CHECK_SECONDS = 0.5
_CONVERSATION = "profile-login"


def add_profile_command(sub: argparse._SubParsersAction, config_options: Callable[[argparse.ArgumentParser], None],  # type: ignore[type-arg]
                        run: Callable[[argparse.Namespace], int]) -> None:
    profile = sub.add_parser("profile", help="named browser profiles webhand keeps (sign-ins that last): list, "
                                             "delete NAME, login NAME [URL], unlock NAME")
    actions = profile.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="each profile: size, last used, and who holds it now")
    delete = actions.add_parser("delete", help="remove a profile and everything signed in there (not while in use)")
    delete.add_argument("name")
    login = actions.add_parser("login", help="open the profile for you to sign in by hand; Enter (or closing the "
                                             "window) ends it and keeps the profile")
    login.add_argument("name")
    login.add_argument("url", nargs="?", help="page to open first (e.g. the site's sign-in page)")
    unlock = actions.add_parser("unlock", help="clear the lock another machine's webhand left on a profile (not "
                                               "while a process here holds it)")
    unlock.add_argument("name")
    for parser in (listing, delete, login, unlock):
        config_options(parser)
    profile.set_defaults(run=run)


def run_profile(args: argparse.Namespace, settings: Callable[[], Settings]) -> int:
    if args.action == "list":
        return _list(args.json)
    if args.action == "delete":
        delete_profile(args.name)
        print(f"Deleted profile {args.name!r}.")
        return 0
    if args.action == "unlock":
        holder = unlock_profile(args.name)
        print(f"Profile {args.name!r} is free" + (f": cleared the lock of {holder.describe()}." if holder else
                                                  " (its lock named no holder)."))
        return 0
    check_profile_name(args.name)
    return asyncio.run(_login(args.name, args.url, settings()))


def _list(as_json: bool) -> int:
    infos = list_profiles()
    if as_json:
        print(json.dumps([{"name": i.name, "size_bytes": i.size, "last_used": i.last_used,
                           "held_by": i.holder.describe() if i.holder else None} for i in infos], indent=1))
        return 0
    if not infos:
        print("No profiles yet. `webhand profile login NAME [URL]` makes one and lets you sign in.")
        return 0
    for info in infos:
        held = f"in use by {info.holder.describe()}" if info.holder else "free"
        print(f"{info.name}  {_size(info.size)}  last used {time.strftime('%Y-%m-%d %H:%M', time.localtime(info.last_used))}"
              f"  {held}")
    return 0


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} B"


async def _login(name: str, url: str | None, settings: Settings) -> int:
    from webhand.host import Webhand

    visible = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    # The profile is this command's; nothing else the config says about sign-ins applies to it.
    settings = settings.model_copy(update={"profile": name, "headless": not visible, "warm_reserve": False,
                                           "storage_state": None, "save_storage_state": False})
    async with Webhand(settings) as webhand:
        context = webhand.conversation(_CONVERSATION)
        opened = await context.call("browser_navigate", {"url": url}) if url else \
            await context.call("browser_session_create", {})
        if opened.is_error:
            print(f"webhand: {opened.text}", file=sys.stderr)
            return 1
        session = webhand.sessions.find(_CONVERSATION)
        assert session is not None
        server = None
        if visible:
            print(f"A browser window is open on profile {name!r}. Sign in there; when you are done, press Enter "
                  "here (or close the window).", flush=True)
        else:
            server, address = await _serve_dashboard(webhand, session.public_id)
            print(f"No display here: the browser runs headless. Open {address} , click \"Take control\", and sign "
                  "in there. When you are done, press Enter here.", flush=True)
        try:
            await _until_done(session)
            held = await _what_it_holds(session)
        finally:
            if server is not None:
                await server.stop()
    from webhand.session.storage_state import summary

    if held is None:
        print(f"The browser of profile {name!r} was closed before webhand could read it; what it holds is kept at "
              f"{profile_dir(name)}.")
    elif not held.get("cookies") and not held.get("origins"):
        print(f"Nothing was saved in profile {name!r}: it holds no cookies and no site storage. Run `webhand profile "
              f"login {name}` again and press Enter only once you are signed in.")
    else:
        print(f"Profile {name!r} kept at {profile_dir(name)}: it holds {summary(held)}; sessions with profile = \"{name}\" "
              "start with them.")
    return 0


async def _what_it_holds(session: Session) -> dict[str, Any] | None:
    """The profile's cookies and site storage (a storage state), None when its browser is gone
    (the person closed the window)."""
    from webhand.errors import WebhandError

    if not session.alive:
        return None
    try:
        return await session.context.storage_state()
    except WebhandError:
        return None


async def _serve_dashboard(webhand: Webhand, public_id: str) -> tuple[DashboardServer, str]:
    from webhand.security.locations import runtime_dir
    from webhand.surfaces.dashboard import DashboardServer, link, user_token
    from webhand.surfaces.http_security import HttpOptions

    token = user_token(runtime_dir())
    server = DashboardServer(webhand, HttpOptions(host="127.0.0.1", port=0, token=token, require_token=True))
    await server.start()
    return server, link(server.url, public_id, token)


async def _until_done(session: Session) -> None:
    """Until the person says so: Enter on the terminal, Ctrl-C, or closing the browser's window.
    The end of input is no signal (a closed standard input says nothing about a sign-in): then
    the command says how to end it, and waits for one of the others."""
    import signal

    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    watching_input = False

    def input_ended() -> None:
        print("Standard input is closed: press Ctrl-C here (or close the browser's window) when you are done.",
              flush=True)

    def line_read(line: str) -> None:
        if line:
            done.set()
        else:
            input_ended()

    def on_input() -> None:
        line = sys.stdin.readline()
        if not line:
            loop.remove_reader(sys.stdin.fileno())
        line_read(line)

    try:
        loop.add_reader(sys.stdin.fileno(), on_input)
        watching_input = True
    except (OSError, ValueError, NotImplementedError):
        # Input that cannot be polled (a file, /dev/null) is read in a thread.
        reading = loop.run_in_executor(None, sys.stdin.readline)
        reading.add_done_callback(lambda read: line_read(read.result() if not read.exception() else ""))
    loop.add_signal_handler(signal.SIGINT, done.set)
    try:
        while not done.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(done.wait(), _WINDOW_CHECK_SECONDS)
            if not session.alive or not [t for t in session.context.tabs if not t.closed]:
                return  # the person closed the window (or the browser)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if watching_input:
            with contextlib.suppress(ValueError, OSError):
                loop.remove_reader(sys.stdin.fileno())
