"""The crafted storage-state table: files a page could offer as a download, loaded as a saved login.

A storage-state file is input from anywhere. Each row is one crafted file and the words its
refusal must say (the field, and the file's name): nesting that breaks a recursive parser, fields
of the wrong type, more entries than a browser takes in a moment (all under the 16 MB cap), origins
that are not web origins (they would be opened to write their localStorage). A row passes when the
load is refused with a FileNotReadable naming the file and the field, never "webhand bug"; after the
table, a file at the limits loads through the driver and the tab still answers at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from helpers import ok

_COOKIE = {"name": "member", "value": "opensesame", "domain": "127.0.0.1", "path": "/", "expires": -1,
           "httpOnly": False, "secure": False, "sameSite": "Lax"}


def _state(**fields: object) -> str:
    return json.dumps({"cookies": [], "origins": [], **fields})


def _cookie(**changed: object) -> str:
    return _state(cookies=[{**_COOKIE, **changed}])


def _compact_cookies(count: int) -> str:  # 150,000 of them in 6 MB, well under the 16 MB cap
    return json.dumps({"cookies": [{"name": f"c{n}", "value": "v", "domain": "127.0.0.1"} for n in range(count)]},
                      separators=(",", ":"))


#: (row name, the file's text, words the refusal says)
ROWS: list[tuple[str, Callable[[], str], list[str]]] = [
    ("lists nested 100,000 deep", lambda: "[" * 100_000 + "]" * 100_000, ["nest deeper than 16 levels"]),
    ("objects nested 100,000 deep", lambda: '{"cookies":' + '{"a":' * 100_000 + "1" + "}" * 100_001,
     ["nest deeper than 16 levels"]),
    ("100,000 brackets never closed", lambda: "[" * 100_000, ["brackets do not match"]),
    ("expires a word", lambda: _cookie(expires="soon"), ["cookies[0].expires must be a number", "not a string"]),
    ("expires NaN", lambda: _cookie(expires=float("nan")), ["cookies[0].expires must be a number"]),
    ("expires 400 digits", lambda: _cookie(expires=10 ** 400), ["cookies[0].expires must be a number"]),
    ("sameSite unknown", lambda: _cookie(sameSite="Bogus"), ['cookies[0].sameSite must be "Strict", "Lax" or "None"']),
    ("httpOnly a word", lambda: _cookie(httpOnly="yes"), ["cookies[0].httpOnly must be true or false", "not a string"]),
    ("secure a number", lambda: _cookie(secure=1), ["cookies[0].secure must be true or false", "not a number"]),
    ("name missing", lambda: _state(cookies=[{"value": "x", "domain": "127.0.0.1"}]), ["cookies[0].name is missing"]),
    ("domain empty", lambda: _cookie(domain=""), ["cookies[0].domain must be a non-empty string"]),
    ("cookie a string", lambda: _state(cookies=["member=opensesame"]), ["cookies[0] must be an object, not a string"]),
    ("cookies an object", lambda: _state(cookies={"member": "x"}), ["cookies must be a list, not an object"]),
    ("150,000 cookies", lambda: _compact_cookies(150_000), ["150,000 entries in cookies", "at most 3,000"]),
    ("5,000 origins", lambda: _state(origins=[{"origin": f"http://o{n}.test", "localStorage": []} for n in range(5000)]),
     ["5,000 entries in origins", "at most 1,000"]),
    ("20,000 items in one origin", lambda: _state(origins=[{"origin": "http://127.0.0.1", "localStorage": [
        {"name": f"k{n}", "value": "v"} for n in range(20_000)]}]), ["origins[0].localStorage", "at most 10,000"]),
    ("a file: origin", lambda: _state(origins=[{"origin": "file:///etc", "localStorage": []}]),
     ["origins[0].origin must be an http(s) origin"]),
    ("a chrome: origin", lambda: _state(origins=[{"origin": "chrome://settings", "localStorage": []}]),
     ["origins[0].origin must be an http(s) origin"]),
    ("an origin with a path", lambda: _state(origins=[{"origin": "http://127.0.0.1/login?x=1", "localStorage": []}]),
     ["origins[0].origin must be an http(s) origin"]),
    ("an item's value a number", lambda: _state(origins=[{"origin": "http://127.0.0.1", "localStorage": [
        {"name": "k", "value": 7}]}]), ["origins[0].localStorage[0].value must be a string, not a number"]),
    ("a list at the top", lambda: "[]", ["must be an object with `cookies` and `origins` lists, not a list"]),
    ("not UTF-8", lambda: '{"cookies": "\udcff"}', ["not a readable JSON file"]),
]


async def test_crafted_storage_states_are_refused_naming_the_field_and_the_tab_stays_responsive(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tabs_files/child.html")})
    tools.files.ensure()
    failures = []
    for number, (name, text, words) in enumerate(ROWS):
        path = tools.files.folder / f"crafted-{number}.json"
        content = text().encode(errors="surrogateescape")
        path.write_bytes(content)
        # Both ways a model loads one (into the open session, into a new named session), the big
        # files (a second each to refuse) one way.
        attempts = [("browser_storage_state", {"action": "load", "path": path.name})]
        if len(content) < 1_000_000:
            attempts.append(("browser_session_create", {"name": f"crafted-{number}", "storage_state": path.name}))
        for call, args in attempts:
            reply = await tools.call(call, args)
            said = reply.text
            missing = [w for w in [*words, path.name] if w not in said]
            if not reply.is_error or missing or "webhand bug" in said or "Traceback" in said:
                failures.append(f"{name} ({call}): missing {missing} in {said[:300]!r}")
    assert not failures, f"{len(failures)} attempts failed:\n" + "\n".join(failures)
    print(f"\ncrafted storage states: {len(ROWS)} files, each refused")

    # At the limits, a file loads through the driver, and the tab answers right after.
    at_limit = tools.files.folder / "at-the-limit.json"
    at_limit.write_text(json.dumps({"cookies": [{**_COOKIE, "name": f"c{n}"} for n in range(2999)] + [_COOKIE],
                                    "origins": [{"origin": site.origin, "localStorage": [
                                        {"name": f"k{n}", "value": "v"} for n in range(100)]}]}))
    ok(await tools.call("browser_storage_state", {"action": "load", "path": at_limit.name}))
    assert "Title: Members" in ok(await tools.call("browser_navigate", {"url": site.url("members")}))
    assert ok(await tools.call("browser_eval", {"expression": "localStorage.length"})).strip().endswith("100")
