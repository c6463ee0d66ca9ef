"""Origin rules: which URLs and connections an origin policy lets through (no browser here).

A rule is ``scheme://host[:port]``, ``host[:port]`` (any scheme, any port) or ``*.domain`` (the
domain and its subdomains), optionally with a scheme and a port. Hosts in rules and in URLs are
normalized the same way (``security/host_names.py``), so ``LOCALHOST.``, ``127.1`` or ``[::ffff:7f00:1]`` cannot
slip past a rule written ``localhost`` or ``127.0.0.1``. ``ws`` counts as ``http`` and ``wss`` as
``https``: a WebSocket belongs to the origin of the same host and port.

Blocked rules win over allowed ones. ``OriginRules`` is what both enforcement layers ask: the
request layer in the browser (``engine/pw/policy.py``) with URLs, the network layer
(``engine/policy_proxy.py``) with connections and the addresses a host resolves to.
"""

from __future__ import annotations

from typing import Any, Self
from urllib.parse import urlsplit

from webhand.security.host_names import InvalidHost, address, is_loopback, normalize_host, same_place
from webhand.security.running_servers import RUNNING_SERVERS, RunningServers

# Schemes that never leave the browser, or that only name a document already allowed to load.
ALWAYS_ALLOWED = ("data", "blob", "about", "chrome-error", "devtools", "chrome-extension")
#: The browser's own pages. webhand never opens one unless ``allow_internal_pages`` is set:
#: several (chrome://settings, chrome://history, chrome://crash ...) end a headless browser, and
#: with context isolation that browser is every conversation's. Pages cannot open them anyway
#: (Chromium refuses links and redirects there); only the agent's navigations and new tabs could.
INTERNAL_SCHEMES = frozenset({"chrome", "chrome-untrusted", "devtools", "chrome-extension", "chrome-search",
                              "chrome-native", "chrome-distiller", "chrome-devtools", "edge", "brave", "opera",
                              "vivaldi", "about-internal"})
DEFAULT_PORTS = {"http": 80, "https": 443}
_C0_AND_SPACE = "".join(chr(code) for code in range(0x21))
_SAME_ORIGIN_SCHEME = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


class OwnEndpoints:
    """The addresses webhand listens on (the HTTP MCP server and its dashboard, the CLI daemon's
    dashboard, the extension bridge's relay): this process's, registered as they are bound, and every other webhand server of this
    user (``running_servers``). No page webhand drives may reach them, whatever the configuration:
    otherwise a page could send the agent's own tab there and read or drive every conversation
    (issue 22), and one webhand's model could drive another's (issue 43). Matched by port: a
    loopback or wildcard bind answers on every loopback spelling (``localhost``, ``127.0.0.1``,
    ``[::1]`` ...)."""

    def __init__(self, running: RunningServers = RUNNING_SERVERS) -> None:
        self._bound: dict[int, str] = {}  # port -> the host it was bound on, normalized
        self._running = running

    def add(self, host: str, port: int) -> None:
        bare = host.strip("[]") or "0.0.0.0"  # "" binds every address
        self._bound[port] = _bound_host(bare)
        self._running.register(bare, port)

    def remove(self, port: int) -> None:
        self._bound.pop(port, None)
        self._running.unregister(port)

    def __bool__(self) -> bool:
        return bool(self._bound) or bool(self._running)

    def refusal(self, host: str, port: int | None) -> str | None:
        """Why a request to ``host:port`` (host normalized) is refused: it is one of webhand's own."""
        if port is None:
            return None
        bound, whose = self._bound.get(port), "webhand's own"
        if bound is None:
            other = self._running.host_of(port)
            if other is None:
                return None
            bound, whose = _bound_host(other[1]), f"another webhand's (process {other[0]})"
        wildcard = bound in ("0.0.0.0", "[::]")
        if host == bound or is_loopback(host) and (is_loopback(bound) or wildcard) or wildcard:
            return (f"refused because {host}:{port} is {whose} dashboard, MCP server or extension relay: no page "
                    "webhand drives may reach it, whatever the configuration (it would read and drive every conversation)")
        return None


def _bound_host(bare: str) -> str:
    try:
        return normalize_host(f"[{bare}]" if ":" in bare else bare)
    except InvalidHost:
        return bare


