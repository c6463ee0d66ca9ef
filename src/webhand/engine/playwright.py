"""The Driver on Playwright: webhand launches Chromium itself and attaches over CDP.

Launching ourselves (``engine/chrome.py``) is what gives us the pid, the process group and the
registry; Playwright brings the well-tested actionability checks, frames and events.
Playwright exceptions never leave this module: ``_translate`` turns them into webhand errors.
"""

from __future__ import annotations

import asyncio
import re
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

from playwright.async_api import Browser as PWBrowser
from playwright.async_api import BrowserContext as PWContext
from playwright.async_api import CDPSession, ElementHandle, Playwright, async_playwright
from playwright.async_api import Error as PWError
from playwright.async_api import Frame as PWFrame
from playwright.async_api import Page as PWPage
from playwright.async_api import TimeoutError as PWTimeout

from webhand.config import Settings
from webhand.engine.chrome import ChromeProcess, find_chromium
from webhand.engine.driver import ConsoleEntry, NavigationResult, TabEvents, WaitUntil
from webhand.errors import (ActionTimeout, BrowserLaunchFailed, ElementNotActionable, EvaluationFailed,
                            NavigationFailed, RefNotFound, SessionClosed, WebhandError)

_REF = re.compile(r"^(?:(f\d+))?(e\d+)$")
_SNAPSHOT_AGAIN = "Call browser_snapshot and use the new refs."


# ---------------------------------------------------------------------------------------------
# Errors


def _translate(error: Exception, doing: str, timeout: float | None = None) -> WebhandError:
    """Turn a Playwright error into the webhand error a model can act on."""
    text = str(error)
    first = text.splitlines()[0] if text else type(error).__name__
    lowered = text.lower()
    if "has been closed" in lowered or "target closed" in lowered or "browser has disconnected" in lowered:
        return SessionClosed(f"{doing} failed: the page or browser was closed.",
                             "Call the tool again to start a fresh browser, or browser_tabs to pick another tab.")
    covering = re.search(r"(<[^\n]*?>)(?:[^\n]*?) intercepts pointer events", text)
    if covering:
        return ElementNotActionable(f"{doing} failed: the element is covered by {covering.group(1)[:120]}.",
                                    "Close or scroll away what covers it (e.g. a dialog or banner), then try again.")
    for needle, why in (("not attached to the dom", "the element was removed from the page"),
                        ("element is not visible", "the element is not visible"),
                        ("element is not enabled", "the element is disabled"),
                        ("element is not editable", "the element is not editable"),
                        ("not an <input>", "the element is not a text field"),
                        ("element is not a <select>", "the element is not a select"),
                        ("outside of the viewport", "the element is outside the viewport")):
        if needle in lowered:
            hint = _SNAPSHOT_AGAIN if "removed" in why else "Call browser_snapshot to see its state, then choose another element or wait."
            return ElementNotActionable(f"{doing} failed: {why}.", hint)
    if isinstance(error, PWTimeout) or "timeout" in first.lower():
        seconds = f" within {timeout:g} s" if timeout else ""
        return ActionTimeout(f"{doing} did not finish{seconds}.",
                             "Call browser_snapshot to see the page, then retry with a larger timeout or another element.")
    return WebhandError(f"{doing} failed: {first}", "Call browser_snapshot to see the page state.")


