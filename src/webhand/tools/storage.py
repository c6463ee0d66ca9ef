"""Cookies, localStorage/sessionStorage, and saved storage state (log in once, reuse later).

A domain filter matches the domain and its subdomains: "example.com" covers cookies of
example.com, .example.com and www.example.com. A saved storage state holds cookies and
localStorage; it is a credential, so its path is confined like any file (the conversation's own
folder, or a root the user configured) and the file is written owner-only.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field

from webhand.durations import Timeout
from webhand.engine.driver import Cookie
from webhand.errors import InvalidArgument, shorten
from webhand.response import Response, to_json_text
from webhand.session.session import Session
from webhand.session.storage_state import read_storage_state, summary as _summary
from webhand.tools.definition import PageArgs, tool

_SHOWN_VALUE_CHARS = 200


class CookiesArgs(PageArgs):
    action: Literal["list", "get", "set", "delete", "clear"] = Field(
        "list", description="list cookies; get/set/delete one by name; clear all (or all of `domain`).")
    name: str | None = Field(None, description="Cookie name (get, set, delete).")
    value: str | None = Field(None, description="Cookie value (set).")
    domain: str | None = Field(None, description="Filter (list, get, delete, clear) or the cookie's domain (set; default: the current page's host).")
    path: str = Field("/", description="Cookie path (set).")
    expires: float | None = Field(None, description="Expiry as Unix time in seconds (set); omit for a session cookie.")
    http_only: bool = Field(False, description="Hide from page JavaScript (set).")
    secure: bool = Field(False, description="HTTPS only (set).")
    same_site: Literal["Strict", "Lax", "None"] = Field("Lax", description="SameSite policy (set).")


@tool("browser_cookies", capability="storage", destructive=True)
async def cookies(session: Session, args: CookiesArgs, response: Response) -> None:
    """List, get, set, delete or clear the session's cookies, optionally for one domain."""
    context = session.context
    if args.action in ("get", "set", "delete") and not args.name:
        raise InvalidArgument(f"`name` is needed to {args.action} a cookie.", "Call again with the cookie's name.")
    if args.action == "set":
        if args.value is None:
            raise InvalidArgument("`value` is needed to set a cookie.", "Call again with name and value.")
        domain = args.domain or urlsplit((await session.tab()).url).hostname
        if not domain:
            raise InvalidArgument("The current page has no host to set the cookie on.",
                                  "Give `domain`, or navigate to the site first.")
        await context.set_cookie(Cookie(args.name or "", args.value, domain, args.path, args.expires or -1,
                                        args.http_only, args.secure, args.same_site))
        response.add(f"Set cookie {args.name} for {domain}{args.path}.")
        return
    found = [c for c in await context.cookies()
             if (args.domain is None or _on_domain(c.domain, args.domain)) and (args.name is None or c.name == args.name)]
    where = f" for {shorten(args.domain)}" if args.domain else ""
    if args.action in ("delete", "clear"):
        for cookie in found:
            await context.delete_cookies(name=cookie.name, domain=cookie.domain, path=cookie.path)
        what = f"cookie {args.name}" if args.action == "delete" else "cookies"
        response.add(f"Deleted {len(found)} {what}{where}." if found else f"No {what}{where} to delete.")
        return
    if not found:
        response.add(f"No cookie named {shorten(args.name)}{where}." if args.name else f"No cookies{where}.")
    else:
        response.add(f"{len(found)} cookie{'s' if len(found) != 1 else ''}{where}:\n" + "\n".join(_line(c, response) for c in found))
    response.data({"cookies": [_as_dict(c) for c in found]})


def _on_domain(cookie_domain: str, wanted: str) -> bool:
    have, want = cookie_domain.lstrip(".").lower(), wanted.strip().lstrip(".").lower()
    return have == want or have.endswith("." + want)