#: The one registry of this process (``surfaces/mcp/streamable_http.py`` and ``surfaces/dashboard`` fill it).
OWN_ENDPOINTS = OwnEndpoints()

#: Fetch patterns that pause what could reach an own endpoint on a loopback address, when no origin
#: policy pauses everything: only loopback requests pay for the check (engine/cdp/interception.py).
OWN_ENDPOINT_PATTERNS = [{"urlPattern": f"{scheme}://{host}*", "requestStage": "Request"}
                         for scheme in ("http", "https") for host in ("127.0.0.1", "localhost", "[::1]", "*.localhost")]


class OriginRule:
    """One rule, parsed and normalized; ``ValueError`` says what is wrong with its text."""

    def __init__(self, text: str) -> None:
        self.text = text.strip()
        rest = self.text
        self.scheme: str | None = None
        if "://" in rest:
            scheme, _, rest = rest.partition("://")
            self.scheme = _SAME_ORIGIN_SCHEME.get(scheme.lower())
            if self.scheme is None:
                raise ValueError(f"{self.text!r}: the scheme {scheme!r} is not one of http, https, ws, wss "
                                 "(file:// URLs are governed by allow_file_urls)")
        if rest.endswith("/"):
            rest = rest[:-1]
        if "/" in rest or "?" in rest or "#" in rest:
            raise ValueError(f"{self.text!r}: a rule is an origin (scheme, host, port), without a path")
        host, port = _split_host_port(rest, self.text)
        self.wildcard = host.startswith("*.")
        if self.wildcard:
            host = host[2:]
        if not host or host == "*":
            raise ValueError(f"{self.text!r}: give a host (an empty allowed_origins already allows every origin)")
        try:
            self.host = normalize_host(host)
        except InvalidHost as error:
            raise ValueError(str(error) if host == self.text else f"{self.text!r}: {error}") from None
        if self.wildcard and address(self.host) is not None:
            raise ValueError(f"{self.text!r}: '*.' takes a domain name, not an IP address")
        self.port = port if port is not None else (DEFAULT_PORTS[self.scheme] if self.scheme else None)

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        """Whether this rule covers a request; ``host`` is normalized, ``scheme`` is http or https."""
        if self.scheme and self.scheme != scheme:
            return False
        if self.port is not None and self.port != port:
            return False
        if self.wildcard:
            return host == self.host or host.endswith("." + self.host)
        return self.host in same_place(host)


