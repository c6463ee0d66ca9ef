"""Settings: defaults < config file (TOML) < environment ``WEBHAND_*`` < flags.

This module owns the one ``Settings`` model every other module reads. Loading from a TOML
file and per-agent profiles build on :func:`Settings.from_sources`.

Long because ``Settings`` is one pydantic model: every key with its description (the README's
settings table and ``webhand doctor`` read them) and the validators that refuse a combination no
driver can honour, next to the keys they judge.

Private module: import its public names from ``webhand`` (``webhand.__all__``); the module's path may
change in any release.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from webhand.durations import to_seconds
from webhand.errors import ConfigError, WebhandError
from webhand.security.locations import CONFIG_FILE_NAME, check_profile_name, default_output_dir, find_config_file, user_config_dir  # noqa: F401 - re-exported
from webhand.security.origins import OriginRule

log = logging.getLogger("webhand")


def _default_output_dir() -> Path:
    # Never a fixed name in the shared temporary folder: another user could create it first.
    return Path(os.environ.get("WEBHAND_OUTPUT_DIR") or default_output_dir())


def _valid_profile_name(name: Any) -> None:
    try:
        check_profile_name(name)
    except WebhandError as error:
        raise ValueError(f"{error.message} {error.hint.rstrip('.')}") from None


class Viewport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    width: int = Field(1280, gt=0, le=16384)
    height: int = Field(720, gt=0, le=16384)


class EndpointSettings(BaseModel):
    """One place sessions can run: local launches, a Playwright browser server, or a CDP browser."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(None, description="How logs, replies and `doctor` call it (default: kind and host).")
    kind: Literal["local", "playwright", "cdp", "extension"] = "local"
    url: str | None = Field(None, description="playwright: ws:// or wss://; cdp: http(s):// or ws(s)://; local and "
                            "extension: none.")
    headers: dict[str, str] = Field(default_factory=dict, description="Sent when connecting (e.g. Authorization); "
                                    "a value ${NAME} is read from the environment variable NAME when connecting.")
    capacity: int = Field(5, ge=1, le=1000, description="Most sessions placed on it at once.")
    labels: list[str] = Field(default_factory=list, description="Sessions asking for labels (pool_labels) go only "
                              "to endpoints carrying all of them.")
    timeout: float = Field(30.0, gt=0, le=600, description="Seconds one connection attempt may take.")
    retries: int = Field(2, ge=0, le=20, description="More attempts after a failed connection.")
    retry_delay: float = Field(1.0, ge=0, le=60, description="Seconds between attempts.")
    attach_to_existing_context: bool = Field(False, description="cdp only: drive the browser's own default context "
                                             "(its open tabs, cookies and logins); the endpoint then holds one session.")

    @field_validator("timeout", "retry_delay", mode="before")
    @classmethod
    def _durations(cls, value: Any) -> Any:
        return to_seconds(value)  # "30s", "500ms" as well as 30 and 0.5

    @model_validator(mode="after")
    def _url_fits_kind(self) -> "EndpointSettings":
        schemes = {"playwright": ("ws://", "wss://"), "cdp": ("http://", "https://", "ws://", "wss://")}.get(self.kind)
        if schemes is None:
            if self.url:
                raise ValueError(f"a {self.kind} endpoint takes no url" + (
                    " (it launches Chromium here)" if self.kind == "local" else
                    " (the extension connects to webhand's relay on 127.0.0.1:extension_port)"))
        elif not self.url or not self.url.lower().startswith(schemes):
            raise ValueError(f"a {self.kind} endpoint needs a url starting with {' or '.join(schemes)}")
        if self.attach_to_existing_context and self.kind not in ("cdp", "extension"):
            raise ValueError("attach_to_existing_context needs kind = \"cdp\" (a browser started with "
                             "--remote-debugging-port)")
        if self.kind == "extension":
            self.attach_to_existing_context = True  # the shared tabs are the person's own
        if self.attach_to_existing_context:
            self.capacity = 1  # one session drives the user's own tabs; two would fight over them
        return self

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        if self.url is None:
            return self.kind
        from urllib.parse import urlsplit

        return f"{self.kind} {urlsplit(self.url).netloc.rpartition('@')[2]}"  # never the user:password part