def _navigation_error(error: Exception, url: str, timeout: float) -> WebhandError:
    text = str(error)
    net = re.search(r"net::(ERR_[A-Z_]+)", text)
    if net:
        code = net.group(1)
        why = {
            "ERR_CONNECTION_REFUSED": "the connection was refused (nothing listens there)",
            "ERR_NAME_NOT_RESOLVED": "the host name could not be resolved",
            "ERR_ADDRESS_UNREACHABLE": "the address is unreachable",
            "ERR_INTERNET_DISCONNECTED": "there is no network",
            "ERR_CONNECTION_RESET": "the connection was reset",
            "ERR_EMPTY_RESPONSE": "the server closed the connection without a response",
            "ERR_CERT_AUTHORITY_INVALID": "the TLS certificate is not trusted",
            "ERR_BLOCKED_BY_CLIENT": "webhand's origin policy blocked it",
        }.get(code, code)
        return NavigationFailed(f"Navigation to {url} failed: {why} ({code}).",
                                "Check the URL (scheme, host, port) and that the server is up, then call browser_navigate again.")
    if "invalid url" in text.lower() or "cannot navigate to invalid url" in text.lower():
        return NavigationFailed(f"'{url}' is not a valid URL.", "Give a full URL such as https://example.com/path.")
    if isinstance(error, PWTimeout):
        return ActionTimeout(f"Navigation to {url} did not finish within {timeout:g} s.",
                             "Retry with wait_until='domcontentloaded' or a larger timeout; browser_snapshot shows what loaded.")
    return _translate(error, f"Navigation to {url}", timeout)


@asynccontextmanager
async def _translated(doing: str, timeout: float | None = None) -> AsyncIterator[None]:
    try:
        yield
    except WebhandError:
        raise
    except PWError as error:
        raise _translate(error, doing, timeout) from None


# ---------------------------------------------------------------------------------------------
# Elements and frames


class PlaywrightElement:
    def __init__(self, handle: ElementHandle, ref: str) -> None:
        self.handle = handle
        self.ref = ref

    async def click(self, *, button: str = "left", click_count: int = 1, modifiers: list[str] | None = None,
                    timeout: float) -> None:
        async with _translated(f"Clicking {self.ref}", timeout):
            await self.handle.click(button=button, click_count=click_count, modifiers=modifiers or None,  # type: ignore[arg-type]
                                    timeout=timeout * 1000)

    async def fill(self, text: str, *, timeout: float) -> None:
        async with _translated(f"Typing into {self.ref}", timeout):
            await self.handle.fill(text, timeout=timeout * 1000)

    async def type(self, text: str, *, delay_ms: float, timeout: float) -> None:
        async with _translated(f"Typing into {self.ref}", timeout):
            await self.handle.type(text, delay=delay_ms, timeout=timeout * 1000)

    async def press(self, key: str, *, timeout: float) -> None:
        async with _translated(f"Pressing {key} on {self.ref}", timeout):
            await self.handle.press(key, timeout=timeout * 1000)

    async def hover(self, *, timeout: float) -> None:
        async with _translated(f"Hovering {self.ref}", timeout):
            await self.handle.hover(timeout=timeout * 1000)

    async def focus(self, *, timeout: float) -> None:
        async with _translated(f"Focusing {self.ref}", timeout):
            await self.handle.focus()

    async def screenshot(self, *, timeout: float) -> bytes:
        async with _translated(f"Screenshot of {self.ref}", timeout):
            return await self.handle.screenshot(timeout=timeout * 1000, type="png")

    async def describe(self) -> str:
        """A short human label (tag, id, text) for replies and errors."""
        async with _translated(f"Reading {self.ref}"):
            return await self.handle.evaluate(
                "e => { const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').trim().slice(0, 40);"
                " return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (t ? ' \"' + t + '\"' : ''); }")

    async def dispose(self) -> None:
        try:
            await self.handle.dispose()
        except PWError:
            pass


class PlaywrightFrame:
    def __init__(self, frame: PWFrame, key: str, parent_key: str | None) -> None:
        self.frame = frame
        self.key = key
        self.parent_key = parent_key

    async def evaluate(self, script: str, arg: Any = None) -> Any:
        async with _translated(f"Reading frame {self.key or 'main'}"):
            return await self.frame.evaluate(script, arg)

    async def owner_marker(self, script: str) -> Any:
        try:
            owner = await self.frame.frame_element()
            try:
                return await owner.evaluate(script)
            finally:
                await owner.dispose()
        except PWError:
            return None


# ---------------------------------------------------------------------------------------------
# Tabs


