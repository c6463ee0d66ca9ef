"""The Driver interface: the only view of a browser that sessions, tools and page code get.

Three drivers implement it: raw CDP (``engine/cdp/``, the default), Playwright (``engine/pw/``) and
Firefox over WebDriver BiDi (``engine/bidi/``). The CDP work the two Chromium drivers do the same
way is written once, on a ``CdpChannel`` (``engine/channel.py``); a new driver implements these
Protocols without touching a tool. Objects are layered the way a browser is:

    Driver ─► BrowserHandle (one browser)  ─► Context (one session's cookies, storage, tabs)
                                                └─► Tab (one page) ─► Frame ─► Element (one ref'd node)

Every method that can block takes a timeout in seconds and raises a ``webhand.errors`` type,
never a driver library's own exception.

Long because it is the whole seam in one place: every Protocol a driver implements and every
record that crosses it (a console entry, a cookie, a request), so that a newcomer adding a driver
reads one file, and no driver imports another's types.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from webhand.engine.launch.local_launch import Launcher

#: How long closing a context may wait for the browser's answer. Disposing a context takes well under
#: a second; a browser silent this long is frozen or gone, and the session's close goes on without
#: it (killing the process group when webhand launched the browser).
CLOSE_TIMEOUT_SECONDS = 10.0

WaitUntil = Literal["load", "domcontentloaded", "networkidle", "commit"]
MouseButton = Literal["left", "right", "middle"]


@dataclass
class ConsoleEntry:
    """One console call or uncaught page error, as the model sees it.

    Not frozen: the driver may learn where a message came from (an iframe) a moment after it
    recorded it, and then fills in ``source``.
    """

    level: str  # log, info, warning, error, debug, pageerror
    text: str
    location: str = ""
    tab: int = 0
    source: str = ""  # "" for the page itself; "sw", "worker" (dedicated or shared) or "frame"
    logged_at: float = field(default_factory=time.time)  # when the page logged it (seconds since the epoch)


@dataclass(frozen=True)
class NavigationResult:
    url: str
    status: int | None
    title: str
    download: bool = False  # the URL was a file: it was downloaded and the page did not change


@dataclass(frozen=True)
class FailedRequest:
    """A request an action caused that did not succeed: an HTTP error, a network error or a refusal."""

    method: str
    url: str
    reason: str  # "HTTP 404", "net::ERR_CONNECTION_REFUSED", "refused by blocked_origins rule '…'"
    document: bool = False  # a page's or frame's document, not a request the page made (a fetch, an image)


@dataclass(frozen=True)
class SettleCaps:
    """How long an action may wait for each kind of effect (seconds; the DOM window in ms)."""

    navigation: float
    requests: float
    dom_quiet_ms: int
    dom_cap: float
    # After a page load (browser_navigate): how long no request may start before the page counts
    # as ready. A client-rendered page fetches its content after "load"; 0 waits for none of that.
    load_quiet: float = 0.0
    # Typing: when the page's mutation count (settle.WATCH_DOM, started as the field is focused) saw
    # nothing change but the field, settled after one animation frame and at least this many ms
    # instead of ``dom_quiet_ms`` (0: always the full window).
    dom_unchanged_ms: int = 0
    # The action was a page load the driver already waited for ("load" fired): the settle starts
    # from there instead of with a DOM-quiet window (see settle.PageSettling.settle).
    page_load: bool = False
    # Seconds the work the action scheduled (short timers, animation frames, a WebSocket message's
    # answer: settle.WORK_HUB) is waited for, from the end of the action; 0 follows none.
    effects: float = 0.0


@dataclass(frozen=True)
class Settled:
    """What waiting for an action's effects found."""

    failed_requests: list[FailedRequest]
    unfinished_requests: list[str]  # "METHOD URL" of requests still loading when the request cap ran out
    navigation_unfinished: bool  # a navigation the action started had not loaded within its cap
    # Work the action scheduled in the page that had not run when the wait ended ("a 300 ms timer").
    pending_work: list[str] = field(default_factory=list)
    seconds: float = 0.0  # how long the wait lasted, from the end of the action
    # Longer timers the action set, not waited for and still to run ("a 900 ms timer").
    scheduled: list[str] = field(default_factory=list)
    # "METHOD URL" of the last request, when the requests the action set off kept coming until the
    # rounds ran out (a poll): the page never settled.
    repeating: str = ""
    # Links with a download attribute the action followed (their default not prevented): the
    # browser downloads without a navigation and tells of it only once the server answered.
    download_links: int = 0


