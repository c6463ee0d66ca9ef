"""What a failed navigation's network error means, in words a model can act on (every driver)."""

from __future__ import annotations

import re

from webhand.errors import NavigationFailed


#: Firefox's names (NS_ERROR_*) of the network errors Chromium names net::ERR_*.
FIREFOX_CODES = {
    "NS_ERROR_CONNECTION_REFUSED": "ERR_CONNECTION_REFUSED",
    "NS_ERROR_UNKNOWN_HOST": "ERR_NAME_NOT_RESOLVED",
    "NS_ERROR_OFFLINE": "ERR_INTERNET_DISCONNECTED",
    "NS_ERROR_NET_RESET": "ERR_CONNECTION_RESET",
    "NS_ERROR_NET_INTERRUPT": "ERR_CONNECTION_RESET",
    "NS_ERROR_NET_TIMEOUT": "ERR_TIMED_OUT",
    "NS_ERROR_NET_EMPTY_RESPONSE": "ERR_EMPTY_RESPONSE",
}


def net_failure(text: str, url: str) -> NavigationFailed | None:
    """The NavigationFailed for a browser error text naming a ``net::ERR_*`` code (or Firefox's
    NS_ERROR_* name of one) or an invalid URL."""
    net = re.search(r"net::(ERR_[A-Z_]+)", text)
    firefox = re.search(r"\b(NS_ERROR_[A-Z_]+)", text)
    if firefox and firefox.group(1) == "NS_ERROR_MALFORMED_URI":
        return NavigationFailed(f"'{url}' is not a valid URL.", "Give a full URL such as https://example.com/path.")
    if firefox and firefox.group(1) in FIREFOX_CODES:
        code = FIREFOX_CODES[firefox.group(1)]
        return NavigationFailed(f"Navigation to {url} failed: {_why(code)} ({code}; Firefox: {firefox.group(1)}).",
                                "Check the URL (scheme, host, port) and that the server is up, then call browser_navigate again.")
    if net:
        code = net.group(1)
        why = _why(code)
        return NavigationFailed(f"Navigation to {url} failed: {why} ({code}).",
                                "Check the URL (scheme, host, port) and that the server is up, then call browser_navigate again.")
    if "invalid url" in text.lower() or "cannot navigate to invalid url" in text.lower():
        return NavigationFailed(f"'{url}' is not a valid URL.", "Give a full URL such as https://example.com/path.")
    return None


_WHY = {
    "ERR_CONNECTION_REFUSED": "the connection was refused (nothing listens there)",
    "ERR_NAME_NOT_RESOLVED": "the host name could not be resolved",
    "ERR_ADDRESS_UNREACHABLE": "the address is unreachable",
    "ERR_INTERNET_DISCONNECTED": "there is no network",
    "ERR_CONNECTION_RESET": "the connection was reset",
    "ERR_EMPTY_RESPONSE": "the server closed the connection without a response",
    "ERR_CERT_AUTHORITY_INVALID": "the TLS certificate is not trusted",
    "ERR_BLOCKED_BY_CLIENT": "webhand's origin policy blocked it",
}


def _why(code: str) -> str:
    return _WHY.get(code, code)
