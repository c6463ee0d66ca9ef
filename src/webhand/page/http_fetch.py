"""Plain HTTP GET for web_fetch: no browser, capped in size and time, under the origin policy.

Redirects are followed here, hop by hop, so that every hop's URL is checked against the same
rules the browser obeys (``security/origins.py``) before it is requested. When origin rules are set, the
connections also go through a ``PolicyProxy`` (``engine/policy_proxy.py``), the one the browser
uses: it resolves each host itself and refuses a name whose DNS answer is a blocked address, so
web_fetch cannot be used to reach what the browser may not.

``needs_browser`` says when a fetched page is no use without one: the server refused a plain
client (403, 429), sent a bot challenge, or sent an empty shell that scripts fill in.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from webhand.engine.policy_proxy import REFUSED_HEADER, PolicyProxy
from webhand.errors import NavigationFailed, PolicyRefused
from webhand.security.origins import OriginRules

if TYPE_CHECKING:
    import httpx2  # for the types only: the module itself is imported on first use

#: Most redirects followed, as in browsers' own limit order of magnitude (Chromium: 20).
MAX_REDIRECTS = 10
#: What the request says it is: an honest client name (stealth is for the browser, not for this).
USER_AGENT = "webhand-fetch/0.1 (+https://pypi.org/project/webhand/)"
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml", "application/ld+json",
               "application/javascript", "application/rss", "application/atom")
#: Markers of bot challenges (Cloudflare, Akamai, Imperva, PerimeterX, DataDome, generic "enable JS").
_CHALLENGE_MARKERS = re.compile(
    r"<title>\s*(just a moment|attention required|access denied|please wait)|/cdn-cgi/challenge-platform/"
    r"|cf-browser-verification|_incapsula_resource|px-captcha|captcha-delivery\.com|geo\.captcha"
    r"|enable javascript and cookies to continue|checking (if the site connection is secure|your browser)",
    re.IGNORECASE)
_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)
_INVISIBLE = re.compile(r"<(script|style|noscript|template|svg)\b.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
#: A page whose body has less visible text than this, and loads scripts, is a shell scripts fill in.
_EMPTY_SHELL_CHARS = 40


@dataclass
class Fetched:
    url: str  # after redirects
    status: int
    content_type: str
    body: bytes
    truncated: bool
    redirects: list[str]
    headers: dict[str, str]

    @property
    def text(self) -> str:
        charset = re.search(r"charset=([\w-]+)", self.content_type, re.IGNORECASE)
        try:
            return self.body.decode(charset.group(1) if charset else "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.body.decode("utf-8", errors="replace")

    @property
    def is_html(self) -> bool:
        kind = self.content_type.split(";", 1)[0].strip().lower()
        return kind in ("text/html", "application/xhtml+xml") or (not kind and self.body.lstrip()[:1] == b"<")

    @property
    def is_text(self) -> bool:
        kind = self.content_type.split(";", 1)[0].strip().lower()
        return not kind or kind.startswith(_TEXT_TYPES) or kind.endswith(("+json", "+xml"))


def needs_browser(page: Fetched) -> str | None:
    """Why this page should be read in the browser instead; None when the fetch is enough."""
    if page.status in (403, 429):
        return f"the server answered HTTP {page.status} to a plain HTTP client"
    if page.headers.get("cf-mitigated", "").lower() == "challenge":
        return "the server sent a bot challenge"
    if not page.is_html:
        return None
    html = page.text
    if _CHALLENGE_MARKERS.search(html[:200_000]):
        return "the page is a bot challenge that needs JavaScript"
    if _SCRIPT.search(html):
        body = html.split("<body", 1)[1] if "<body" in html.lower() else html
        visible = " ".join(_TAG.sub(" ", _INVISIBLE.sub(" ", body)).split())
        if len(visible) < _EMPTY_SHELL_CHARS:
            return "the page's HTML is an empty shell that its scripts fill in"
    return None


async def fetch(url: str, rules: OriginRules, *, max_bytes: int, timeout: float) -> Fetched:
    """GET ``url``, following redirects (each hop checked), reading at most ``max_bytes``.

    Raises ``PolicyRefused`` for a refused hop, ``NavigationFailed`` for a network failure, and
    ``TimeoutError`` when the whole fetch takes longer than ``timeout``."""
    import httpx2 as httpx  # imported on first use: the CLI's fast path never needs it

    proxy = PolicyProxy(rules, lambda *_: None) if rules.active else None
    try:
        async with asyncio.timeout(timeout):
            address = await proxy.start() if proxy else None
            async with httpx.AsyncClient(proxy=address, follow_redirects=False, timeout=timeout, trust_env=False,
                                         headers={"User-Agent": USER_AGENT, "Accept": "text/html,*/*;q=0.8"}) as client:
                return await _follow(client, url, rules, max_bytes)
    except (TimeoutError, httpx.TimeoutException):
        raise TimeoutError from None  # the caller says how long it waited (TimeoutError is an OSError too)
    except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, ValueError, OSError) as error:
        # A hostile server's redirect can name any URL: every way the client refuses it is a failed fetch.
        reason = str(error).splitlines()[0].rstrip(".") if str(error) else type(error).__name__
        raise NavigationFailed(f"Fetching {url} failed: {reason}.",
                               "Check the URL; or open it in the browser with browser_navigate.") from None
    finally:
        if proxy is not None:
            await proxy.close()


async def _follow(client: httpx2.AsyncClient, url: str, rules: OriginRules, max_bytes: int) -> Fetched:
    redirects: list[str] = []
    for _ in range(MAX_REDIRECTS + 1):
        _check(rules, url, redirects)
        async with client.stream("GET", url) as response:
            location = response.headers.get("location")
            if response.status_code in (301, 302, 303, 307, 308) and location:
                redirects.append(url)
                url = urljoin(url, location)
                continue
            if response.status_code == 403 and response.headers.get(REFUSED_HEADER):  # the proxy's refusal
                why = (await response.aread()).decode(errors="replace").strip().removeprefix("webhand: ")
                raise PolicyRefused(f"web_fetch refused {url}: {why}.",
                                    "Only the origins the configuration allows can be fetched.")
            body, truncated = await _read_capped(response, max_bytes)
            return Fetched(str(response.url), response.status_code, response.headers.get("content-type", ""),
                           body, truncated, redirects, {k.lower(): v for k, v in response.headers.items()})
    raise NavigationFailed(f"Fetching {redirects[0]} redirected more than {MAX_REDIRECTS} times.",
                           "The server loops; open the last URL in the browser if you need it.")


def _check(rules: OriginRules, url: str, redirects: list[str]) -> None:
    if not url.lower().startswith(("http://", "https://")):
        raise NavigationFailed(f"web_fetch reads http:// and https:// URLs only, not {url[:80]}.",
                               "Open other URLs in the browser with browser_navigate.")
    try:
        parts = urlsplit(url)
        if not parts.hostname or (parts.port is not None and not 0 < parts.port < 65536):
            raise ValueError("it has no host or its port is out of range")
    except ValueError as error:
        via = f" (a redirect from {redirects[-1]})" if redirects else ""
        raise NavigationFailed(f"{url[:200]}{via} is not a valid URL: {error}.",
                               "Give a URL such as https://example.com/page.") from None
    reason = rules.check(url)
    if reason:
        via = f" (a redirect from {redirects[-1]})" if redirects else ""
        raise PolicyRefused(f"web_fetch refused {url}{via}: it is {reason}.",
                            "Only the origins the configuration allows can be fetched.")


async def _read_capped(response: httpx2.Response, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False