def _line(cookie: Cookie, response: Response) -> str:
    value = response.clip(cookie.value, _SHOWN_VALUE_CHARS + 1)
    flags = [f for f, on in (("HttpOnly", cookie.http_only), ("Secure", cookie.secure)) if on]
    expiry = "session" if cookie.expires < 0 else f"expires {cookie.expires:.0f}"
    return f"- {cookie.name}={value} ({cookie.domain}{cookie.path}; {', '.join([expiry, *flags])})"


def _as_dict(cookie: Cookie) -> dict[str, Any]:
    return {"name": cookie.name, "value": cookie.value, "domain": cookie.domain, "path": cookie.path,
            "expires": cookie.expires, "http_only": cookie.http_only, "secure": cookie.secure,
            "same_site": cookie.same_site}


class StorageArgs(PageArgs):
    area: Literal["local", "session"] = Field("local", description="localStorage or sessionStorage.")
    action: Literal["get", "set", "delete", "clear"] = Field(
        "get", description="get one key (or every item without key); set, delete a key; clear all.")
    key: str | None = Field(None, description="Item key (get, set, delete).")
    value: str | None = Field(None, description="Item value (set).")
    timeout: Timeout = None


@tool("browser_storage", capability="storage", destructive=True)
async def storage(session: Session, args: StorageArgs, response: Response) -> None:
    """Read or change the current page's localStorage or sessionStorage."""
    if args.action in ("set", "delete") and args.key is None:
        raise InvalidArgument(f"`key` is needed to {args.action} an item.", "Call again with the key.")
    if args.action == "set" and args.value is None:
        raise InvalidArgument("`value` is needed to set an item.", "Call again with key and value.")
    tab = await session.tab()
    items = await tab.web_storage(args.area, args.action, args.key, args.value,
                                   timeout=args.timeout or session.settings.timeout)
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(tab.url))
    name = f"{args.area}Storage of {origin}"
    if args.action == "set":
        response.add(f"Set {args.key!r} in {name}.")
    elif args.action == "delete":
        response.add(f"Deleted {args.key!r} from {name}.")
    elif args.action == "clear":
        response.add(f"Cleared {name}.")
    elif args.key is not None:
        value = items.get(args.key)
        response.add(f"{args.key!r} in {name}: " + (repr(value) if value is not None else "not set"))
        response.data({"key": args.key, "value": value})
    else:
        response.add(f"{name} has {len(items)} item{'s' if len(items) != 1 else ''}:")
        response.large(to_json_text(items), what="storage items", suffix=".json")
        response.data({"items": items})


class StorageStateArgs(PageArgs):
    action: Literal["save", "load"] = Field(description="save the session's cookies and localStorage to a file, or load them from one.")
    path: str = Field(description="JSON file: a name in your own folder (e.g. login.json), or inside a folder the user shared.")
    timeout: Timeout = None


@tool("browser_storage_state", capability="storage", destructive=True)
async def storage_state(session: Session, args: StorageStateArgs, response: Response) -> None:
    """Save cookies and localStorage to a file, or load them from one: log in once, reuse the login later."""
    target = response.files.confine(args.path)
    if args.action == "save":
        # Masked value by value (the JSON stays valid): a page may have stored a typed secret.
        # Masking is one-way, so such a value does not come back on load; a login cookie rarely is one.
        state = response.masker.data(await session.context.storage_state())
        text = json.dumps(state, indent=1)
        response.files.write(target, text.encode())
        response.saved(target)
        response.add(f"Saved {_summary(state)} to {target} ({len(text.encode()):,} bytes). "
                     "It holds login cookies: keep it private.")
        return
    # In a thread: a large file takes a moment to check, which the other sessions must not wait for.
    state = await asyncio.to_thread(read_storage_state, target, "Save one first with browser_storage_state action=save.")
    await session.context.set_storage_state(state, timeout=args.timeout or session.settings.timeout)
    response.add(f"Loaded {_summary(state)} from {target}; they replace the session's earlier cookies and storage. "
                 "Navigate (or reload) to use them.")
