"""Host names as a browser reads them, so that an origin rule cannot be dodged by spelling.

``http://0x7f.1/``, ``http://2130706433/``, ``http://LOCALHOST./`` and ``http://[::ffff:7f00:1]/``
all reach 127.0.0.1. Chromium parses hosts by the WHATWG URL standard; ``normalize_host`` does
the same (percent-decoding, UTS 46 mapping and IDNA, the IPv4 number forms, IPv6) and then goes
one step further than the browser: it drops trailing dots and writes IPv4-mapped IPv6 addresses
as IPv4, because those reach the same server too. Rules and request URLs both go through it.

``same_place`` then says which spellings reach the same machine without any lookup: ``localhost``
(and ``*.localhost``, which Chromium resolves itself) is every loopback address, and the
unspecified address (0.0.0.0, ::) connects to this machine as well.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote

import idna

LOCALHOST = "localhost"
# WHATWG "forbidden domain code points": a host holding one is not a host at all.
_FORBIDDEN = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
_IPV4_PART = re.compile(r"^(0[xX][0-9a-fA-F]*|[0-9]+)$")


class InvalidHost(ValueError):
    """The text is not a host a browser would connect to."""


def normalize_host(raw: str) -> str:
    """The canonical text of ``raw``: lowercase ASCII (punycode), no trailing dot, IPv4 dotted,
    IPv6 compressed in brackets. Raises ``InvalidHost`` for what a browser refuses as a host."""
    text = raw.strip()
    if text.startswith("[") or (":" in text and not text.endswith("]")):  # IPv6, with or without brackets
        return _ipv6(text[1:-1] if text.startswith("[") and text.endswith("]") else text, raw)
    try:
        text = unquote(text, errors="strict")
    except UnicodeDecodeError:
        raise InvalidHost(f"{raw!r} is not a valid host name (bad percent-encoding)") from None
    domain = _to_ascii(text, raw)
    if _FORBIDDEN.search(domain):
        raise InvalidHost(f"{raw!r} is not a valid host name (it holds a character hosts may not)")
    labels = domain.split(".")
    while len(labels) > 1 and labels[-1] == "":
        labels.pop()  # trailing dots: "localhost." is "localhost"
    if labels == [""]:
        raise InvalidHost("the host is empty")
    if _IPV4_PART.match(labels[-1]):  # "ends in a number": the browser reads it as IPv4 or refuses it
        return _ipv4(labels, raw)
    return ".".join(labels)


def is_ip(host: str) -> bool:
    """Whether a normalized host is an IP address."""
    return host.startswith("[") or bool(re.fullmatch(r"[0-9.]+", host))


def address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address of a normalized host, or None for a host name."""
    if not is_ip(host):
        return None
    return ipaddress.ip_address(host.strip("[]"))


def is_loopback(host: str) -> bool:
    """Whether a normalized host reaches this machine: a localhost name, a loopback address, or
    the unspecified address (connecting to 0.0.0.0 or :: lands on this machine)."""
    if host == LOCALHOST or host.endswith("." + LOCALHOST):
        return True
    ip = address(host)
    return ip is not None and (ip.is_loopback or ip.is_unspecified)


def same_place(host: str) -> set[str]:
    """The spellings of ``host`` that reach the same server without a DNS lookup.

    A localhost name is 127.0.0.1 and [::1]; 0.0.0.0 is 127.0.0.1 and :: is [::1]; every
    loopback host also answers to the name ``localhost``, so that a ``localhost`` rule covers them.
    """
    places = {host}
    if host == LOCALHOST or host.endswith("." + LOCALHOST):
        places |= {LOCALHOST, "127.0.0.1", "[::1]"}
    elif is_loopback(host):
        places.add(LOCALHOST)
        if host == "0.0.0.0":
            places.add("127.0.0.1")
        elif host == "[::]":
            places.add("[::1]")
    return places


# ---------------------------------------------------------------------------------------------


def _to_ascii(text: str, raw: str) -> str:
    """UTS 46 mapping (case, full-width forms, ideographic dots) and IDNA, label by label."""
    if text.isascii():
        return text.lower()
    try:
        mapped = idna.uts46_remap(text, std3_rules=False, transitional=False)
    except idna.IDNAError as error:
        raise InvalidHost(f"{raw!r} is not a valid host name ({error})") from None
    labels = []
    for label in mapped.split("."):
        if label.isascii():
            labels.append(label.lower())
            continue
        try:
            labels.append(idna.alabel(label).decode("ascii"))
        except idna.IDNAError:
            try:  # IDNA 2003, which browsers still accept for a few symbols IDNA 2008 refuses
                labels.append(label.encode("idna").decode("ascii"))
            except UnicodeError:
                raise InvalidHost(f"{raw!r} is not a valid host name (its label {label!r} has no ASCII form)") from None
    return ".".join(labels)


def _ipv4(labels: list[str], raw: str) -> str:
    """The WHATWG IPv4 parser: 1 to 4 parts, each decimal, 0x-hex or 0-octal; the last part
    fills the remaining bytes (so 127.1 is 127.0.0.1 and 2130706433 is too)."""
    if len(labels) > 4:
        raise InvalidHost(f"{raw!r} is not a valid IPv4 address (more than four parts)")
    numbers = []
    for part in labels:
        if not _IPV4_PART.match(part):
            raise InvalidHost(f"{raw!r} is not a valid host: it ends in a number but is not an IPv4 address")
        if part[:2].lower() == "0x":
            numbers.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            if not re.fullmatch(r"[0-7]+", part):
                raise InvalidHost(f"{raw!r} is not a valid IPv4 address ({part} is not octal)")
            numbers.append(int(part, 8))
        else:
            numbers.append(int(part))
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 256 ** (5 - len(numbers)):
        raise InvalidHost(f"{raw!r} is not a valid IPv4 address (a part is out of range)")
    value = last
    for index, number in enumerate(leading):
        value += number << (8 * (3 - index))
    return str(ipaddress.IPv4Address(value))


def _ipv6(text: str, raw: str) -> str:
    if "%" in text:
        raise InvalidHost(f"{raw!r} is not a valid host: browsers do not take IPv6 zone ids")
    try:
        ip = ipaddress.IPv6Address(text)
    except ValueError:
        raise InvalidHost(f"{raw!r} is not a valid IPv6 address") from None
    if ip.ipv4_mapped is not None:  # ::ffff:127.0.0.1 is 127.0.0.1 on a dual-stack socket
        return str(ip.ipv4_mapped)
    return f"[{ip.compressed}]"