class PoolSettings(BaseModel):
    """Several endpoints; new sessions go to the least-loaded one with room (engine/pool.py)."""

    model_config = ConfigDict(extra="forbid")
    endpoints: list[EndpointSettings] = Field(min_length=1)
    queue_size: int = Field(20, ge=0, le=10_000, description="Sessions that may wait for a place when all are full.")
    # The wait is part of the first call, whose own timeout (15 s by default) still holds.
    queue_timeout: float = Field(10.0, ge=0, le=600, description="Seconds a new session waits for a place (within "
                                 "its first call's timeout).")
    health_interval: float = Field(5.0, gt=0, le=600, description="Seconds between health checks of the endpoints.")

    @field_validator("queue_timeout", "health_interval", mode="before")
    @classmethod
    def _durations(cls, value: Any) -> Any:
        return to_seconds(value)


class Settings(BaseModel):
    """Everything a webhand process can be told. Field names are the config keys."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # Browser
    browser: Literal["chromium", "firefox"] | None = Field(None, description="Deprecated: `driver` names the browser "
                                                           "too. Still read: \"firefox\" is driver = \"firefox\".")
    firefox_path: str | None = Field(None, description="Firefox binary to launch when browser = \"firefox\" "
                                     "(default: firefox-esr or firefox on PATH).")
    executable_path: str | None = Field(None, description="Chromium/Chrome binary to launch (then chromium_flavor "
                                        "does not apply).")
    chromium_flavor: Literal["auto", "full", "headless-shell"] = Field(
        "auto", description="Which Chromium build a headless launch runs: \"auto\" takes the headless shell "
        "(Debian's chromium-headless-shell, about 40% of the CPU a conversation costs on the full browser) when it is installed, and the full browser "
        "when it is not or when headless = false, extensions, stealth or allow_internal_pages need it; \"full\" always the full browser; "
        "\"headless-shell\" always the shell.")
    cdp_url: str | None = Field(None, description="Connect to this browser (http://host:port or ws://...) instead of launching one.")
    headless: bool = True
    extra_args: list[str] = Field(default_factory=list, description="More Chromium command-line flags.")
    viewport: Viewport = Field(default_factory=Viewport)
    driver: Literal["cdp", "playwright", "firefox"] = Field(
        "cdp", description="Which driver webhand runs its browser with: `cdp`, Chromium straight over the DevTools "
        "protocol (the default: no Node process); `playwright`, Chromium through Playwright; `firefox`, a stock "
        "Firefox over WebDriver BiDi (what it lacks: README, Firefox). Unset, Playwright is picked when the settings "
        "use what only it does (playwright_url, a playwright pool endpoint, attach_to_existing_context).")
    # Sessions
    isolation: Literal["process", "context"] = "process"
    warm_reserve: bool = Field(True, description="In process isolation, keep one browser launched ahead of need.")
    max_sessions: int = Field(5, ge=1, le=1000)
    max_tabs: int = Field(20, ge=1, le=1000, description="Most open tabs per session, popups included: browser_tabs "
                          "open is refused past it, and tabs a page opens past it are closed (the reply says which).")
    idle_timeout: float = Field(1800.0, gt=0, description="Seconds a session may be idle before it is closed.")
    idle_check_interval: float = Field(60.0, gt=0)
    abandoned_after: float = Field(60.0, gt=0, description="HTTP MCP server: a session with no open stream and no "
                                   "request for this many seconds counts as abandoned; when the server is full, the "
                                   "longest-idle abandoned session is closed to admit a new client.")
    queue_timeout: float = Field(30.0, ge=0, le=600, description="HTTP MCP server: seconds a new client waits for a "
                                 "place when max_sessions are in use (one frees when a session ends, is abandoned, or "
                                 "its client's connection closes) before it is refused.")
    profile: str | None = Field(None, description="Run the default session of each conversation on this named profile: "
                                "a Chromium user-data dir webhand keeps (XDG_DATA_HOME/webhand/profiles/NAME), so its "
                                "sign-ins, cookies and storage survive sessions, servers and reboots. One session at a "
                                "time may use a profile. Needs a browser webhand launches here (no cdp_url, "
                                "playwright_url or pool).")
    allowed_profiles: list[str] = Field(default_factory=list, description="More named profiles the model may open "
                                        "(browser_session_create profile=NAME), besides `profile`; it can open no other. "
                                        "The model never makes, deletes or signs in a profile: you do, with `webhand "
                                        "profile login NAME` (an allowed profile must exist first).")
    storage_state: Path | None = Field(None, description="A storage-state JSON file (cookies and localStorage, as "
                                       "browser_storage_state saves it) loaded into every new session without a "
                                       "profile before its first page: start signed in.")
    save_storage_state: bool = Field(False, description="With storage_state: write each such session's cookies and "
                                     "localStorage back to that file when it closes (atomically, mode 0600).")
    create_named_sessions_implicitly: bool = Field(False, description="A page tool given a `session` name that is not open starts it, instead of refusing (a typo would start a fresh browser).")
    # Time
    timeout: float = Field(15.0, gt=0, le=600, description="Default timeout of one operation, in seconds.")
    action_timeout: float = Field(5.0, gt=0, le=600, description="How long an action waits for its element to be actionable.")
    launch_timeout: float = Field(30.0, gt=0, le=600)
    # Output
    # Each conversation writes into its own unguessable subfolder of these (conversation_files.py).
    output_dir: Path = Field(default_factory=_default_output_dir, description="Where conversations' files go, one private subfolder each.")
    screenshot_dir: Path | None = Field(None, description="Screenshots here instead (still one subfolder per conversation).")
    download_dir: Path | None = Field(None, description="Downloads here instead (still one subfolder per conversation).")
    large_output_bytes: int = Field(1024, ge=128, description="Eval results and logs larger than this go to a file.")
    snapshot_max_chars: int = Field(40_000, ge=1000, description="Snapshots larger than this go to a file.")
    # After an action, "diff" replies with the snapshot lines that changed (added, removed, changed,
    # with their refs): the model sees its action's effect for the tokens of what changed, where
    # "full" re-sends the whole page every step and "none" costs an extra browser_snapshot call.
    snapshot_diff: Literal["diff", "full", "none"] = Field("diff", description="What an action's reply says about the page: changed snapshot lines, the whole snapshot, or nothing.")
    # A mode a browser_snapshot call asks for applies to that call only; this one lasts.
    snapshot_mode: Literal["page", "interactive", "full"] = Field("page", description="The snapshot every reply gives unless a browser_snapshot call asks for another: page (text and controls), interactive (controls and headings; each reply says text was left out) or full.")
    text_max_chars: int = Field(20_000, ge=500, description="browser_text replies longer than this are cut, with a notice.")
    console_buffer: int = Field(1000, ge=10, le=100_000)
    # Security
    enabled: bool = Field(True, description="false: this agent has no browser; no tool is served in any style, "
                                            "whatever the capability flags say.")
    evaluate_enabled: bool = True
    capabilities: list[str] = Field(default_factory=lambda: ["core"])
    roots: list[Path] = Field(default_factory=list, description="Folders every conversation's file tools may also read and write (uploads, read_image, storage states); by default only the conversation's own output folder.")
    allowed_origins: list[str] = Field(default_factory=list, description="Only these origins may load or be connected to (navigations, redirects, subresources, new tabs, workers, WebSockets); empty allows all. E.g. https://example.com, *.example.com, 127.0.0.1:8000.")
    blocked_origins: list[str] = Field(default_factory=list, description="These origins may never load; wins over allowed_origins.")
    allow_file_urls: bool = Field(False, description="Let the browser open file:// URLs.")
    allow_internal_pages: bool = Field(False, description="Let the agent open the browser's own pages (chrome://, chrome-untrusted://, devtools://, chrome-extension:// ...). Off because some end the browser, which conversations may share.")
    secrets_file: Path | None = Field(None, description="File of NAME=value lines; the model types <secret>NAME</secret> and never sees the value.")
    # Waiting for an action's effects (by events, each capped)
    navigation_settle_cap: float = Field(10.0, gt=0, le=600, description="Seconds an action waits for a navigation it started to load.")
    request_settle_cap: float = Field(3.0, ge=0, le=600, description="Seconds an action waits for requests it started to finish.")
    dom_quiet_ms: int = Field(25, ge=0, le=5000, description="The DOM counts as settled after this many ms without mutations.")
    dom_quiet_cap: float = Field(0.5, ge=0, le=60, description="Seconds an action waits at most for the DOM to go quiet.")
    dom_unchanged_ms: int = Field(10, ge=0, le=5000, description="browser_type: when typing changed nothing in the DOM but the field, the page counts as settled after its next animation frame and at least this many ms instead of dom_quiet_ms; 0 always waits dom_quiet_ms.")
    effects_settle_cap: float = Field(1.0, ge=0, le=60, description="Seconds an action waits at most for work it scheduled in the page (timers of up to 500 ms, animation frames, the answer to a WebSocket message it sent) and what that work changes; 0 waits for none of it.")
    load_quiet_ms: int = Field(150, ge=0, le=10_000, description="After browser_navigate loads a page, it is ready once it went idle, or this many ms passed, with no request started (requests it starts are waited for, up to request_settle_cap); 0 skips this.")
    # Looking less like a bot (engine/stealth.py): a UA without "Headless", navigator.webdriver false ...
    stealth: bool = Field(False, description="Hide the usual signs of an automated headless browser (playwright-stealth's evasions, no AutomationControlled). See docs/design.md for what it does not hide.")
    # The tools a page offers agents (WebMCP, engine/page_tools.py; tools/page_tools.py)
    page_tools: bool = Field(True, description="Start Chromium with its WebMCP feature (--enable-features=WebMCP), so that the tools a page declares for agents (document.modelContext.registerTool, <form toolname>) are listed and can be called (browser_page_tools, browser_call_page_tool). Firefox has no WebMCP.")
    # Images sent to the model (images/fitting.py); the defaults are what vision models take without resizing.
    image_max_side: int = Field(1568, ge=64, le=16384, description="Images for the model are downscaled to at most this many pixels a side.")
    image_max_pixels: int = Field(1_150_000, ge=4096, le=100_000_000, description="... and to at most this many pixels in all.")
    # web_fetch (tools/fetch.py): plain HTTP, no browser.
    fetch_max_bytes: int = Field(5 * 1024 * 1024, ge=1024, le=100 * 1024 * 1024, description="web_fetch reads at most this many bytes of a body.")
    # Session history and the dashboard (session/history.py, surfaces/dashboard/)
    history_keep: int = Field(200, ge=1, le=100_000, description="Tool calls each session keeps in memory; older ones go to history/<session>.jsonl in the conversation's folder.")
    dashboard_max_fps: float = Field(5.0, gt=0, le=30, description="Most frames per second the dashboard's live view sends.")
    # Remote browsers and the pool (engine/pool.py)
    playwright_url: str | None = Field(None, description="Use the Playwright browser server at this ws:// or wss:// URL instead of launching (each session a context in it).")
    remote_headers: dict[str, str] = Field(default_factory=dict, description="Headers sent when connecting to cdp_url or playwright_url (e.g. Authorization); a value ${NAME} is read from the environment variable NAME.")
    attach_to_existing_context: bool = Field(False, description="With cdp_url: drive that browser's own default context (its open tabs, cookies and logins) instead of a fresh one.")
    pool: PoolSettings | None = Field(None, description="Endpoints to place sessions on ([[pool.endpoints]]); without it webhand launches Chromium here.")
    pool_labels: list[str] = Field(default_factory=list, description="This webhand's sessions go only to pool endpoints carrying all these labels.")
    # The Chrome the person runs, through webhand's extension (engine/cdp/relay.py)
    extension_bridge: bool = Field(False, description="Drive the tabs a person shares from the Chrome they run, through webhand's browser extension (`webhand extension path`), instead of launching a browser. Raw CDP driver only.")
    extension_port: int = Field(47311, ge=1, le=65535, description="The port on 127.0.0.1 where webhand's relay waits for the extension (the same as in the extension's popup).")
    # Extensions loaded into the browsers webhand launches (engine/launch/chrome.py)
    extensions: list[Path] = Field(default_factory=list, description="Unpacked extensions (folders with a manifest.json) loaded into every browser webhand launches; process isolation only, not with a remote browser.")

    @field_validator("timeout", "action_timeout", "launch_timeout", "idle_timeout", "idle_check_interval",
                     "abandoned_after", "queue_timeout", "navigation_settle_cap", "request_settle_cap", "dom_quiet_cap",
                     "effects_settle_cap",
                     mode="before")
    @classmethod
    def _durations(cls, value: Any) -> Any:
        return to_seconds(value)  # "15s", "500ms" as well as 15 and 0.5

    @field_validator("screenshot_dir", "download_dir", mode="before")
    @classmethod
    def _empty_is_default(cls, value: Any) -> Any:
        # An empty value (`screenshot_dir = ""`, WEBHAND_SCREENSHOT_DIR=) means "the default folder";
        # as a Path it would be ".", the current directory.
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("extensions")
    @classmethod
    def _extension_folders(cls, value: list[Path]) -> list[Path]:
        folders = []
        for path in value:
            folder = Path(path).expanduser().absolute()
            if not (folder / "manifest.json").is_file():
                raise ValueError(f"{folder} is not an unpacked extension (a folder with a manifest.json)")
            folders.append(folder)
        return folders
    @field_validator("profile", mode="before")
    @classmethod
    def _profile_name(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None  # WEBHAND_PROFILE= means no profile
        if value is not None:
            _valid_profile_name(value)
        return value

    @field_validator("allowed_profiles")
    @classmethod
    def _profile_names(cls, value: list[str]) -> list[str]:
        for name in value:
            _valid_profile_name(name)
        return value

    @field_validator("storage_state", mode="before")
    @classmethod
    def _no_empty_path(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("capabilities")
    @classmethod
    def _known_caps(cls, value: list[str]) -> list[str]:
        return [c.strip() for c in value if c.strip()]

    @field_validator("allowed_origins", "blocked_origins")
    @classmethod
    def _origin_rules(cls, value: list[str]) -> list[str]:
        for rule in value:
            if rule.strip():
                OriginRule(rule)  # a rule that does not parse is refused now, not ignored later
        return value

    @model_validator(mode="before")
    @classmethod
    def _old_browser_key(cls, data: Any) -> Any:
        """``browser``, the old key of the Firefox driver, still read, with a deprecation line: ``browser =
        "firefox"`` is ``driver = "firefox"`` (and wins over a ``driver`` set beside it, as it did);
        ``"chromium"`` keeps a Chromium driver."""
        if not isinstance(data, dict) or data.get("browser") is None:
            return data
        old = data["browser"]
        if old == "firefox":
            log.warning('webhand: the setting browser = "firefox" is deprecated; write driver = "firefox" '
                        '(WEBHAND_DRIVER=firefox, --driver firefox)')
            return {**data, "driver": "firefox"}
        if old == "chromium" and data.get("driver") == "firefox":
            return {**data, "driver": "cdp"}  # a later source's browser = "chromium" undoes an earlier firefox
        return data

    @model_validator(mode="after")
    def _browser_follows_the_driver(self) -> "Settings":
        """``browser`` reads as the browser the driver runs, for code and configs written before ``driver``
        named Firefox too."""
        self.__dict__["browser"] = "firefox" if self.driver == "firefox" else "chromium"
        return self

    @model_validator(mode="after")
    def _driver_for_what_is_asked(self) -> "Settings":
        """Raw CDP unless the driver was set, or the settings need Playwright: its browser server
        speaks Playwright's own protocol, and only it attaches to a browser's own context."""
        if "driver" not in self.model_fields_set and self.needs_playwright():
            self.__dict__["driver"] = "playwright"  # not an assignment: it would count as set
        return self

    @model_validator(mode="after")
    def _firefox_can_do_it(self) -> "Settings":
        """What the Firefox driver does not do yet is refused here, not ignored at run time."""
        if self.driver != "firefox":
            return self
        unsupported = [name for name, value in (
            ("playwright_url", self.playwright_url), ("extension_bridge", self.extension_bridge),
            ("pool", self.pool),
            ("attach_to_existing_context", self.attach_to_existing_context),
            # Its disguise is a desktop Chrome's; Firefox's one sign, navigator.webdriver, no preference hides.
            ("stealth", self.stealth)) if value]
        if unsupported:
            raise ValueError(f"driver = \"firefox\" does not support {', '.join(unsupported)} yet: remove "
                             f"{'it' if len(unsupported) == 1 else 'them'}, or use driver = \"cdp\"")
        return self

    @model_validator(mode="after")
    def _shell_can_do_it(self) -> "Settings":
        """A forced headless shell with settings only the full browser serves is refused, not half done."""
        if self.chromium_flavor == "headless-shell" and (reason := self.needs_full_chromium()) is not None:
            raise ValueError(f"chromium_flavor = \"headless-shell\" cannot serve these settings ({reason}): "
                             "set chromium_flavor to \"auto\" or \"full\"")
        return self

    def needs_full_chromium(self) -> str | None:
        """Why these settings need the full Chromium rather than its headless shell
        (engine/launch/chromium_binary.py), or None when the shell serves them."""
        if not self.headless:
            return "headless = false: the headless shell cannot show a window"
        if self.extensions:
            return "extensions are configured: the headless shell cannot load extensions"
        if self.stealth:
            return "stealth is on: its disguise is a desktop Chrome's, which the headless shell does not look like"
        if self.allow_internal_pages:
            return ("allow_internal_pages is on: the headless shell has none of the browser's own pages "
                    "(chrome://version, chrome://settings ...)")
        return None

    def needs_playwright(self) -> bool:
        endpoints = self.pool.endpoints if self.pool is not None else []
        return bool(self.playwright_url or self.attach_to_existing_context
                    or any(e.kind == "playwright" or (e.attach_to_existing_context and e.kind == "cdp")
                           for e in endpoints))

    @model_validator(mode="after")
    def _policy_enforceable(self) -> "Settings":
        # A policy webhand cannot enforce on every channel is refused, not half applied.
        remote = self.cdp_url or self.playwright_url or self.extension_bridge or \
            (self.pool is not None and any(e.kind != "local" for e in self.pool.endpoints))
        if remote and (self.allowed_origins or self.blocked_origins):
            raise ValueError(
                "allowed_origins and blocked_origins cannot be enforced on a browser webhand connects to "
                "(cdp_url, playwright_url, a remote pool endpoint): webhand must launch the browser itself to "
                "turn off WebRTC's direct UDP, and a remote browser cannot reach webhand's policy proxy on "
                "127.0.0.1. Remove cdp_url so that webhand launches Chromium, or remove the origin rules")
        if sum(bool(x) for x in (self.cdp_url, self.playwright_url, self.pool, self.extension_bridge)) > 1:
            raise ValueError("cdp_url, playwright_url, pool and extension_bridge each say where browsers come from: "
                             "set only one")
        uses_extension = self.extension_bridge or (self.pool is not None and any(
            e.kind == "extension" for e in self.pool.endpoints))
        if uses_extension and self.driver != "cdp":
            raise ValueError("the extension bridge works with the raw CDP driver only: set driver = \"cdp\"")
        if self.extensions and remote:
            raise ValueError("extensions are loaded into browsers webhand launches; a browser it connects to (cdp_url, "
                             "playwright_url, a remote pool endpoint, the extension bridge) keeps its own: remove "
                             "extensions, or let webhand launch Chromium")
        if self.extensions and self.isolation == "context":
            raise ValueError("extensions need isolation = \"process\": in context isolation conversations share one "
                             "browser, and an extension would see (and could change) every conversation's pages")
        if sum(bool(x) for x in (self.cdp_url, self.playwright_url, self.pool)) > 1:
            raise ValueError("cdp_url, playwright_url and pool each say where browsers come from: set only one")
        if self.profile and remote:  # remote includes the extension bridge: its tabs are the person's own
            raise ValueError(f"profile {self.profile!r} needs a browser webhand launches on this machine (a profile "
                             "is a folder here, run by its own Chromium), but cdp_url, playwright_url or a remote "
                             "pool endpoint says browsers come from elsewhere. Remove one of them; to sign a remote "
                             "browser in, use storage_state")
        if self.profile and self.storage_state:
            raise ValueError("profile and storage_state both say where a session's sign-ins come from: set only one "
                             "(a profile keeps its own cookies and storage)")
        if self.save_storage_state and not self.storage_state:
            raise ValueError("save_storage_state needs storage_state, the file to write back to")
        if self.attach_to_existing_context and not self.cdp_url:
            raise ValueError("attach_to_existing_context needs cdp_url (a Chrome started with --remote-debugging-port)")
        return self

    def effective_pool(self) -> PoolSettings | None:
        """Where sessions run: the pool, or one endpoint for cdp_url / playwright_url, or None
        (launch here, the default, handled by the session manager without a pool)."""
        if self.pool is not None:
            return self.pool
        if self.extension_bridge:
            # A short first wait: the person may connect the extension later; the pool retries.
            endpoint = EndpointSettings(kind="extension", timeout=min(self.launch_timeout, 5.0), retries=0)
            return PoolSettings(endpoints=[endpoint], queue_size=0, queue_timeout=0)
        if self.cdp_url or self.playwright_url:
            endpoint = EndpointSettings(kind="cdp" if self.cdp_url else "playwright",
                                        url=self.cdp_url or self.playwright_url, headers=self.remote_headers,
                                        capacity=self.max_sessions, timeout=self.launch_timeout,
                                        attach_to_existing_context=self.attach_to_existing_context)
            return PoolSettings(endpoints=[endpoint], queue_size=0, queue_timeout=0)
        return None

    @classmethod
    def from_sources(cls, *layers: dict[str, Any], env: dict[str, str] | None = None) -> "Settings":
        """Merge dict layers (lowest first), then ``WEBHAND_*`` variables, and validate once.

        A bad value is refused with the key, the value and what is allowed.
        """
        merged: dict[str, Any] = {}
        for layer in layers:
            merged.update({k: v for k, v in layer.items() if v is not None})
        merged.update(_from_env(os.environ if env is None else env))
        try:
            return cls(**merged)
        except ValidationError as error:
            problems = []
            for item in error.errors():
                key = ".".join(str(p) for p in item["loc"])
                message = item["msg"].removeprefix("Value error, ")
                value = item.get("input")
                # Structured values (an endpoint, its headers) may carry credentials: name the key only.
                hidden = isinstance(value, dict) or "headers" in key or \
                    (isinstance(value, list) and any(isinstance(v, dict) for v in value))
                problems.append(message if not key else f"{key}: {message}" if hidden else f"{key}={value!r}: {message}")
            raise ConfigError("Invalid webhand setting: " + "; ".join(problems) + ".",
                              "Fix the value in webhand.toml, the WEBHAND_* variable or the flag.") from None


_ENV_LISTS = {"extra_args", "capabilities", "roots", "allowed_origins", "blocked_origins", "pool_labels",
              "allowed_profiles"}
#: Structured settings given in one variable as JSON (WEBHAND_POOL='{"endpoints": [...]}').
_ENV_JSON = {"remote_headers", "pool"}


def _from_env(env: dict[str, str] | os._Environ[str]) -> dict[str, Any]:
    """Read ``WEBHAND_<FIELD>`` variables; ``WEBHAND_CHROME`` is the documented alias of the binary."""
    values: dict[str, Any] = {}
    for name in Settings.model_fields:
        raw = env.get(f"WEBHAND_{name.upper()}")
        if raw is None:
            continue
        if name in _ENV_LISTS:
            values[name] = [part for part in raw.split("," if name != "extra_args" else " ") if part]
        elif name in _ENV_JSON:
            import json

            try:
                values[name] = json.loads(raw)
            except ValueError as error:
                raise ConfigError(f"WEBHAND_{name.upper()} is not valid JSON: {error}.",
                                  'Write it as JSON, e.g. {"Authorization": "Bearer ${TOKEN}"}.') from None
        elif name == "viewport":
            width, _, height = raw.lower().partition("x")
            values[name] = {"width": width, "height": height}
        else:
            values[name] = raw
    return values


# ---------------------------------------------------------------------------------------------
# The config file: ./webhand.toml, else the user's config dir, or an explicit path.
#
#   [defaults.browser]            any Settings field, plus `enabled` and a `timeouts` table
#   headless = true
#   timeouts = { default = 15, action = 5 }
#   [agents.researcher.browser]   overrides for one agent (--agent / WEBHAND_AGENT)
#   evaluate_enabled = false

# Where the file is looked for lives in `locations` (the CLI's call to the daemon needs it without pydantic).


def load_settings(*, config: str | Path | None = None, agent: str | None = None, flags: dict[str, Any] | None = None,
                  env: dict[str, str] | None = None, cwd: Path | None = None) -> Settings:
    """Settings from defaults < config file [defaults.browser] < [agents.NAME.browser] < env < flags.

    A bad value is refused with where it came from, the key, the value and what is allowed.
    """
    env = dict(os.environ if env is None else env)
    agent = agent or env.get("WEBHAND_AGENT") or None
    layers: list[tuple[str, dict[str, Any]]] = []
    path = find_config_file(config, env=env, cwd=cwd)
    if path is not None:
        layers += _file_layers(path, agent)
    elif agent:
        raise ConfigError(f"Agent {agent!r} was asked for but there is no {CONFIG_FILE_NAME}.",
                          f"Create ./{CONFIG_FILE_NAME} (or {user_config_dir() / CONFIG_FILE_NAME}) with [agents.{agent}.browser].")
    layers.append(("environment (WEBHAND_*)", _from_env(env)))
    layers.append(("command-line flags", {k: v for k, v in (flags or {}).items() if v is not None}))
    for label, layer in layers:  # validate each alone first, so an error names its source
        try:
            Settings.from_sources(layer, env={})
        except ConfigError as error:
            raise ConfigError(f"{error.message.removesuffix('.')} (from {label}).", error.hint) from None
    return Settings.from_sources(*(layer for _, layer in layers), env={})


def _file_layers(path: Path, agent: str | None) -> list[tuple[str, dict[str, Any]]]:
    import tomllib

    try:
        document = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"Cannot read config file {path}: {error}.", "Check the file's permissions and encoding.") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"Config file {path} is not valid TOML: {error}.", "Fix the syntax at that line.") from None
    _only_keys(document, {"defaults", "agents", "pool"}, str(path), "")
    defaults = document.get("defaults", {})
    _only_keys(defaults, {"browser"}, str(path), "defaults.")
    layers = [(f"{path} [defaults.browser]", _browser_table(defaults.get("browser", {}), path, "defaults.browser"))]
    if "pool" in document:  # [pool] and [[pool.endpoints]] at the top: where browsers come from, for every agent
        layers.append((f"{path} [pool]", {"pool": document["pool"]}))
    agents = _agents_by_id(document.get("agents", {}), path)
    if agent:
        if agent not in agents:
            raise ConfigError(f"Agent {agent!r} is not in {path}.",
                              f"Known agents: {', '.join(sorted(agents)) or 'none'}. Add [agents.{agent}.browser].")
        _only_keys(agents[agent], {"browser"}, str(path), f"agents.{agent}.")
        where = f"agents.{agent}.browser"
        layers.append((f"{path} [{where}]", _browser_table(agents[agent].get("browser", {}), path, where)))
    return layers


def _agents_by_id(agents: Any, path: Path) -> dict[str, dict[str, Any]]:
    """Agent profiles by name, from either form a config file may use:

    ``[agents.NAME.browser]`` (named tables), or the other designs' array form
    ``[[agents]] id = "NAME"`` followed by ``[agents.browser]`` (an array of tables, each with an id).
    """
    if isinstance(agents, dict):
        return agents
    if not isinstance(agents, list):
        raise ConfigError(f"agents in {path} must be tables: [agents.NAME.browser] or [[agents]] with id = \"NAME\".",
                          "Fix the agents section.")
    by_id: dict[str, dict[str, Any]] = {}
    for number, entry in enumerate(agents, 1):
        where = f"agents[{number}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} in {path} must be a table ([[agents]]).",
                              "Write it as [[agents]] with id = \"NAME\".")
        name = entry.get("id")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{where}.id in {path} is missing or not a string: every [[agents]] entry needs one.",
                              f"Add id = \"NAME\" under the {number}. [[agents]].")
        if name in by_id:
            raise ConfigError(f"agents id {name!r} appears twice in {path}.", "Give each [[agents]] entry its own id.")
        _only_keys(entry, {"id", "browser"}, str(path), f"{where}.")
        by_id[name] = {k: v for k, v in entry.items() if k != "id"}
    return by_id


def _only_keys(table: Any, allowed: set[str], path: str, prefix: str) -> None:
    if not isinstance(table, dict):
        raise ConfigError(f"{prefix.rstrip('.')} in {path} must be a table.", "Write it as [section] or { key = value }.")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"Unknown key {prefix}{unknown[0]} in {path}.", f"Allowed here: {', '.join(sorted(allowed))}.")


def _browser_table(table: Any, path: Path, where: str) -> dict[str, Any]:
    """Map a ``browser`` table onto Settings fields; generic, so new fields need no edit here."""
    _only_keys(table, set(table) if isinstance(table, dict) else set(), str(path), where)
    fields = Settings.model_fields
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key == "timeouts" and "timeouts" not in fields:
            _only_keys(value, set(value) if isinstance(value, dict) else set(), str(path), f"{where}.timeouts")
            for kind, seconds in value.items():
                name = "timeout" if kind == "default" else f"{kind}_timeout"
                if name not in fields:
                    kinds = sorted(["default"] + [f.removesuffix("_timeout") for f in fields if f.endswith("_timeout")])
                    raise ConfigError(f"Unknown key {where}.timeouts.{kind} in {path}.", f"Allowed: {', '.join(kinds)}.")
                values[name] = seconds
        elif key == "enabled":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}.enabled={value!r} in {path}: must be true or false.", "Fix the value.")
            values["enabled"] = value  # false: no tool at all, which no --caps flag brings back (tools/__init__.py)
        else:
            name = next((n for n in (key, f"{key}_path", key.removesuffix("_file"), key.removesuffix("_path"))
                         if n in fields), None)
            if name is None:
                allowed = sorted([*fields, "timeouts"])
                raise ConfigError(f"Unknown key {where}.{key} in {path}.", f"Allowed: {', '.join(allowed)}.")
            if name == "viewport" and isinstance(value, str):
                width, _, height = value.lower().partition("x")
                value = {"width": width, "height": height}
            values[name] = _relative_to(path.parent, value) if _is_path_field(name) else value
    return values


def _is_path_field(name: str) -> bool:
    return "Path" in str(Settings.model_fields[name].annotation)


def _relative_to(base: Path, value: Any) -> Any:
    """Paths in a config file are relative to the file, not to wherever webhand was started."""
    if isinstance(value, str):
        return str((base / Path(value).expanduser()).resolve()) if value else value
    if isinstance(value, list):
        return [_relative_to(base, v) for v in value]
    return value