WaitKind = Literal["text", "text_gone", "selector_visible", "selector_hidden", "url", "network_idle", "javascript", "time"]


@dataclass(frozen=True)
class WaitCondition:
    kind: WaitKind
    value: str | float = ""


class Settling(Protocol):
    """Started before an action; ``settle`` waits for what the action set off (may be called again)."""

    def begin(self) -> None:
        """Start following, in the page, the work the action is about to schedule (sent just before it acts)."""
        ...

    async def begun(self) -> None:
        """Return once the page runs what ``begin`` sent."""
        ...

    async def settle(self) -> Settled: ...


@dataclass(frozen=True)
class Cookie:
    name: str
    value: str
    domain: str
    path: str = "/"
    expires: float = -1  # Unix time in seconds; -1 for a session cookie
    http_only: bool = False
    secure: bool = False
    same_site: Literal["Strict", "Lax", "None"] = "Lax"


@dataclass
class Download:
    """A file the page downloaded; ``path``/``size`` are set once saved, ``error`` if it failed."""

    url: str
    name: str  # the file name the server or the link suggested
    tab: int
    path: str | None = None
    size: int | None = None
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.path is not None or self.error is not None


class Dialog(Protocol):
    """A JavaScript dialog (alert, confirm, prompt, beforeunload) waiting for an answer.

    While it waits, the page's JavaScript is blocked: nothing that evaluates in that tab returns.
    """

    kind: str  # alert, confirm, prompt, beforeunload
    message: str
    default_value: str
    tab: int

    async def accept(self, prompt_text: str | None, *, timeout: float) -> None: ...
    async def dismiss(self, *, timeout: float) -> None: ...


class FileChooser(Protocol):
    """A file picker the page opened (e.g. a click on <input type=file>), waiting for files."""

    tab: int
    multiple: bool

    async def set_files(self, paths: list[str], *, timeout: float) -> None: ...


@dataclass
class NetworkEntry:
    """One request the page made, once it finished or failed.

    Not frozen: where its answer came from (``source``) may be learnt a moment after it is logged.
    """

    method: str
    url: str
    status: int | None  # None when it failed before a response
    resource_type: str  # document, fetch, xhr, script, stylesheet, image, font …
    failure: str = ""
    tab: int = 0
    id: int = 0  # unique in the process: what browser_network_request takes
    source: str = "network"  # where the answer came from: one of REQUEST_SOURCES
    started: float = 0.0  # when it was sent, seconds since the epoch (0: not known)
    duration: float | None = None  # seconds from sending to the last byte, when known
    size: int | None = None  # bytes received over the wire (headers and body), when known
    mime_type: str = ""  # the response's type, when it has one


#: Where a response came from, as Chromium reports it (CDP Network.responseReceived).
REQUEST_SOURCES = ("network", "service worker", "memory cache", "disk cache", "prefetch")


@dataclass(frozen=True)
class RequestDetail:
    """One logged request in full: what browser_network_request shows."""

    entry: NetworkEntry
    request_headers: dict[str, str]
    request_body: bytes | None
    response_headers: dict[str, str]


@dataclass(frozen=True)
class NetworkConditions:
    """Network emulation for a whole session (every tab and its service workers)."""

    offline: bool = False
    latency_ms: float = 0  # added to every request
    download_kbps: float = 0  # kilobytes per second; 0 means no limit
    upload_kbps: float = 0


