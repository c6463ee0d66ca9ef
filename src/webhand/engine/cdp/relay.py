"""The extension bridge's relay: a WebSocket server on 127.0.0.1 that webhand's browser extension
(``src/webhand/extension/``) connects to from the Chrome a person already runs, and the client that
makes the tabs that person shared look, to the raw-CDP driver, like a browser connection whose only
targets are those tabs.

    extension (chrome.debugger on shared tabs) ─ws─► ExtensionRelay ─► ExtensionLink ─► RelayClient ─► CdpConnection

Who may connect: the relay checks the handshake's ``Origin`` (only ``chrome-extension://<the
extension's id>``: a web page's WebSocket carries its own origin and is refused before any message)
and then a challenge-response on the pairing token (``security/pairing.py``): the extension says
hello with a nonce, the relay answers with its own nonce and its proof, and the extension answers
with its proof only if the relay's was right. The token never crosses the socket, so another local
user listening on the port while webhand is not running learns nothing of use. Until the extension
proved itself, a message may be at most 4 KiB (a bigger frame closes the connection before its
payload is read); after, up to 100 MiB (a full-page screenshot).

What the driver may do: commands on a shared tab's sessions go to the extension, which sends them
with ``chrome.debugger``, if they are among the methods webhand's driver uses (``TAB_METHODS``).
Navigation goes only to http(s) pages the origin policy allows; cookies read through the bridge are
only those the shared tabs' hosts receive, and only theirs are set or deleted (bridge_boundary.py
holds these rules). Browser-wide commands have no tab to go to; the few the driver needs to
start (``Browser.getVersion``, target discovery, a second session on a tab for the live view) are
answered here, and the rest, new tabs, new browser contexts, closing a tab or the browser, are
refused with an error that says what to do instead. A tab becomes a target only when the extension
says the person shared it; commands that name any other tab are refused here and in the extension.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from webhand.engine.cdp.bridge_boundary import (COOKIE_CHANGES, COOKIE_READS, TAB_METHODS, check_cookie_change,
                                                check_navigation, hosts_of, shared_sites_cookies, why_lost)
from webhand.engine.cdp.connection import CommandProxy
from webhand.errors import BrowserLaunchFailed, WebhandError
from webhand.security.origins import OWN_ENDPOINTS, OriginRules
from webhand.security.pairing import EXTENSION_ORIGIN, NONCE, new_nonce, proof, token_matches

log = logging.getLogger("webhand.bridge")

#: The browser context id the shared tabs carry on the emulated connection.
SHARED_TABS_CONTEXT = "webhand-extension-shared-tabs"
#: The relay's port when none is configured; the extension's popup defaults to the same.
DEFAULT_RELAY_PORT = 47311
_HELLO_TIMEOUT_SECONDS = 5.0
_REQUEST_TIMEOUT_SECONDS = 60.0  # a cap for one command the caller did not cap itself
_MAX_MESSAGE_BYTES = 100 * 1024 * 1024  # a full-page screenshot fits
_MAX_UNAUTHENTICATED_BYTES = 4096  # a hello or a proof is under 300 bytes


_NOT_SHARED_HINT = "Share a tab by clicking the webhand button in Chrome's toolbar and choosing Share this tab."


def refused(what: str) -> WebhandError:
    return WebhandError(f"{what} is not possible through the browser extension: chrome.debugger reaches only the "
                        "tabs the person shared, not the browser itself.",
                        "Work in the shared tabs (browser_tabs lists them); for new tabs or the whole browser, use "
                        "a browser webhand launches, or a cdp_url.")


class ExtensionLink:
    """One connection of the extension, after its token was accepted."""

    def __init__(self, socket: ServerConnection, user_agent: str) -> None:
        self.socket = socket
        self.user_agent = user_agent[:300]
        self.shared: dict[int, dict[str, str]] = {}  # tab id -> url, title, as the extension last said
        self.clients: set[RelayClient] = set()
        self.closed = asyncio.Event()
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self.shared_known = asyncio.Event()  # the extension said which tabs are shared at least once

    async def request(self, message: dict[str, Any], timeout: float = _REQUEST_TIMEOUT_SECONDS) -> dict[str, Any]:
        """Send ``message`` with a fresh id; its reply's result, or a RuntimeError as CDP's own errors read."""
        if self.closed.is_set():
            raise ConnectionError("the browser extension disconnected")
        number = next(self._ids)
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[number] = answer
        try:
            await self.socket.send(json.dumps({**message, "id": number}))
            return await asyncio.wait_for(answer, timeout)
        except ConnectionClosed:
            raise ConnectionError("the browser extension disconnected") from None
        finally:
            self._replies.pop(number, None)

    async def tell(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.socket.send(json.dumps(message))

    def received(self, raw: str | bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        kind = message.get("type")
        if kind == "reply":
            answer = self._replies.get(message.get("id"))  # type: ignore[arg-type]
            if answer is not None and not answer.done():
                if message.get("error") is not None:
                    answer.set_exception(RuntimeError({"message": str(message["error"])[:500]}))
                else:
                    result = message.get("result")
                    answer.set_result(result if isinstance(result, dict) else {})
        elif kind == "shared":
            tabs = message.get("tabs")
            if isinstance(tabs, list):
                self.shared = {t["tabId"]: {"url": str(t.get("url", "")), "title": str(t.get("title", ""))}
                               for t in tabs if isinstance(t, dict) and isinstance(t.get("tabId"), int)}
                self.shared_known.set()
                for client in list(self.clients):
                    client.shared_changed()
        elif kind in ("event", "detached") and isinstance(message.get("tabId"), int):
            for client in list(self.clients):
                client.from_extension(message)

    def lost(self) -> None:
        self.closed.set()
        for answer in self._replies.values():
            if not answer.done():
                answer.set_exception(ConnectionError("the browser extension disconnected"))
        for client in list(self.clients):
            client.link_lost()


class ExtensionRelay:
    """The server the extension connects to; at most one extension connection at a time."""

    def __init__(self, port: int, token: Callable[[], str], *, origin: str = EXTENSION_ORIGIN) -> None:
        self.port = port
        self._token = token
        self._origin = origin
        self._server: Server | None = None
        self.link: ExtensionLink | None = None
        self._linked = asyncio.Event()
        self.refusal: str | None = None  # why the last connection was refused, for the error that waits on one

    async def start(self) -> None:
        if self._server is not None:
            return
        token = self._token()  # made or checked now: a bad token file fails the start, not each handshake
        self._token = lambda: token
        try:
            self._server = await serve(self._serve, "127.0.0.1", self.port, origins=[self._origin],  # type: ignore[list-item]
                                       max_size=_MAX_UNAUTHENTICATED_BYTES, max_queue=4, compression=None, server_header=None)
        except OSError as error:
            raise BrowserLaunchFailed(f"The extension relay could not listen on 127.0.0.1:{self.port} "
                                      f"({error.strerror or error}).",
                                      "Another webhand may run the relay already; stop it, or set extension_port "
                                      "(and the port in the extension's popup) to a free port.") from None
        self.port = self._server.sockets[0].getsockname()[1] if self._server.sockets else self.port
        # Like the dashboards and MCP servers: no page any webhand of this user drives may reach it.
        OWN_ENDPOINTS.add("127.0.0.1", self.port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            OWN_ENDPOINTS.remove(self.port)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None

    async def wait_link(self, timeout: float) -> ExtensionLink:
        """The extension's connection, waiting up to ``timeout`` for it to connect and say which tabs
        are shared."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    link = self.link
                    if link is not None and not link.closed.is_set():
                        await link.shared_known.wait()
                        return link
                    self._linked.clear()
                    await self._linked.wait()
        except TimeoutError:
            refused = f" The last connection was refused: {self.refusal}." if self.refusal else ""
            raise BrowserLaunchFailed(f"No webhand browser extension connected to 127.0.0.1:{self.port} within "
                                      f"{timeout:g} s.{refused}",
                                      "Load the extension in Chrome (`webhand extension path`, chrome://extensions, "
                                      "Load unpacked), paste the token `webhand extension pair` prints into its popup, "
                                      "and check that its port is the same as extension_port.") from None

    async def _serve(self, socket: ServerConnection) -> None:
        if socket.request is None or socket.request.path != "/extension":
            await socket.close(4004, "unknown path")
            return
        hello = await self._authenticate(socket)
        if hello is None:
            return
        socket.protocol.max_message_size = _MAX_MESSAGE_BYTES  # it proved itself: screenshots may come now
        link = ExtensionLink(socket, str(hello.get("userAgent") or ""))
        old, self.link = self.link, link
        if old is not None:
            await old.socket.close(4000, "replaced by a newer connection")
        log.info("the browser extension connected")
        await link.tell({"type": "welcome"})
        self._linked.set()
        try:
            async for raw in socket:
                link.received(raw)
        except ConnectionClosed:
            pass
        finally:
            link.lost()
            if self.link is link:
                self.link = None


    async def _authenticate(self, socket: ServerConnection) -> dict[str, Any] | None:
        """The challenge-response (security/pairing.py): the extension's hello, then the relay's
        nonce and proof, then the extension's proof. Its hello when it proved itself; else None,
        the connection closed."""
        async def receive(kind: str) -> dict[str, Any] | None:
            try:
                message = json.loads(await asyncio.wait_for(socket.recv(), _HELLO_TIMEOUT_SECONDS))
            except (TimeoutError, ValueError, ConnectionClosed):
                await socket.close(4001, f"no {kind}")
                return None
            if not isinstance(message, dict) or message.get("type") != kind:
                await socket.close(4001, f"no {kind}")
                return None
            return message

        hello = await receive("hello")
        if hello is None:
            return None
        extension_nonce = hello.get("nonce")
        if not isinstance(extension_nonce, str) or not NONCE.fullmatch(extension_nonce):
            self.refusal = ("its hello had no nonce, as an extension older than this webhand sends (reload the "
                            "extension in chrome://extensions)")
            log.warning("the extension relay refused a connection: %s", self.refusal)
            await socket.close(4003, "hello without a nonce: update the webhand extension")
            return None
        relay_nonce = new_nonce()
        token = self._token()
        with contextlib.suppress(ConnectionClosed):
            await socket.send(json.dumps({"type": "challenge", "nonce": relay_nonce,
                                          "proof": proof(token, "relay", self.port, extension_nonce, relay_nonce)}))
        answer = await receive("auth")
        if answer is None:
            return None
        if not token_matches(answer.get("proof"), proof(token, "extension", self.port, extension_nonce, relay_nonce)):
            self.refusal = "its proof of the pairing token was wrong (pair the extension again)"
            log.warning("the extension relay refused a connection: %s", self.refusal)
            await socket.close(4003, "wrong pairing token")
            return None
        return hello


