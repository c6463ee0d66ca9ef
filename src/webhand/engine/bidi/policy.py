"""Origin policy on Firefox: the request layer (requests paused by ``network.addIntercept``), the
checks of a tab's navigations, and the profile preferences a policy needs.

As on Chromium there are two layers. The request layer is here: every request Firefox pauses
(interception.py) is asked about before it is sent, each hop of a redirect too (Firefox pauses
the next hop under the same request id, so a refused hop names the redirect that led there).
The network layer is the same loopback proxy as Chromium's (``engine/policy_proxy.py``), given
to the session's user context (``browser.createUserContext``'s ``proxy``): it holds on what no
interception sees (WebSockets, shared and service workers, prefetches). Both write to the
context's refusal log (``engine/policy.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from webhand.engine.policy import (OriginPolicy, RefusalLog, before_navigation, navigation_refusal,
                                   refused_navigation)
from webhand.errors import PolicyRefused

#: Profile preferences of a Firefox launched under an origin policy.
POLICY_PREFERENCES: dict[str, object] = {
    # Firefox sends loopback traffic around a proxy unless told otherwise: the test sites, and any
    # page's requests to 127.0.0.1, must pass the policy proxy like every other.
    "network.proxy.allow_hijacking_localhost": True,
    "network.proxy.no_proxies_on": "",
    # WebRTC would send UDP (STUN, TURN) straight to any address a page names, around the proxy:
    # with this, ICE goes only through the proxy (which checks the address) and sends no UDP.
    "media.peerconnection.ice.proxy_only": True,
    # Names a page mentions are not looked up ahead of need (the proxy resolves what is allowed).
    "network.dns.disablePrefetch": True,
    "network.dns.disablePrefetchFromHTTPS": True,
}

#: Firefox's own pages: ``about:`` pages other than these, and its internal schemes. about:config
#: would let a page-driven agent change the browser's preferences (the proxy's among them).
_HARMLESS_ABOUT = ("about:blank", "about:srcdoc")
_FIREFOX_SCHEMES = ("resource", "moz-extension", "moz-icon", "jar", "moz-page-thumb", "moz-safe-about")
#: Redirect hops remembered (request id -> the URL of its latest hop).
_HOPS_KEPT = 500


class BidiPolicy(OriginPolicy):
    def __init__(self, allowed: list[str], blocked: list[str], allow_file_urls: bool,
                 allow_internal_pages: bool = False) -> None:
        super().__init__(allowed, blocked, allow_file_urls, allow_internal_pages)
        self._hops: OrderedDict[str, str] = OrderedDict()

    def check_navigation(self, url: str) -> str | None:
        scheme = url.strip().partition(":")[0].lower()
        firefox_own = (scheme == "about" and not url.strip().lower().startswith(_HARMLESS_ABOUT)) or \
            scheme in _FIREFOX_SCHEMES
        if firefox_own and not self.allow_internal_pages:
            return (f"refused because {scheme}: pages are Firefox's own (about:config changes the browser's settings, "
                    "which other conversations may share). Stay on web pages; if you truly need one, the user can "
                    "set allow_internal_pages = true in the config (or WEBHAND_ALLOW_INTERNAL_PAGES=true)")
        return super().check_navigation(url)

    def refuses(self, owner: Any, params: dict[str, Any]) -> bool:
        """Whether the paused request of a ``network.beforeRequestSent`` event must fail; the refusal
        is logged for ``owner`` (the session's context; None for a request of no known tab, such
        as a service worker's). A refused redirect hop is named as its redirect's."""
        request = params.get("request") or {}
        request_id, url, method = request.get("request", ""), request.get("url", ""), request.get("method", "GET")
        earlier = self._hops.pop(request_id, None) if params.get("redirectCount") else None
        self._hops[request_id] = url
        while len(self._hops) > _HOPS_KEPT:
            self._hops.popitem(last=False)
        reason = self.check(url) if self.active else self.own_endpoint_refusal(url)
        if not reason:
            return False
        if earlier is not None and earlier != url:
            self._remember(earlier, f"its redirect to {url} was {reason}")
            self._remember(url, reason)
            if owner is not None:
                self.log_for(owner).add(method, earlier, f"its redirect to {url} was {reason}")
        elif owner is not None:
            self.log_for(owner).add(method, url, reason)
        return True

    def forget(self, request_id: str) -> None:
        """The request ended: its hops need not be remembered."""
        self._hops.pop(request_id, None)


class TabPolicy:
    """What one tab asks of the policy around its navigations (the shared rules of engine/policy.py)."""

    def __init__(self, policy: BidiPolicy | None, refusals: RefusalLog | None) -> None:
        self.policy = policy
        self.refusals = refusals
        self._refusals_before = 0

    def before_navigation(self, url: str) -> None:
        """Refuse ``url`` before anything loads when the policy does."""
        self._refusals_before = before_navigation(self.policy, url, self.refusals)

    def navigation_refused(self, url: str, error_text: str) -> PolicyRefused | None:
        """The refusal behind a failed navigation, if that is what it was. A request the request
        layer failed (``network.failRequest``) fails its navigation with NS_ERROR_ABORT."""
        if "NS_ERROR_ABORT" in error_text or "ERR_BLOCKED_BY_CLIENT" in error_text:
            error_text = "net::ERR_BLOCKED_BY_CLIENT"
        elif self.policy is not None and self.policy.refusal(url):
            # The policy proxy closed the connection on it (its host resolves to a refused
            # address): before_navigation let the URL through, so the refusal is the proxy's.
            error_text = "net::ERR_BLOCKED_BY_CLIENT"
        return navigation_refusal(self.policy, url, error_text, self.refusals, self._refusals_before)

    def response_refused(self, url: str, headers: dict[str, str]) -> PolicyRefused | None:
        """The policy proxy answered the document in the server's place (its 403, on record)."""
        reason = self.policy.refused_response(url, headers) if self.policy is not None and headers else None
        return refused_navigation(url, reason) if reason else None
