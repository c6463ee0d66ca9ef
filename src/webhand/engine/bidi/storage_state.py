"""The storage state (browser_storage_state, named sessions' saved logins) on Firefox: the user
context's cookies and the localStorage of each origin it has shown, in Playwright's format.

localStorage is read and written in a document of its origin: a frame of an open tab when one
shows it, else a background tab of the same user context whose request for the origin is
answered here with an empty page (``network.addIntercept`` + ``network.provideResponse``), so
nothing reaches the site.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol
from urllib.parse import urlsplit

from webhand.engine.bidi import values
from webhand.engine.bidi.connection import PROTOCOL_ERRORS, BidiConnection, guarded
from webhand.engine.driver import Cookie
from webhand.errors import ActionTimeout, WebhandError

READ = ("() => Array.from({length: localStorage.length}, (_, i) => localStorage.key(i))"
        ".map((name) => ({name, value: localStorage.getItem(name)}))")
WRITE = "(items) => { for (const {name, value} of items) localStorage.setItem(name, value); }"


def origin_of(url: str) -> str | None:
    """The origin of an http(s) URL (the only ones with a localStorage worth keeping), else None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


class StorageOwner(Protocol):
    """What this needs of a BidiContext."""

    connection: BidiConnection
    user_context: str
    origins: set[str]

    def frame_of_origin(self, origin: str) -> str | None: ...

    async def cookies(self) -> list[Cookie]: ...

    async def set_cookie(self, cookie: Cookie) -> None: ...

    async def delete_cookies(self, *, name: str | None = None, domain: str | None = None,
                             path: str | None = None) -> None: ...


async def storage_state(owner: StorageOwner, *, timeout: float = 30) -> dict[str, Any]:
    cookies = [{"name": c.name, "value": c.value, "domain": c.domain, "path": c.path, "expires": c.expires,
                "httpOnly": c.http_only, "secure": c.secure, "sameSite": c.same_site} for c in await owner.cookies()]
    origins = []
    for origin in sorted(owner.origins):
        items = await _on_origin(owner, origin, READ, None, timeout)
        if items:
            origins.append({"origin": origin, "localStorage": items})
    return {"cookies": cookies, "origins": origins}


async def set_storage_state(owner: StorageOwner, state: dict[str, Any], *, timeout: float) -> None:
    try:
        async with asyncio.timeout(timeout):
            await owner.delete_cookies()
            for c in state.get("cookies", []):
                await owner.set_cookie(Cookie(c["name"], c["value"], c["domain"], c.get("path", "/"),
                                              c.get("expires", -1), c.get("httpOnly", False), c.get("secure", False),
                                              c.get("sameSite", "Lax")))
            for entry in state.get("origins", []):
                await _on_origin(owner, entry["origin"], WRITE, entry.get("localStorage", []), timeout)
                owner.origins.add(entry["origin"])
    except TimeoutError:
        raise ActionTimeout(f"Loading the storage state did not finish within {timeout:g} s.",
                            "Try again with a larger timeout.") from None


async def _call(owner: StorageOwner, context: str, script: str, arg: Any, timeout: float) -> Any:
    async with guarded("Reading or writing localStorage", timeout):
        result = await owner.connection.send("script.callFunction", {
            "functionDeclaration": script, "target": {"context": context}, "awaitPromise": True,
            "arguments": [values.to_local(arg)] if arg is not None else [], "resultOwnership": "none"})
    if result.get("type") == "exception":
        text = (result.get("exceptionDetails") or {}).get("text", "an exception")
        raise WebhandError(f"Using localStorage failed in the page: {text}.", "Try again.")
    return values.from_remote(result.get("result") or {})


async def _on_origin(owner: StorageOwner, origin: str, script: str, arg: Any, timeout: float) -> Any:
    context = owner.frame_of_origin(origin)
    if context is not None:
        return await _call(owner, context, script, arg, timeout)
    connection = owner.connection
    async with guarded("Opening a background tab for the storage state", timeout):
        created = await connection.send("browsingContext.create", {"type": "tab", "userContext": owner.user_context,
                                                                   "background": True})
    scratch = created["context"]

    def answer(params: dict[str, Any]) -> None:
        if params.get("context") == scratch and params.get("isBlocked"):
            asyncio.ensure_future(_empty_page(connection, params["request"]["request"]))

    stop = connection.on("network.beforeRequestSent", answer)
    intercept: str | None = None
    try:
        async with guarded("Opening a background tab for the storage state", timeout):
            added = await connection.send("network.addIntercept", {"phases": ["beforeRequestSent"], "contexts": [scratch]})
            intercept = added["intercept"]
            await connection.send("browsingContext.navigate", {"context": scratch, "url": origin + "/", "wait": "complete"})
        return await _call(owner, scratch, script, arg, timeout)
    finally:
        stop()
        with contextlib.suppress(WebhandError):
            async with guarded("Closing the background tab", 10):
                if intercept is not None:
                    await connection.send("network.removeIntercept", {"intercept": intercept})
                await connection.send("browsingContext.close", {"context": scratch})


async def _empty_page(connection: BidiConnection, request: str) -> None:
    with contextlib.suppress(TimeoutError, *PROTOCOL_ERRORS):
        await asyncio.wait_for(connection.send("network.provideResponse", {
            "request": request, "statusCode": 200, "reasonPhrase": "OK",
            "headers": [{"name": "Content-Type", "value": {"type": "string", "value": "text/html"}}],
            "body": {"type": "string", "value": "<!doctype html><title></title>"}}), 10)