class RelayClient:
    """What ``CdpConnection`` needs of a CDP client (``send_raw``, ``event_handlers``, ``stop``, a task
    that ends with the connection), over the extension's link. Sessions: ``tab-<id>`` is a shared
    tab's own session (chrome.debugger's root session of that tab), ``tab-<id>-view-<n>`` a second
    one on it (the live view's), and the tab's child sessions (out-of-process frames, workers) keep
    the ids chrome.debugger gives them."""

    #: No socket of its own (the link's belongs to the relay): CdpConnection.close cuts nothing here.
    ws = None

    def __init__(self, link: ExtensionLink, rules: OriginRules | None = None) -> None:
        self.link = link
        self.rules = rules  # the origin policy, for where a shared tab may be sent
        self.lost: str | None = None  # why the last shared tab was lost, said by the next call
        self.event_handlers: dict[str, Callable[[Any, str | None], None]] = {}
        self.send = CommandProxy(self)  # type: ignore[arg-type]
        self._roots: dict[str, int] = {}  # a tab's own sessions (and their second sessions) -> tab id
        self._second: set[str] = set()  # which of those are second sessions (Target.attachToTarget)
        self._children: dict[str, int] = {}  # child session id -> tab id
        self._targets: dict[int, dict[str, Any]] = {}  # tab id -> its target info, while announced
        self._announced: set[int] = set()  # every tab ever announced, to say why one was lost
        self._views = itertools.count(1)
        self._announcing = False
        self._stopped = asyncio.Event()
        link.clients.add(self)
        self._message_handler_task = asyncio.ensure_future(self._until_closed())

    async def _until_closed(self) -> None:
        waits = [asyncio.ensure_future(self._stopped.wait()), asyncio.ensure_future(self.link.closed.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    # the shared tabs as targets ------------------------------------------------------------------
    async def announce(self, timeout: float) -> list[str]:
        """Attach the debugger to every shared tab and report each as an attached target (from now on,
        tabs shared later too). Returns their target ids."""
        self._announcing = True
        found = []
        for tab_id in list(self.link.shared):
            target = await self._attach(tab_id, timeout)
            if target:
                found.append(target)
        return found

    async def _attach(self, tab_id: int, timeout: float) -> str | None:
        if tab_id in self._targets:
            return str(self._targets[tab_id]["targetId"])
        try:
            attached = await self.link.request({"type": "attach", "tabId": tab_id}, timeout)
        except (RuntimeError, ConnectionError, TimeoutError) as error:
            log.warning("could not attach to shared tab %s: %s", tab_id, error)
            return None
        info = {"targetId": str(attached.get("targetId") or f"tab-{tab_id}"), "type": "page",
                "url": str(attached.get("url", "")), "title": str(attached.get("title", "")), "attached": True,
                "browserContextId": SHARED_TABS_CONTEXT, "canAccessOpener": False}
        session = f"tab-{tab_id}"
        self._roots[session] = tab_id
        self._targets[tab_id] = info
        self._announced.add(tab_id)
        self._dispatch("Target.attachedToTarget", {"sessionId": session, "targetInfo": info,
                                                   "waitingForDebugger": False}, None)
        return str(info["targetId"])

    def shared_changed(self) -> None:
        for tab_id in [t for t in self._targets if t not in self.link.shared]:
            self._gone(tab_id)
        if self._announcing:
            for tab_id in [t for t in self.link.shared if t not in self._targets]:
                asyncio.ensure_future(self._attach(tab_id, _REQUEST_TIMEOUT_SECONDS))

    def _gone(self, tab_id: int) -> None:
        info = self._targets.pop(tab_id, None)
        for session in [s for s, t in self._roots.items() if t == tab_id]:
            del self._roots[session]
            self._second.discard(session)
        for session in [s for s, t in self._children.items() if t == tab_id]:
            del self._children[session]
        if info is not None:
            self._dispatch("Target.detachedFromTarget", {"sessionId": f"tab-{tab_id}", "targetId": info["targetId"]},
                           None)

    def from_extension(self, message: dict[str, Any]) -> None:
        tab_id = message["tabId"]
        if message["type"] == "detached" and tab_id in self._announced:
            self.lost = why_lost(str(message.get("reason", "")), str(message.get("url", ""))[:200]) or self.lost
        if tab_id not in self._targets:
            return  # not a tab announced to this client (or one already gone)
        if message["type"] == "detached":
            self._gone(tab_id)
            return
        method, params, child = message.get("method"), message.get("params"), message.get("sessionId")
        if not isinstance(method, str) or not isinstance(params, dict):
            return
        if method == "Target.attachedToTarget" and isinstance(params.get("sessionId"), str):
            self._children[params["sessionId"]] = tab_id
        elif method == "Target.detachedFromTarget":
            self._children.pop(str(params.get("sessionId")), None)
        if isinstance(child, str):
            if self._children.get(child) == tab_id:
                self._dispatch(method, params, child)
            return
        for session in [s for s, t in self._roots.items() if t == tab_id]:
            self._dispatch(method, params, session)
        if method == "Page.frameNavigated":
            frame = params.get("frame") or {}
            if not frame.get("parentId") and frame.get("url"):
                self._targets[tab_id]["url"] = frame["url"]

    def _dispatch(self, method: str, params: dict[str, Any], session_id: str | None) -> None:
        handler = self.event_handlers.get(method)
        if handler is not None:
            handler(params, session_id)

    # commands --------------------------------------------------------------------------------------
    async def send_raw(self, method: str, params: Any = None, session_id: str | None = None) -> dict[str, Any]:
        if self._stopped.is_set() or self.link.closed.is_set():
            raise ConnectionError("the browser extension disconnected")
        params = dict(params or {})
        if session_id is None:
            return await self._browser_command(method, params)
        tab_id = self._roots.get(session_id)
        child = None
        if tab_id is None:
            tab_id, child = self._children.get(session_id), session_id
        if tab_id is None or tab_id not in self._targets:
            raise RuntimeError({"message": "Session with given id not found."})
        if method not in TAB_METHODS:
            raise refused(f"The DevTools command {method}")
        if method == "Page.navigate":
            check_navigation(str(params.get("url", "")), self.rules)
        elif method in COOKIE_CHANGES:
            check_cookie_change(method, params, self.shared_hosts())
        try:
            answer = await self.link.request({"type": "command", "tabId": tab_id, "sessionId": child, "method": method,
                                              "params": params})
        except RuntimeError as error:
            # chrome.debugger leaves out some domains (ServiceWorker, Browser, SystemInfo …) and says
            # "wasn't found", as for a typo: here it means the extension cannot do it.
            said = str(error.args[0].get("message", "")) if error.args and isinstance(error.args[0], dict) else ""
            if "wasn't found" in said or "not allowed" in said.lower():
                raise refused(f"The DevTools command {method}") from None
            raise
        if method in COOKIE_READS:  # the browser answers with every site's: keep the shared tabs' sites'
            answer = {**answer, "cookies": shared_sites_cookies(answer.get("cookies"), self.shared_hosts())}
        return answer

    async def _browser_command(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "Browser.getVersion":
            product = next((part.removeprefix("Headless") for part in self.link.user_agent.split()
                            if part.startswith(("Chrome/", "HeadlessChrome/"))), "Chrome")
            return {"protocolVersion": "1.3", "product": product, "userAgent": self.link.user_agent,
                    "jsVersion": "", "revision": ""}
        if method in ("Target.setDiscoverTargets", "Target.setAutoAttach"):
            return {}  # the shared tabs are announced when a context asks (announce)
        if method == "Target.getTargets":
            return {"targetInfos": list(self._targets.values())}
        tab_id = self._tab_of_target(str(params.get("targetId", "")))
        if method == "Target.attachToTarget" and tab_id is not None:
            session = f"tab-{tab_id}-view-{next(self._views)}"
            self._roots[session] = tab_id
            self._second.add(session)
            return {"sessionId": session}
        if method == "Target.activateTarget" and tab_id is not None:
            return await self.link.request({"type": "activate", "tabId": tab_id})
        if method == "Target.detachFromTarget":
            session = str(params.get("sessionId", ""))
            if session in self._roots:
                if session in self._second:  # a second session: only its listeners were here
                    del self._roots[session]
                    self._second.discard(session)
                return {}  # a tab's own session stays while the tab is shared
            if session in self._children:
                tab_id = self._children[session]
                return await self.link.request({"type": "command", "tabId": tab_id, "sessionId": None,
                                                "method": method, "params": {"sessionId": session}})
            return {}
        if method == "Target.closeTarget":
            raise WebhandError("webhand does not close a tab of the Chrome you run: it is yours, and stays open.",
                               "To stop webhand driving it, click the webhand button in that tab and choose Stop "
                               "sharing.")
        if method in ("Target.attachToTarget", "Target.activateTarget"):
            raise RuntimeError({"message": "No target with given id found"})
        what = {"Target.createTarget": "Opening a new tab", "Target.createBrowserContext": "A new browser context",
                "Browser.close": "Closing the browser"}.get(method, f"The browser-wide command {method}")
        raise refused(what)

    def shared_hosts(self) -> set[str]:
        """The hosts of the pages the shared tabs show (as the extension and the pages' navigations said)."""
        return hosts_of([info.get("url", "") for info in self.link.shared.values()]
                        + [str(info.get("url", "")) for info in self._targets.values()])

    def _tab_of_target(self, target_id: str) -> int | None:
        return next((tab for tab, info in self._targets.items() if info["targetId"] == target_id), None)

    # the end -----------------------------------------------------------------------------------------
    def link_lost(self) -> None:
        self._stopped.set()

    async def release(self) -> None:
        """Detach the debugger from every tab (they stay shared, and open)."""
        self._announcing = False
        for tab_id in list(self._targets):
            self._gone(tab_id)
        if not self.link.closed.is_set():
            await self.link.tell({"type": "release"})

    async def stop(self) -> None:
        await self.release()
        self._stopped.set()
        self.link.clients.discard(self)