@dataclass
class RouteRule:
    """A route: requests matching ``pattern`` are blocked, answered with the given response, or
    changed (``continue``: URL, method, headers, body) and sent on."""

    pattern: str  # a glob URL pattern, e.g. **/api/user or https://example.com/*.png
    action: Literal["block", "fulfill", "continue"]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)  # fulfill: the answer's; continue: set on the request
    body: str = ""  # fulfill: the answer's
    hits: int = 0  # requests it answered (or changed)
    url: str | None = None  # continue: send the request here instead
    method: str | None = None  # continue: with this method instead
    post_data: str | None = None  # continue: with this body instead

    def rewritten_url(self, url: str) -> str:
        return self.url or url

    def request_headers(self, original: dict[str, str]) -> dict[str, str]:
        """The request's headers with this route's set over them (names compared without case)."""
        merged = {name: value for name, value in original.items() if name.lower() not in self.headers}
        return {**merged, **self.headers}


@dataclass(frozen=True)
class ServiceWorkerVersion:
    script_url: str
    state: str  # installing, waiting, activating, active, redundant
    running: str  # stopped, starting, running, stopping


@dataclass(frozen=True)
class ServiceWorkerRegistration:
    scope: str
    versions: list[ServiceWorkerVersion]
    controls_page: bool = False  # its active worker controls the tab asked about (navigator.serviceWorker.controller)


@dataclass(frozen=True)
class ScreencastFrame:
    jpeg: bytes
    timestamp: float  # when the browser painted it (Unix time, seconds)
    width: int  # CSS pixels of the viewport the frame shows
    height: int


class Screencast(Protocol):
    async def stop(self) -> None: ...


@dataclass(frozen=True)
class InputEvent:
    """One input event of a person in the dashboard. Coordinates are CSS pixels of the viewport.

    kind: mousePressed, mouseReleased, mouseMoved, mouseWheel, keyDown, keyUp, text; or click:
    ``click_count`` presses and releases of ``button`` at the point, counted 1, 2, 3 as a person's
    quick clicks are (a double click's second click fires ``dblclick``). One event, because a
    browser that counts clicks only within one input command (Firefox's BiDi) must get them at once.
    """

    kind: str
    x: float = 0
    y: float = 0
    button: MouseButton | Literal["none"] = "none"
    click_count: int = 0
    delta_x: float = 0
    delta_y: float = 0
    key: str = ""  # KeyboardEvent.key
    code: str = ""  # KeyboardEvent.code
    text: str = ""  # what a key types, or the text of a "text" event
    modifiers: int = 0  # Alt=1, Ctrl=2, Meta=4, Shift=8 (CDP's bit field)


@dataclass
class TabEvents:
    """Callbacks a Session installs on a Tab to hear what the page does between calls."""

    console: Callable[[ConsoleEntry], None] | None = None
    request: Callable[[NetworkEntry], None] | None = None
    # A dialog opened: it stays open until the session answers it (without a callback the
    # driver dismisses it, the way a headless browser would).
    dialog: Callable[[Dialog], None] | None = None
    file_chooser: Callable[[FileChooser], None] | None = None
    # A download began; the awaitable finishes when it is saved (or failed) and ``Download`` is filled in.
    download: Callable[[Download, Awaitable[None]], None] | None = None
    tab_opened: Callable[["Tab"], None] | None = None  # any new tab, the page's own included
    extra: dict[str, Callable[..., None]] = field(default_factory=dict)