class OriginRules:
    def __init__(self, allowed: list[str], blocked: list[str], allow_file_urls: bool,
                 allow_internal_pages: bool = False) -> None:
        self.allowed = [OriginRule(r) for r in allowed if r.strip()]
        self.blocked = [OriginRule(r) for r in blocked if r.strip()]
        self.allow_file_urls = allow_file_urls
        self.allow_internal_pages = allow_internal_pages

    @classmethod
    def from_settings(cls, settings: Any) -> Self:
        return cls(settings.allowed_origins, settings.blocked_origins, settings.allow_file_urls,
                   settings.allow_internal_pages)

    @property
    def active(self) -> bool:
        """Whether any origin rule is set; without one nothing is checked (no cost)."""
        return bool(self.allowed or self.blocked)

    def check_navigation(self, url: str) -> str | None:
        """Why the agent may not open ``url`` (a navigation or a new tab): an internal page of the
        browser, or what ``check`` says."""
        cleaned = _as_browser_reads(url)
        scheme = cleaned.partition(":")[0].lower()
        while scheme == "view-source":
            cleaned = cleaned[len("view-source:"):]
            scheme = cleaned.partition(":")[0].lower()
        if scheme in INTERNAL_SCHEMES and not self.allow_internal_pages:
            return (f"refused because {scheme}:// pages are the browser's own (settings, history, crash ...): some end "
                    "the browser, which other conversations may share. Stay on web pages; if you truly need one, "
                    "the user can set allow_internal_pages = true in the config (or WEBHAND_ALLOW_INTERNAL_PAGES=true)")
        return self.check(url)

    def own_endpoint_refusal(self, url: str) -> str | None:
        """Why ``url`` is refused as one of webhand's own endpoints (the one check that holds without
        any origin rule); None for any other URL."""
        if not OWN_ENDPOINTS:
            return None
        parts = urlsplit(_as_browser_reads(url))
        scheme = _SAME_ORIGIN_SCHEME.get(parts.scheme.lower())
        try:
            if scheme is None or not parts.hostname:
                return None
            return OWN_ENDPOINTS.refusal(normalize_host(parts.hostname), parts.port or DEFAULT_PORTS[scheme])
        except (InvalidHost, ValueError):
            return None

    def check(self, url: str) -> str | None:
        """Why ``url`` may not load, naming the rule; None when it may."""
        url = _as_browser_reads(url)
        try:
            parts = urlsplit(url)
        except ValueError:
            return "refused because it is not a valid URL"
        scheme = parts.scheme.lower()
        if scheme == "view-source":  # the browser loads the inner URL
            return self.check(url[len("view-source:"):])
        if scheme == "file":
            return None if self.allow_file_urls else "file:// URLs are refused (allow_file_urls is off)"
        if scheme in ALWAYS_ALLOWED or not scheme or not (self.active or OWN_ENDPOINTS):
            return None
        origin_scheme = _SAME_ORIGIN_SCHEME.get(scheme, scheme)
        try:
            host = normalize_host(parts.hostname or "") if parts.hostname or origin_scheme in DEFAULT_PORTS else ""
            port = parts.port or DEFAULT_PORTS.get(origin_scheme)
        except InvalidHost as error:
            return f"refused because {error}"
        except ValueError:
            return "refused because its port is not a number from 1 to 65535"
        return self.check_origin(origin_scheme, host, port)

    def check_origin(self, scheme: str, host: str, port: int | None) -> str | None:
        """Why a request to ``scheme://host:port`` may not be made; ``host`` normalized."""
        own = OWN_ENDPOINTS.refusal(host, port)
        if own:
            return own
        for rule in self.blocked:
            if rule.matches(scheme, host, port):
                return f"refused by the blocked_origins rule '{rule.text}'"
        if self.allowed and not any(rule.matches(scheme, host, port) for rule in self.allowed):
            return "refused because its origin is not in allowed_origins (" + ", ".join(r.text for r in self.allowed) + ")"
        return None

    def check_address(self, scheme: str, host: str, ip: str, port: int) -> str | None:
        """Why connecting to ``ip`` (what ``host`` resolved to) is refused: a blocked rule names that
        address, or is ``localhost`` and the address is loopback. Catches host names whose DNS
        points at a blocked address, which no rule on names can see."""
        ip_host = normalize_host(ip)
        own = OWN_ENDPOINTS.refusal(ip_host, port)
        if own:
            return f"{own} ({host} resolves to {ip})"
        for rule in self.blocked:
            if rule.matches(scheme, ip_host, port):
                return f"refused by the blocked_origins rule '{rule.text}' ({host} resolves to {ip})"
        return None


def _as_browser_reads(url: str) -> str:
    """``url`` cleaned the way the WHATWG parser cleans it before reading the host, so that this
    check sees the host the browser will connect to: tabs and newlines dropped, and, for http(s)
    and ws(s), backslashes read as slashes and any number of slashes after the scheme
    (``http:evil.com``, ``http:\\\\evil.com`` and ``http:///evil.com`` all go to evil.com)."""
    url = url.strip(_C0_AND_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    scheme, colon, rest = url.partition(":")
    if colon and scheme.lower() in _SAME_ORIGIN_SCHEME:
        rest = rest.replace("\\", "/")
        url = f"{scheme}://{rest.lstrip('/')}"
    return url


def _split_host_port(text: str, rule: str) -> tuple[str, int | None]:
    if text.startswith("["):
        host, _, after = text.partition("]")
        host += "]"
        port_text = after[1:] if after.startswith(":") else None
        if after and port_text is None:
            raise ValueError(f"{rule!r}: expected ':port' after the IPv6 address")
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    elif ":" in text:
        raise ValueError(f"{rule!r}: write an IPv6 address in brackets, like [::1]:8080")
    else:
        host, port_text = text, None
    if port_text is None:
        return host, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{rule!r}: the port must be a number from 1 to 65535")
    return host, int(port_text)