class PlaywrightTab:
    def __init__(self, page: PWPage, index: int, events: TabEvents) -> None:
        self.page = page
        self.index = index
        self._events = events
        self._frame_keys: dict[PWFrame, str] = {}
        self._frames_seen = 0
        self.next_ref: dict[str, int] = {}  # per frame key; keeps counting across documents
        self._cdp: CDPSession | None = None
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)

    # events -----------------------------------------------------------------------------------
    def _on_console(self, message: Any) -> None:
        if self._events.console:
            location = message.location or {}
            where = f"{location.get('url', '')}:{location.get('lineNumber', 0) + 1}" if location.get("url") else ""
            self._events.console(ConsoleEntry(message.type, message.text, where, self.index))

    def _on_page_error(self, error: Any) -> None:
        if self._events.console:
            self._events.console(ConsoleEntry("pageerror", str(error), "", self.index))

    # basics -----------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.page.url

    @property
    def closed(self) -> bool:
        return self.page.is_closed()

    async def title(self) -> str:
        try:
            return await self.page.title()
        except PWError:
            return ""

    async def navigate(self, url: str, *, wait_until: WaitUntil = "load", timeout: float) -> NavigationResult:
        try:
            response = await self.page.goto(url, wait_until=wait_until, timeout=timeout * 1000)
        except PWError as error:
            raise _navigation_error(error, url, timeout) from None
        return NavigationResult(self.page.url, response.status if response else None, await self.title())

    async def wait_for_load(self, *, timeout: float) -> None:
        """Wait for a navigation an action started to load its document (returns at once if none)."""
        try:
            await self.page.wait_for_load_state("domcontentloaded", timeout=timeout * 1000)
        except PWError:
            pass  # a slow page still gets its reply; the reply says where the tab is

    async def screenshot(self, *, full_page: bool, timeout: float) -> bytes:
        async with _translated("Taking a screenshot", timeout):
            return await self.page.screenshot(full_page=full_page, type="png", timeout=timeout * 1000)

    async def set_viewport(self, width: int, height: int) -> None:
        async with _translated("Resizing the viewport"):
            await self.page.set_viewport_size({"width": width, "height": height})

    async def close(self) -> None:
        try:
            await self.page.close()
        except PWError:
            pass

    # frames and refs --------------------------------------------------------------------------
    def _key(self, frame: PWFrame) -> str:
        if frame == self.page.main_frame:
            return ""
        key = self._frame_keys.get(frame)
        if key is None:
            self._frames_seen += 1
            key = self._frame_keys[frame] = f"f{self._frames_seen}"
        return key

    async def frames(self) -> list[PlaywrightFrame]:
        """All live frames, parents before children, each with a key that never changes."""
        live = [f for f in self.page.frames if not f.is_detached()]
        for gone in [f for f in self._frame_keys if f not in live]:
            del self._frame_keys[gone]
        return [PlaywrightFrame(f, self._key(f), self._key(f.parent_frame) if f.parent_frame else None) for f in live]

    async def resolve(self, ref: str, *, timeout: float) -> PlaywrightElement:
        """The exact element a snapshot gave ``ref`` to, or ``RefNotFound``; never a look-alike."""
        match = _REF.match(ref.strip())
        if not match:
            raise RefNotFound(f"'{ref}' is not a ref.", "Refs look like e12 or f1e3; " + _SNAPSHOT_AGAIN)
        frame_key, local = match.group(1) or "", match.group(2)
        frame = self.page.main_frame if not frame_key else next(
            (f for f, k in self._frame_keys.items() if k == frame_key and not f.is_detached()), None)
        if frame is None:
            raise RefNotFound(f"Ref {ref} is stale: its frame is gone.", _SNAPSHOT_AGAIN)
        try:
            handle = await asyncio.wait_for(frame.evaluate_handle(
                "r => window.__webhand ? window.__webhand.resolve(r) : 'unknown'", local), timeout)
        except (PWError, asyncio.TimeoutError) as error:
            raise _translate(error, f"Finding {ref}", timeout) from None
        element = handle.as_element()
        if element is None:
            reason = await handle.json_value()
            if reason == "removed":
                raise RefNotFound(f"Ref {ref} is stale: its element was removed or replaced since the snapshot.", _SNAPSHOT_AGAIN)
            raise RefNotFound(f"Ref {ref} is not on the current page (the page navigated or the ref was never issued).",
                              _SNAPSHOT_AGAIN)
        return PlaywrightElement(element, ref)

    async def query(self, selector: str, *, timeout: float) -> PlaywrightElement:
        try:
            handle = await self.page.wait_for_selector(selector, state="attached", timeout=timeout * 1000)
        except PWTimeout:
            raise RefNotFound(f"No element matches the selector {selector!r}.",
                              "Call browser_snapshot and use a ref, or fix the selector.") from None
        except PWError as error:
            raise RefNotFound(f"The selector {selector!r} is not valid: {str(error).splitlines()[0]}",
                              "Use a CSS selector, or a ref from browser_snapshot.") from None
        assert handle is not None
        return PlaywrightElement(handle, selector)

    # JavaScript -------------------------------------------------------------------------------
    async def _session(self) -> CDPSession:
        if self._cdp is None:
            self._cdp = await self.page.context.new_cdp_session(self.page)
        return self._cdp

    async def evaluate(self, expression: str, *, await_promise: bool, timeout: float) -> Any:
        """Run the model's JavaScript the way a DevTools console would; return a JSON-able value."""
        session = await self._session()
        try:
            result = await asyncio.wait_for(session.send("Runtime.evaluate", {
                "expression": expression, "awaitPromise": await_promise, "replMode": True,
                "userGesture": True, "returnByValue": False, "timeout": int(timeout * 1000),
            }), timeout + 1)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"The JavaScript did not finish within {timeout:g} s.",
                                "Make it shorter, or pass a larger timeout.") from None
        except PWError as error:
            raise _translate(error, "Evaluating JavaScript", timeout) from None
        details = result.get("exceptionDetails")
        if details:
            description = (details.get("exception") or {}).get("description") or details.get("text", "Error")
            line, column = details.get("lineNumber", 0) + 1, details.get("columnNumber", 0) + 1
            raise EvaluationFailed(f"The JavaScript threw: {description.splitlines()[0]} (line {line}, column {column}).",
                                   "Fix the expression and call browser_eval again.")
        return await self._to_json(session, result["result"])

    async def _to_json(self, session: CDPSession, remote: dict[str, Any]) -> Any:
        if "unserializableValue" in remote:
            return remote["unserializableValue"]
        if remote.get("type") == "undefined":
            return None
        if "objectId" not in remote:
            return remote.get("value")
        try:
            out = await session.send("Runtime.callFunctionOn", {
                "objectId": remote["objectId"], "functionDeclaration": _SERIALIZE, "returnByValue": True})
            return out["result"].get("value")
        finally:
            await session.send("Runtime.releaseObject", {"objectId": remote["objectId"]})


