"""What a failed navigation's network error means, in words a model can act on (every driver)."""

from __future__ import annotations

import re

from webhand.errors import NavigationFailed


def net_failure(text: str, url: str) -> NavigationFailed | None:
    """The NavigationFailed for a browser error text naming a ``net::ERR_*`` code or an invalid URL."""
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
    return None