class Element(Protocol):
    """Exactly one DOM node, named by the ref it was given in a snapshot."""

    ref: str

    async def click(self, *, button: MouseButton = "left", click_count: int = 1,
                    modifiers: list[str] | None = None, timeout: float) -> dict[str, str]:
        """Press on the element; its role and name, as the page agent gives them, when pressed. The
        element under the pointer is asked again once the pointer is there, just before the press
        (``pointer.AT_PRESS``): when the page put something else there, nothing is pressed."""
    async def fill(self, text: str, *, timeout: float) -> None: ...
    async def mask_text(self, masked: bool, *, timeout: float) -> None:
        """Draw the field's text as dots in every picture (a secret was typed into it), or no longer
        (``page_scripts.MASK_TEXT``)."""
    async def type(self, text: str, *, delay_ms: float, timeout: float) -> None: ...
    async def press(self, key: str, *, timeout: float) -> None: ...
    async def hover(self, *, timeout: float) -> None: ...
    async def focus(self, *, timeout: float) -> None: ...
    async def select_option(self, values: list[str], *, timeout: float) -> list[str]:
        """Select the options whose value or label is one of ``values``; returns their labels."""
        ...
    async def set_checked(self, checked: bool, *, timeout: float) -> None: ...
    async def scroll_into_view(self, *, timeout: float) -> None: ...
    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str: ...
    async def drag_to(self, target: "Element", *, timeout: float) -> None: ...
    async def kind(self) -> str:
        """What sort of field this is: select, checkbox, radio, text, or other."""
        ...
    async def field_text(self) -> dict[str, Any] | None:
        """What a text field holds now: ``{"text": …, "hidden": bool}`` (hidden: a password field),
        None for an element that holds no text (page_scripts.FIELD_TEXT)."""
        ...
    async def origin(self) -> str:
        """The origin (``scheme://host[:port]``) of the document holding the element, as the
        browser knows it; "null" when it is opaque (data: URLs, sandboxed frames)."""
        ...
    async def set_input_files(self, paths: list[str], *, timeout: float) -> None:
        """Give files to this ``<input type=file>`` directly (no file chooser; a hidden input too)."""
        ...
    async def screenshot(self, *, timeout: float) -> bytes: ...
    async def describe(self) -> str: ...
    async def dispose(self) -> None: ...


class Frame(Protocol):
    """One frame of a tab. ``key`` is "" for the main frame and "f<N>" for the others."""

    key: str
    parent_key: str | None

    async def evaluate(self, script: str, arg: Any = None) -> Any: ...
    async def owner_marker(self, script: str) -> Any:
        """Evaluate ``script`` (a function of the iframe element) in the parent frame."""
        ...


# The components of a Tab ---------------------------------------------------------------------------
# Parts of a tab reached as its typed attributes. The things only a few callers use (the hang test,
# the dashboard's live view, service workers, Chromium's counters, the model's JavaScript) are
# components, and so are the groups of members that belong together (the keyboard, the rendered
# page, refs, history), as Playwright's Page has ``page.keyboard``: each a small Protocol here that
# every driver (raw CDP, Playwright, Firefox over WebDriver BiDi) implements with a class of its own
# (or one the Chromium drivers share), given what it needs when the tab is made:
#
#     tab.liveness         crash, hang test, stopping a navigation, ending the page (session/recovery.py)
#     tab.live_view        thumbnail, screencast and a person's input (surfaces/dashboard/, tools/vision.py)
#     tab.service_workers  the session's registrations and what can be done to them (browser_service_workers)
#     tab.performance      Chromium's performance counters (browser_performance)
#     tab.console          the model's JavaScript, run as a DevTools console would (browser_eval)
#     tab.keyboard         keys on whatever has focus (browser_press_key, browser_type without a ref)
#     tab.capture          the page as a picture or a document: screenshot and PDF (browser_screenshot, browser_pdf)
#     tab.refs             the tab's frames, and its elements found by ref or CSS selector across them
#     tab.history          back, forward and reload (browser_back, browser_forward, browser_reload)
#     tab.isolated         webhand's own scripts in an isolated world (browser_audit_accessibility)
#
# Keeping them off the Tab keeps the Tab Protocol to what most callers need (navigation, the page's
# basics, settling), and each driver's component is called directly, not forwarded by its tab.