# Makes any page value JSON-able: DOM nodes become a short tag, cycles and functions are named.
_SERIALIZE = """function () {
  const stack = new Set();
  const walk = (v, depth) => {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) {
      if (typeof v === 'bigint') return v.toString() + 'n';
      if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
      if (typeof v === 'symbol') return v.toString();
      return v === undefined ? null : v;
    }
    if (typeof v === 'function') return '[function ' + (v.name || 'anonymous') + ']';
    if (typeof Element !== 'undefined' && v instanceof Element)
      return '<' + v.tagName.toLowerCase() + (v.id ? '#' + v.id : '') + '> ' + (v.outerHTML || '').slice(0, 300);
    if (typeof Node !== 'undefined' && v instanceof Node) return '[' + v.nodeName + ']';
    if (stack.has(v)) return '[circular]';
    if (depth > 20) return '[too deep]';
    stack.add(v);
    try {
      if (Array.isArray(v) || (typeof NodeList !== 'undefined' && (v instanceof NodeList || v instanceof HTMLCollection)))
        return Array.from(v, x => walk(x, depth + 1));
      if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), walk(x, depth + 1)]));
      if (v instanceof Set) return [...v].map(x => walk(x, depth + 1));
      if (v instanceof Date) return v.toISOString();
      if (v instanceof Error) return v.name + ': ' + v.message;
      if (v instanceof RegExp) return String(v);
      const o = {};
      for (const k of Object.keys(v)) { try { o[k] = walk(v[k], depth + 1); } catch (e) { o[k] = '[unreadable]'; } }
      return o;
    } finally { stack.delete(v); }
  };
  return walk(this, 0);
}"""


