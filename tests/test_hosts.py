"""Hosts are read the way the browser reads them, so that no spelling slips past an origin rule."""

from __future__ import annotations

import ipaddress

import pytest

from webhand import Settings
from webhand.errors import ConfigError
from webhand.security.host_names import InvalidHost, normalize_host
from webhand.security.origins import OriginRule, OriginRules

pytestmark = pytest.mark.one_driver("Chromium's own URL parser is the judge, the same under either driver")

# raw host -> what it reaches (None: not a host the browser would connect to)
SPELLINGS = [
    ("localhost.", "localhost"),
    ("LOCALHOST", "localhost"),
    ("127.1", "127.0.0.1"),
    ("0x7f.0.0.1", "127.0.0.1"),
    ("0x7f.1", "127.0.0.1"),
    ("2130706433", "127.0.0.1"),
    ("0177.0.0.1", "127.0.0.1"),
    ("127.0.0.1.", "127.0.0.1"),
    ("127.0.0.%31", "127.0.0.1"),
    ("１２７．０．０．１", "127.0.0.1"),
    ("0", "0.0.0.0"),
    ("[::1]", "[::1]"),
    ("[0:0:0:0:0:0:0:1]", "[::1]"),
    ("[::ffff:127.0.0.1]", "127.0.0.1"),
    ("[::ffff:7f00:1]", "127.0.0.1"),
    ("Bücher.DE", "xn--bcher-kva.de"),
    ("ＥＸＡＭＰＬＥ。com", "example.com"),
    ("a_b.example", "a_b.example"),
    ("1.2.3.foo", "1.2.3.foo"),
    ("256.0.0.1", None),
    ("0x100000000", None),
    ("foo.123", None),
    ("09.0.0.1", None),
    ("ex ample.com", None),
]


@pytest.mark.parametrize("raw, reached", SPELLINGS)
def test_a_host_is_normalized_to_what_it_reaches(raw, reached):
    if reached is None:
        with pytest.raises(InvalidHost):
            normalize_host(raw)
    else:
        assert normalize_host(raw) == reached


async def test_normalizing_agrees_with_chromiums_own_url_parser(tools, site):
    """Chromium's URL parser decides where a request goes; where we read a host, we must read the
    one Chromium connects to. We go two steps further, on purpose: no trailing dot, and
    IPv4-mapped IPv6 written as IPv4. A host we refuse to read is refused by the policy (Chromium
    lets a few such hosts through, like "ex%20ample.com", which no DNS answers): the safe side."""
    await tools.call("browser_navigate", {"url": site.url("actions/nav.html")})
    raws = [raw for raw, _ in SPELLINGS]
    reply = await tools.call("browser_eval", {"expression": f"""{raws!r}.map(raw => {{
        try {{ return new URL("http://" + raw + "/").hostname; }} catch (e) {{ return null; }} }})"""})
    for (raw, reached), chromium in zip(SPELLINGS, reply.data["result"]):
        if reached is None:
            continue
        assert chromium is not None, f"Chromium refuses {raw!r}, which we read as {reached!r}"
        expected = chromium.rstrip(".")
        if expected.startswith("[") and ipaddress.IPv6Address(expected[1:-1]).ipv4_mapped:
            expected = str(ipaddress.IPv6Address(expected[1:-1]).ipv4_mapped)
        assert normalize_host(raw) == expected, f"{raw!r}: Chromium reads {chromium!r}"


@pytest.mark.parametrize("url", [
    "http://localhost.:8000/", "http://LOCALHOST:8000/", "http://127.1:8000/", "http://0x7f.0.0.1:8000/",
    "http://2130706433:8000/", "http://0177.0.0.1:8000/", "http://[::ffff:127.0.0.1]:8000/", "http://0.0.0.0:8000/",
    "http://probe.localhost:8000/", "ws://localhost.:8000/socket?q=secret", "view-source:http://127.1:8000/",
    "http:127.0.0.1:8000/", "http:\\\\127.0.0.1:8000\\", "http://ok.example@127.0.0.1:8000/",
])
def test_every_spelling_of_a_blocked_host_is_refused(url):
    reason = OriginRules([], ["localhost:8000"], False).check(url)
    assert reason and "blocked_origins rule 'localhost:8000'" in reason


@pytest.mark.parametrize("rule, url", [
    ("LOCALHOST.", "http://localhost/"),
    ("127.1", "http://127.0.0.1/"),
    ("[::FFFF:127.0.0.1]:8000", "http://127.0.0.1:8000/"),
    ("https://Bücher.de", "https://xn--bcher-kva.de/"),
    ("wss://example.com", "https://example.com/"),
    ("https://example.com", "wss://example.com/socket"),
])
def test_rules_are_normalized_like_urls(rule, url):
    assert "blocked_origins rule" in OriginRules([], [rule], False).check(url)


def test_a_localhost_rule_does_not_cover_other_hosts():
    rules = OriginRules([], ["localhost"], False)
    assert rules.check("http://example.com/") is None
    assert rules.check("http://10.0.0.1/") is None


@pytest.mark.parametrize("rule, problem", [
    ("exa mple.com", "not a valid host name"),
    ("ftp://example.com", "not one of http, https, ws, wss"),
    ("https://example.com/path", "without a path"),
    ("example.com:99999", "port must be a number"),
    ("*", "give a host"),
    ("*.127.0.0.1", "not an IP address"),
    ("::1", "in brackets"),
])
def test_a_rule_that_does_not_parse_is_refused_with_what_is_wrong(rule, problem):
    with pytest.raises(ValueError, match=problem):
        OriginRule(rule)
    with pytest.raises(ConfigError, match=problem):
        Settings.from_sources({"blocked_origins": [rule]}, env={})


def test_a_policy_on_a_browser_webhand_did_not_launch_is_refused():
    with pytest.raises(ConfigError, match="cannot be enforced on a browser webhand connects to"):
        Settings.from_sources({"cdp_url": "http://127.0.0.1:9222", "allowed_origins": ["example.com"]}, env={})