class Liveness(Protocol):
    """Whether the tab's page still lives, and the ways to test, stop and end it."""

    @property
    def crashed(self) -> bool:
        """The page's renderer crashed or was killed: nothing on this tab will work again."""
        ...

    async def ping(self) -> str | None:
        """Return None once the page's renderer answers a trivial request; never returns while its
        main thread is stuck (e.g. in ``while (true) {}``): the caller caps it, and that is the hang
        test. While the main frame waits for a server's response, the browser holds every message
        to the page, so silence proves nothing: then it returns that navigation's URL at once."""
        ...

    async def stop_loading(self) -> None:
        """Stop the tab's navigation, as the browser's Stop button does (works while it waits for a server)."""
        ...

    async def end(self) -> None:
        """Close the tab from the browser side, without asking the page: works on a hung or crashed
        page, and the browser ends a renderer that no tab uses any more."""
        ...


class LiveView(Protocol):
    """The dashboard's view of the tab (surfaces/dashboard/): what a person watching sees, and how they act."""

    async def thumbnail(self, *, width: int, timeout: float) -> bytes:
        """A small JPEG of the viewport, ``width`` pixels wide."""
        ...

    async def start_screencast(self, on_frame: Callable[[ScreencastFrame], None], *, max_width: int,
                               max_height: int, quality: int) -> Screencast:
        """Stream the viewport as JPEG frames; the browser sends one when the page paints."""
        ...

    async def dispatch_input(self, event: InputEvent, *, timeout: float) -> None:
        """Send one mouse or keyboard event to the page at a viewport point, as the browser's own
        input would: a person's in the dashboard, or a coordinate action's (tools/vision.py)."""
        ...


class ServiceWorkers(Protocol):
    """The service worker registrations of the tab's session (browser_service_workers)."""

    #: What ``registrations`` lists when it is less than the session's registrations (said in the
    #: reply), or None: the browser's registry, all of them.
    reach: str | None

    async def registrations(self) -> list[ServiceWorkerRegistration]:
        """The service worker registrations the browser knows for this session."""
        ...

    async def act(self, action: Literal["unregister", "update", "skip_waiting"], scope: str, *, timeout: float) -> None:
        """Unregister, update or skip waiting the registration of ``scope``; returns once the browser
        reports the change (capped by ``timeout``)."""
        ...


class Performance(Protocol):
    """Chromium's own counters for the page (CDP Performance.getMetrics; browser_performance)."""

    async def read(self, *, timeout: float) -> dict[str, float]: ...


class JavaScriptConsole(Protocol):
    """The tab's console: the model's JavaScript (browser_eval)."""

    async def evaluate(self, expression: str, *, await_promise: bool, timeout: float) -> Any:
        """Run ``expression`` the way a DevTools console would; return a JSON-able value."""
        ...


class Keyboard(Protocol):
    """The tab's keyboard: keys sent to whatever has focus, not to an element (as Playwright's
    ``page.keyboard``). One component, because pressing and typing share the driver's key events
    and nothing else of the tab; an element's own ``press`` and ``type`` focus it first."""

    async def press(self, key: str, *, timeout: float) -> None:
        """Press a key (or chord like Control+A) on whatever has focus."""
        ...

    async def type_text(self, text: str, *, timeout: float) -> None:
        """Type ``text`` key by key into whatever has focus (the keyboard, not an element)."""
        ...


class Capture(Protocol):
    """The page rendered for keeping: a PNG screenshot, a PDF print. One component, because both
    ask the browser to render the page (not to act on it) and need only the page's connection; the
    dashboard's small live pictures are ``LiveView``'s."""

    async def screenshot(self, *, full_page: bool, timeout: float) -> bytes: ...
    async def pdf(self, *, timeout: float) -> bytes: ...