# ---------------------------------------------------------------------------------------------
# Contexts, browsers, engine


class PlaywrightContext:
    def __init__(self, context: PWContext, events: TabEvents) -> None:
        self.context = context
        self.events = events
        self.tabs: list[PlaywrightTab] = []
        self._opened = 0
        context.on("page", self._adopt)

    def _adopt(self, page: PWPage) -> PlaywrightTab:
        """Every page of the context becomes a tab, including those the page opens itself."""
        for tab in self.tabs:
            if tab.page is page:
                return tab
        tab = PlaywrightTab(page, self._opened, self.events)
        self._opened += 1
        self.tabs.append(tab)
        page.on("close", lambda _: self.tabs.remove(tab) if tab in self.tabs else None)
        return tab

    async def new_tab(self) -> PlaywrightTab:
        async with _translated("Opening a tab"):
            page = await self.context.new_page()
        return self._adopt(page)

    async def close(self) -> None:
        try:
            await self.context.close()
        except PWError:
            pass


class PlaywrightBrowser:
    def __init__(self, browser: PWBrowser, chrome: ChromeProcess | None) -> None:
        self.browser = browser
        self.chrome = chrome
        self.pid = chrome.pid if chrome else None

    @property
    def alive(self) -> bool:
        return self.browser.is_connected() and (self.chrome is None or self.chrome.alive)

    async def new_context(self, *, width: int, height: int, downloads_dir: str | None,
                          events: TabEvents) -> PlaywrightContext:
        async with _translated("Creating a browser context"):
            context = await self.browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
        return PlaywrightContext(context, events)

    async def close(self) -> None:
        """Disconnect; and when webhand launched this browser, kill its process group."""
        try:
            await asyncio.wait_for(self.browser.close(), 5)
        except (PWError, asyncio.TimeoutError):
            pass
        if self.chrome:
            await self.chrome.close()

    def kill_now(self) -> None:
        if self.chrome:
            self.chrome.kill_now()


class PlaywrightEngine:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._playwright: Playwright | None = None
        self._manager: Any = None

    async def start(self) -> None:
        if self._playwright is None:
            self._manager = async_playwright()
            self._playwright = await self._manager.start()

    async def launch(self) -> PlaywrightBrowser:
        await self.start()
        assert self._playwright is not None
        settings = self.settings
        chrome = await ChromeProcess.launch(find_chromium(settings.executable_path), headless=settings.headless,
                                            width=settings.viewport.width, height=settings.viewport.height,
                                            extra_args=settings.extra_args, timeout=settings.launch_timeout)
        try:
            browser = await self._playwright.chromium.connect_over_cdp(chrome.ws_endpoint, timeout=settings.launch_timeout * 1000)
        except BaseException as error:  # cancellation too: never strand the browser we just started
            await asyncio.shield(chrome.close())
            if not isinstance(error, PWError):
                raise
            raise BrowserLaunchFailed(f"Chromium started but webhand could not attach to it: {str(error).splitlines()[0]}",
                                      "Run `webhand doctor` to see what is wrong.") from None
        return PlaywrightBrowser(browser, chrome)

    async def connect(self, cdp_url: str) -> PlaywrightBrowser:
        await self.start()
        assert self._playwright is not None
        try:
            browser = await self._playwright.chromium.connect_over_cdp(cdp_url, timeout=self.settings.launch_timeout * 1000)
        except PWError as error:
            raise BrowserLaunchFailed(f"Could not connect to the browser at {cdp_url}: {str(error).splitlines()[0]}",
                                      "Check that it runs with --remote-debugging-port and that the URL is right.") from None
        return PlaywrightBrowser(browser, None)

    async def stop(self) -> None:
        if self._manager is not None:
            try:
                await self._manager.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001 - the driver process may already be gone at exit
                pass
            self._manager = self._playwright = None
