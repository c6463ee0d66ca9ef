"""What may cross the extension bridge to a tab a person shared (relay.py): the DevTools methods
forwarded, where a shared tab may be sent, and which cookies are the shared tabs' to read and change.

A shared tab lives in the person's own browser, signed in everywhere: the bridge hands webhand that
tab's web pages, not the browser. So a navigation goes only to an http(s) page the origin rules
allow (never the browser's own pages, an extension's, a file or a data URL), and the cookies read,
set or deleted are only those the shared tabs' hosts receive: the host's own and its parent
domains' (browsers refuse cookies on public suffixes, so no list of those is needed).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from webhand.errors import PolicyRefused
from webhand.security.origins import OriginRules

#: The CDP methods webhand's driver sends on a tab's sessions; the bridge forwards no other (a
#: method is added here when the driver starts using it through the extension).
TAB_METHODS = frozenset("""
DOM.getFrameOwner DOM.resolveNode DOM.setFileInputFiles
Emulation.setDeviceMetricsOverride Emulation.setFocusEmulationEnabled Emulation.setLocaleOverride
Emulation.setUserAgentOverride
Fetch.continueRequest Fetch.disable Fetch.enable Fetch.failRequest Fetch.fulfillRequest
Input.dispatchDragEvent Input.dispatchKeyEvent Input.dispatchMouseEvent Input.insertText Input.setInterceptDrags
Inspector.enable
Network.deleteCookies Network.emulateNetworkConditions Network.enable Network.getAllCookies Network.getCookies
Network.getRequestPostData Network.getResponseBody Network.setCacheDisabled Network.setCookies
Network.setExtraHTTPHeaders
Page.addScriptToEvaluateOnNewDocument Page.bringToFront Page.captureScreenshot Page.enable Page.getFrameTree
Page.getLayoutMetrics Page.getNavigationHistory Page.handleJavaScriptDialog Page.navigate
Page.navigateToHistoryEntry Page.printToPDF Page.reload Page.screencastFrameAck Page.setInterceptFileChooserDialog
Page.setLifecycleEventsEnabled Page.startScreencast Page.stopLoading Page.stopScreencast
Performance.enable Performance.getMetrics
Runtime.awaitPromise Runtime.callFunctionOn Runtime.enable Runtime.evaluate Runtime.releaseObject
Runtime.runIfWaitingForDebugger Runtime.terminateExecution
ServiceWorker.enable ServiceWorker.skipWaiting ServiceWorker.unregister ServiceWorker.updateRegistration
Storage.getCookies Storage.setCookies
Target.getTargetInfo Target.setAutoAttach
""".split())
COOKIE_READS = frozenset({"Network.getAllCookies", "Network.getCookies", "Storage.getCookies"})
COOKIE_CHANGES = frozenset({"Network.setCookies", "Storage.setCookies", "Network.deleteCookies"})
_WEB_SCHEMES = ("http", "https")


def check_navigation(url: str, rules: OriginRules | None) -> None:
    """Raise PolicyRefused unless ``url`` is an http(s) page the origin rules allow."""
    if url.partition(":")[0].lower() not in _WEB_SCHEMES:
        raise PolicyRefused(f"Navigation to {url[:200]} is refused: through the browser extension webhand opens only "
                            "web pages (http, https) in the tabs you shared, never the browser's own pages, "
                            "extensions, local files or data URLs.", "Open an http:// or https:// URL.")
    reason = rules.check_navigation(url) if rules is not None else None
    if reason:
        raise PolicyRefused(f"Navigation to {url[:200]} is {reason}.",
                            "Stay on allowed sites, or ask the user to change the origin policy.")


def hosts_of(urls: list[str]) -> set[str]:
    """The hosts of the web pages among ``urls``."""
    hosts = set()
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in _WEB_SCHEMES and parts.hostname:
            hosts.add(parts.hostname.lower())
    return hosts


def shared_sites_cookies(found: object, hosts: set[str]) -> list[dict[str, Any]]:
    """Of the cookies the browser answered with, those the shared tabs' ``hosts`` receive."""
    if not isinstance(found, list):
        return []
    return [cookie for cookie in found if isinstance(cookie, dict) and _sent_to(cookie.get("domain"), hosts)]


def check_cookie_change(method: str, params: dict[str, Any], hosts: set[str]) -> None:
    """Raise unless every cookie a set or delete names is one the shared tabs' ``hosts`` receive
    (a delete by name alone would reach every site)."""
    cookies = params.get("cookies") if method != "Network.deleteCookies" else [params]
    for cookie in cookies if isinstance(cookies, list) else [None]:
        domain = None
        if isinstance(cookie, dict):
            domain = cookie.get("domain") or urlsplit(str(cookie.get("url", ""))).hostname
        if not _sent_to(domain, hosts):
            raise PolicyRefused(f"Cookies of {str(domain)[:100]} are not the shared tabs' to change: through the "
                                "browser extension webhand reads and writes only the cookies of the sites your "
                                f"shared tabs show ({', '.join(sorted(hosts)) or 'none'}).",
                                "Name a cookie of a shared tab's site, with its domain (browser_cookies lists them).")


def why_lost(reason: str, url: str) -> str | None:
    """What happened to a shared tab, from the reason the extension gave when it let go of it."""
    if reason == "left_the_web":
        return (f"the shared tab went to {url or 'a page'}, which is not a web page (http, https), so the extension "
                "stopped sharing it: webhand drives only web pages in your Chrome")
    return {"stopped_sharing": "the person chose Stop sharing in the shared tab",
            "canceled_by_user": "the person closed Chrome's debugging bar of the shared tab",
            "tab_closed": "the shared tab was closed",
            "target_closed": "the shared tab closed, or went to a page Chrome lets no extension debug"}.get(reason)


def _sent_to(domain: object, hosts: set[str]) -> bool:
    """Whether a cookie of ``domain`` is one the browser sends to one of ``hosts``: the host itself,
    or a domain it is under."""
    if not isinstance(domain, str) or not domain:
        return False
    domain = domain.lstrip(".").lower()
    return any(host == domain or host.endswith("." + domain) for host in hosts)