class Refs(Protocol):
    """Finding the tab's elements: by the ref a snapshot gave one (``e12``, ``f1e3`` in frame f1), or
    by a CSS selector, across the tab's frames. One component, because a ref names its frame, so
    every driver finds elements in its frame tree (frames.py in each driver folder): this is that
    tree's side callers use (the snapshot walks ``frames``; actions ``resolve`` their refs)."""

    async def frames(self) -> list[Frame]: ...
    async def resolve(self, ref: str, *, timeout: float) -> Element:
        """The exact element a snapshot gave ``ref`` to, or ``RefNotFound``; never a look-alike."""
        ...
    async def stable_selector(self, ref: str, *, timeout: float) -> str:
        """A CSS selector that finds ``ref``'s element again on a fresh load of its page (an id, a
        unique attribute, else a path of :nth-of-type steps); "" when there is none or the ref is
        gone. One page round trip: the history records it before every call that names a ref."""
        ...
    async def query(self, selector: str, *, timeout: float) -> Element: ...


@dataclass(frozen=True)
class WorldScript:
    """A library of webhand's own run where the page cannot see or change it (axe-core for
    browser_audit_accessibility): ``source`` is installed once per document in the isolated world
    ``world``; ``loaded`` is an expression there that is true once it is."""

    world: str
    source: str
    loaded: str


class IsolatedWorld(Protocol):
    """Running webhand's own scripts in an isolated world of the main frame (CDP's
    ``Page.createIsolatedWorld``, a WebDriver BiDi sandbox): the page's scripts cannot see its
    globals or replace the built-ins it calls. Elements cross to the page agent by reference."""

    async def run(self, script: WorldScript, function: str, arg: Any, *, ref: str | None,
                  timeout: float) -> tuple[str, list[str | None]]:
        """Install ``script`` unless the document has it, then call ``function(arg, element)`` in
        its world (``element``: what the main frame's ``ref`` names, else null). The function
        returns ``{value: string, elements: Element[]}``; this gives the value and each element's
        ref from the page agent (None: the element has none)."""
        ...


class History(Protocol):
    """The tab's session history: back, forward, reload. One component, because the three move the
    tab by its history list (not to a URL the model gave, which is ``Tab.navigate``), and each
    waits the same way for the entry's document: a page restored from the back/forward cache
    fires no new "load"."""

    async def go_back(self, *, timeout: float) -> NavigationResult | None:
        """None when there is no entry that way."""
        ...
    async def go_forward(self, *, timeout: float) -> NavigationResult | None: ...
    async def reload(self, *, timeout: float) -> NavigationResult: ...


@dataclass(frozen=True)
class PageTool:
    """One tool a page offers agents (WebMCP): a script's ``registerTool`` or a form's ``toolname``.
    Every field but ``form`` and ``frame`` is the page's own text: data, never reply structure."""

    name: str
    description: str
    input_schema: dict[str, Any] | None  # None: the page gave none (the tool takes no arguments)
    frame: str  # the frame that registered it (the driver's id)
    form: bool = False  # a declarative form (``<form toolname=…>``), not a script's tool
    autosubmit: bool = False  # a form that submits itself once filled (``toolautosubmit``)
    read_only: bool = False  # the page's own hint (annotations.readOnlyHint): not a guarantee
    schema_too_large: bool = False  # its schema was past the size webhand keeps: not callable
    node: int = 0  # a form's node (the driver's id for it); 0 for a script's tool


@dataclass(frozen=True)
class PageToolAnswer:
    """What a page tool answered: ``completed`` with ``output`` (any JSON value the page returned),
    ``error`` with ``error`` (what the page threw), ``canceled``, or ``navigated`` (its frame loaded a
    new document first: a submitted form's usual end)."""

    status: Literal["completed", "error", "canceled", "navigated"]
    output: Any = None
    error: str = ""


class PageTools(Protocol):
    """The tools the page itself offers (WebMCP), kept current from the browser's events. One
    component, because listing and calling share the browser's registry of the page's tools."""

    async def listing(self, *, timeout: float, quiet: bool = False) -> tuple[list[PageTool], int]:
        """The page's tools now, and how many more it registered past webhand's cap. Raises a
        ``WebhandError`` saying why when the browser offers none (Firefox, a Chromium without the
        feature); an empty list when the page registered none. ``quiet``: an empty list then too,
        without asking the page whether it has the feature (a reply's one line)."""
        ...

    async def call(self, tool: PageTool, arguments: dict[str, Any], *, timeout: float) -> PageToolAnswer:
        """Run ``tool`` with ``arguments``; a form is filled and submitted. ``ActionTimeout`` naming
        the tool when it has not answered within ``timeout`` (the call is then cancelled)."""
        ...


class Tab(Protocol):
    """One page. What only a few callers use is a component, a typed attribute (the Protocols above)."""

    liveness: Liveness
    live_view: LiveView
    service_workers: ServiceWorkers
    performance: Performance
    console: JavaScriptConsole
    keyboard: Keyboard
    capture: Capture
    refs: Refs
    history: History
    isolated: IsolatedWorld
    page_tools: PageTools
    index: int
    next_ref: dict[str, int]  # per frame key: the next ref number, kept across documents

    @property
    def url(self) -> str: ...
    async def title(self) -> str: ...
    async def navigate(self, url: str, *, wait_until: WaitUntil, timeout: float, title: bool = True) -> NavigationResult:
        """Open ``url``; with ``title=False`` the result's title is left empty (a caller that reads it
        after waiting longer saves the round trip)."""
        ...
    async def wait_for_load(self, *, timeout: float) -> None: ...
    async def warm_up(self) -> None:
        """Prepare what the first call on this tab would otherwise pay for (a reserve tab)."""
        ...
    async def set_viewport(self, width: int, height: int, device_scale: float = 1.0) -> None:
        """Size the viewport in CSS pixels; ``device_scale`` device pixels per CSS pixel (a
        high-density screen: 2 or 3), which screenshots are taken in."""
        ...
    async def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    async def bring_to_front(self) -> None: ...
    async def web_storage(self, area: Literal["local", "session"], operation: Literal["get", "set", "delete", "clear"],
                          key: str | None = None, value: str | None = None, *, timeout: float) -> dict[str, str]:
        """Read or change localStorage/sessionStorage of the page's origin; returns the items after."""
        ...
    async def scroll_by(self, x: float, y: float, *, timeout: float) -> str: ...
    def settling(self, caps: SettleCaps) -> Settling:
        """Start recording what an action sets off: navigations, requests, DOM changes."""
        ...
    async def wait_for(self, condition: WaitCondition, *, timeout: float) -> str:
        """Wait until ``condition`` holds; returns a short description; ``ActionTimeout`` if it never does."""
        ...


class Context(Protocol):
    """One session's browsing state: cookies, storage, tabs."""

    tabs: list[Tab]
    #: Where downloads are saved; None refuses them. Set when the context is handed to a
    #: conversation, since a context is made ahead of need (the warm reserve).
    downloads_dir: Path | None

    async def new_tab(self) -> Tab: ...
    async def close(self) -> None: ...
    async def cookies(self) -> list[Cookie]: ...
    async def set_cookie(self, cookie: Cookie) -> None: ...
    async def delete_cookies(self, *, name: str | None = None, domain: str | None = None, path: str | None = None) -> None: ...
    async def storage_state(self) -> dict[str, Any]:
        """Cookies and localStorage of every origin, as Playwright's storage-state JSON."""
        ...
    async def set_storage_state(self, state: dict[str, Any], *, timeout: float) -> None:
        """Replace cookies and localStorage with a saved storage state."""
        ...
    def expecting_download(self) -> bool:
        """A response announced a download whose download event has not arrived yet."""
        ...
    def expecting_tab(self) -> bool:
        """A page asked for a new window whose tab does not exist yet."""
        ...
    # debugging: requests in full, network emulation, mocks ------------------------------------
    network_conditions: NetworkConditions
    routes: list[RouteRule]

    async def request_detail(self, request_id: int, *, timeout: float) -> RequestDetail:
        """Headers and body of a logged request; ``InvalidArgument`` when it is no longer known."""
        ...
    async def response_body(self, request_id: int, *, timeout: float) -> bytes:
        """The response body of a logged request, fetched now from the browser."""
        ...
    async def set_network_conditions(self, conditions: NetworkConditions) -> None: ...
    async def add_route(self, rule: RouteRule) -> None:
        """Install (or replace, for the same pattern) a route. It never lets a request past the
        origin policy: a request the policy refuses is still refused, and so is a request a
        ``continue`` route sends to a refused URL (refused now when its URL is, ``PolicyRefused``)."""
        ...
    async def remove_routes(self, pattern: str | None) -> list[RouteRule]:
        """Remove the route of ``pattern`` (all when None); returns those removed."""
        ...


@dataclass
class BrowserExtension:
    """An unpacked extension loaded into a browser webhand launched (``extensions = [...]``)."""

    name: str
    version: str
    id: str
    path: str
    enabled: bool


class BrowserHandle(Protocol):
    """One browser (a Chromium or a Firefox) as a driver holds it (not the public ``webhand.api.Browser``)."""

    pid: int | None  # None when webhand did not launch it (connected over CDP): never killed then

    @property
    def alive(self) -> bool: ...
    async def new_context(self, *, width: int, height: int, downloads_dir: str | None,
                          events: TabEvents) -> Context: ...
    async def existing_context(self, *, events: TabEvents, width: int = 1280, height: int = 720) -> Context:
        """The browser's own default context with its tabs and cookies (a browser webhand attached to,
        or launched on a kept profile); ``width`` and ``height`` size the tabs webhand opens in it."""
        ...
    async def ping(self, timeout: float) -> bool:
        """Whether the browser answers a round trip within ``timeout`` (a pool's health check)."""
        ...
    def on_disconnected(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the connection to the browser drops."""
        ...
    async def wait_disconnected(self, timeout: float) -> bool:
        """Whether the connection drops within ``timeout``."""
        ...
    async def extensions(self, timeout: float) -> list[BrowserExtension]:
        """The unpacked extensions the browser runs (``Extensions.getExtensions``)."""
        ...
    async def close(self) -> None: ...
    async def abandon(self) -> None:
        """Drop the connection to a browser that stopped answering or went away, asking it nothing
        (no context is closed in it first): returns within a short cap whatever the socket does."""
        ...
    def kill_now(self) -> None: ...


class Driver(Protocol):
    #: Whether tabs ask the browser where each response came from (cache, service worker, prefetch).
    #: It costs a stream of CDP events per request, so it is on only when the network tools are served.
    response_sources: bool
    #: The browsers it launches on this machine, and its cold start (a browser started ahead of
    #: need, or adopted from before the driver existed): ``engine/launch/local_launch.py``.
    launcher: Launcher

    async def start(self) -> None: ...
    async def launch(self, *, profile_dir: str | None = None) -> BrowserHandle:
        """A browser launched here: with a fresh temporary user-data dir, or on ``profile_dir`` (a
        named profile's folder, kept on close; its session drives the browser's default context,
        ``existing_context``)."""
        ...
    async def connect(self, url: str, *, kind: str = "cdp", headers: dict[str, str] | None = None,
                      timeout: float | None = None) -> BrowserHandle: ...
    async def stop(self) -> None: ...
    def kill_now(self) -> list[int]:
        """SIGKILL, by pid, every browser this engine launched that nobody closed (and a driver
        process): shutdown's last resort. Returns the pids."""
