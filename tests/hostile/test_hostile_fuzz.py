"""The fuzzer: over a thousand random and malformed tool calls over MCP stdio, with a fixed seed.

A careless or hostile model sends anything: unknown tools, missing fields, wrong types, huge and
strange strings, negative numbers, refs and selectors that name nothing, nested junk. The server
(``python -m webhand mcp``, driven by the official MCP client) must stay up, answer every call
within the call's timeout plus the host's margin, and never answer with an "unexpected" failure,
a Python repr or a traceback: every refusal is a typed error that says what to do.

Every URL it may open is on 127.0.0.1 (the allowed origins refuse anything else before a DNS
lookup), and JavaScript it evaluates neither loops forever nor reaches the network.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import sys
import time
from collections import Counter

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from helpers import browsers_of_child_processes, wait_until_gone_async

SEED = 20261122
CALLS = 850  # with the separate tools
SINGLE_TOOL_CALLS = 200  # with the single browser tool
DEFAULT_TIMEOUT = 3.0  # WEBHAND_TIMEOUT of the server under test
HOST_MARGIN = 10.0  # what host.py allows a call beyond its own timeout
SLACK = 5.0  # a loaded machine's scheduling, on top of both
BAD_REPLY = re.compile(r"unexpected|object at 0x|Traceback \(most recent call last\)|File \"[^\"]+\", line \d+",
                       re.IGNORECASE)
# A syntax error of the model's JavaScript or CSS is quoted as the engine words it ("Unexpected
# token '('"): the model needs those words to fix its input, and they are no failure of webhand's.
ENGINE_SYNTAX = re.compile(r"(?:Invalid or )?unexpected (?:token|identifier|end of input|string|number|template string"
                           r"|(?:strict mode )?reserved word)", re.IGNORECASE)

PAGES = ["login.html", "actions/form.html", "actions/clicks.html", "actions/typing.html", "snapshot/controls.html",
         "snapshot/shadow.html", "tabs_files/tabs.html", "tabs_files/dialogs.html", "tabs_files/upload.html",
         "network.html", "tall.html", "status/404", "redirect?to=/login.html", "slow?ms=200"]
STRANGE = ["", " ", "\t\n", "\x00", "\x1b[31m", "é", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🙂", "\u202eRTL", "null", "undefined", "NaN",
           "<script>alert(1)</script>", "' OR 1=1 --", "%s%n%x", "{{7*7}}", "${7*7}", "../../../../etc/passwd",
           "\\\\server\\share", "a" * 5000, "ß" * 3000]
HUGE = ["x" * 100_000, "🙂" * 30_000]
NUMBERS = [0, -1, -2**31, 2**31, 2**63, 10**30, 0.5, -0.0001, 1e300, -1e300, 3]
JUNK = [None, True, False, [], {}, [None, [None]], {"a": {"b": [1, {"c": None}]}}, *NUMBERS[:4], *STRANGE[:6]]
SELECTORS = ["#user", "#pass", "button", "input", "a", "body", "h1", "select", "[[[", ">>>", "xpath=//[", "text=",
             "css=", "#", ":has(", "div >>> span", "internal:role=button", "nth=0", "*:not(*)", "#does-not-exist",
             "iframe >> nth=99"]
BAD_REFS = ["e0", "e999999", "f99e1", "E1", "e-1", "ref", "e1e1", "f1", "e" + "9" * 60, "f0e0", "🙂"]
KEYS = ["Enter", "Tab", "a", "Control+A", "Shift+Tab", "ArrowDown", "Escape", "NotAKey", "Control+", "+", "🙂",
        "Ctrl+Alt+Del", "a" * 300, "Shift+Shift+Shift", "F13"]
SCRIPTS = ["1+1", "document.title", "throw new Error('boom')", "Promise.reject(new Error('no'))",
           "new Promise(() => {})",
           "window", "document.body", "Symbol('s')", "10n ** 40n", "(() => { const a = {}; a.a = a; return a })()",
           "undefined", "NaN", "-0", "new Date(0)", "new Map([[1, 2]])", "alert('hi')", "confirm('ok?')",
           "location.href = 'about:blank'", "syntax error (", "", "await 1", "return 5", "[...Array(5000).keys()]",
           "'x'.repeat(200000)", "document.querySelectorAll('*')", "new Error('e')", "() => 1", "null", "'\\ud800'"]
PATHS = ["", ".", "..", "/", "/etc/shadow", "~/x.json", "../../../../etc/passwd", "a" * 5000, "x/" * 3000, "\x00",
         "state.json", "out.pdf", "shot.png", "nope/nested/file.json", "/proc/self/environ", "é🙂.json"]


def call_limit(arguments: object) -> float:
    """How long a call may take: its own timeout (or the server's default) plus the host's margin."""
    own = DEFAULT_TIMEOUT
    if isinstance(arguments, dict):
        for field in ("timeout", "time"):
            value = arguments.get(field)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 600:
                own = max(own, value) if field == "timeout" else own + value
    return own + HOST_MARGIN + SLACK


class Fuzzer:
    def __init__(self, seed: int, site, other_site, tools: dict[str, dict]) -> None:
        self.rng = random.Random(seed)
        self.site, self.other_site = site, other_site
        self.tools = tools
        self.refs: list[str] = []

    def url(self) -> str:
        choice = self.rng.random()
        if choice < 0.7:
            return self.rng.choice([self.site, self.other_site]).url(self.rng.choice(PAGES))
        return self.rng.choice(["about:blank", "data:text/html,<h1>hi</h1><input id=user>", "javascript:alert(1)",
                                "file:///etc/passwd", "http://127.0.0.1:1/", "ftp://127.0.0.1/", "chrome://version",
                                "http://[::1", "::::", "%%%", "http://127.0.0.1:99999/",
                                "view-source:" + self.site.url(),
                                self.site.url("login.html") + "#" + "x" * 5000, *STRANGE[:4]])

    def string_for(self, field: str) -> object:
        rng = self.rng
        if rng.random() < 0.12:
            return rng.choice(STRANGE + JUNK + (HUGE if rng.random() < 0.1 else []))
        if field in ("url", "to"):
            return self.url()
        if field in ("ref", "to_ref", "scope"):
            return rng.choice(self.refs) if self.refs and rng.random() < 0.6 else rng.choice(BAD_REFS + SELECTORS[:3])
        if field in ("selector", "to_selector"):
            return rng.choice(SELECTORS)
        if field == "key":
            return rng.choice(KEYS)
        if field in ("expression", "javascript"):
            return rng.choice(SCRIPTS)
        if field in ("path", "storage_state"):
            return rng.choice(PATHS)
        if field in ("session", "name"):
            return rng.choice(["work", "a.b-c_d", "default", "", "../x", "🙂", "x" * 300])
        return rng.choice(["hello", "Sign in", "<secret>PASSWORD</secret>", "<secret>NOPE</secret>", "e1",
                           *STRANGE[:8]])

    def value(self, field: str, schema: dict, depth: int = 0) -> object:
        rng = self.rng
        if depth > 3 or rng.random() < 0.08:
            return rng.choice(JUNK)
        if "enum" in schema:
            return rng.choice(schema["enum"]) if rng.random() < 0.85 else rng.choice(["", "LIST", "nope", 1])
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = rng.choice(kind)
        if "anyOf" in schema:
            return self.value(field, rng.choice(schema["anyOf"]), depth + 1)
        if field in ("timeout", "time"):
            return rng.choice([0.2, 0.5, 0, -5, 601, 1e9, "soon"])
        if kind == "string":
            return self.string_for(field)
        if kind in ("integer", "number"):
            return rng.choice(NUMBERS + [1, 2, 5, 100, 800])
        if kind == "boolean":
            return rng.choice([True, False]) if rng.random() < 0.9 else rng.choice(["yes", 1, None])
        if kind == "array":
            items = schema.get("items", {})
            return [self.value(field, items, depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3, 40]))]
        if kind == "object":
            return self.arguments(schema, depth + 1)
        return rng.choice(JUNK)

    def arguments(self, schema: dict, depth: int = 0) -> dict:
        rng = self.rng
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        arguments = {}
        for field, field_schema in properties.items():
            # About three optional fields a call (the single browser tool has dozens, each for some actions).
            keep = 0.9 if field in required else (0.05 if field == "session" else min(0.35, 3 / len(properties)))
            if rng.random() < keep:
                arguments[field] = self.value(field, field_schema, depth)
        if rng.random() < 0.05:
            arguments[rng.choice(["bogus", "", "🙂", "x" * 200, "__proto__"])] = rng.choice(JUNK)
        return arguments

    def call(self) -> tuple[str, object]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.05:
            return rng.choice(["", "browser_", "nope", "browser_navigate ", "BROWSER_CLICK", "🙂", "x" * 1000]), {}
        if roll < 0.15:  # keep a real page and real refs around, so actions reach the browser
            return rng.choice([("browser_navigate", {"url": self.url()}), ("browser_snapshot", {})])
        name = rng.choice(sorted(self.tools))
        if roll < 0.2:
            return name, rng.choice([{}, {"": None}, {"session": None}])
        return name, self.arguments(self.tools[name])


async def run_fuzz(site, other_site, tmp_path, calls: int, style: str) -> dict:
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path / "out"), "WEBHAND_TIMEOUT": str(DEFAULT_TIMEOUT),
           "WEBHAND_ACTION_TIMEOUT": "0.5", "WEBHAND_NAVIGATION_SETTLE_CAP": "2", "WEBHAND_REQUEST_SETTLE_CAP": "0.5",
           "WEBHAND_DOM_QUIET_CAP": "0.2", "WEBHAND_ISOLATION": "context", "WEBHAND_WARM_RESERVE": "false",
           "WEBHAND_ALLOWED_ORIGINS": f"http://127.0.0.1:{site.port},http://127.0.0.1:{other_site.port}"}
    server = StdioServerParameters(command=sys.executable,
                                   args=["-m", "webhand", "mcp", "--caps", "all", "--tool-style", style], env=env,
                                   cwd=str(tmp_path))
    figures = {"calls": 0, "crashes": 0, "hangs": 0, "bad_replies": [], "protocol_errors": 0, "errors": 0,
               "slowest": 0.0, "slowest_call": "", "browsers": [], "seconds_by_tool": Counter()}
    started = time.monotonic()
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        tools = {t.name: t.input_schema for t in (await mcp.list_tools()).tools}
        fuzzer = Fuzzer(SEED, site, other_site, tools)
        for _ in range(calls):
            name, arguments = fuzzer.call()
            figures["calls"] += 1
            limit = call_limit(arguments)
            began = time.monotonic()
            try:
                result = await asyncio.wait_for(mcp.call_tool(name, arguments), limit)
                text = "\n".join(getattr(block, "text", "") for block in result.content)
                figures["errors"] += bool(result.is_error)
            except TimeoutError:
                figures["hangs"] += 1
                figures["bad_replies"].append((name, _shown(arguments), f"no answer within {limit:g} s"))
                continue
            except MCPError as error:  # a JSON-RPC error reply: the server answered, but no tool ran
                result, text = None, str(error)
                figures["protocol_errors"] += 1
                if error.code == INTERNAL_ERROR:  # an exception escaped webhand into the SDK
                    figures["bad_replies"].append((name, _shown(arguments), f"JSON-RPC internal error: {text}"))
            except Exception as error:  # the connection broke: the server crashed
                figures["crashes"] += 1
                figures["bad_replies"].append((name, _shown(arguments), f"{type(error).__name__}: {error}"))
                break
            took = time.monotonic() - began
            if took > figures["slowest"]:
                figures["slowest"], figures["slowest_call"] = took, f"{name} {_shown(arguments)}"
            figures["seconds_by_tool"][name] += took
            if BAD_REPLY.search(ENGINE_SYNTAX.sub("", text)):
                figures["bad_replies"].append((name, _shown(arguments), text[:500]))
            if name == "browser_snapshot" and result is not None and not result.is_error:
                fuzzer.refs = re.findall(r"\[(f?\d*e\d+)\]", text)[:50] or fuzzer.refs
        figures["still_up"] = bool((await asyncio.wait_for(mcp.list_tools(), 30)).tools)
        figures["browsers"] = browsers_of_child_processes()
    figures["seconds"] = time.monotonic() - started
    return figures


def _shown(arguments: object) -> str:
    text = repr(arguments)
    return text if len(text) < 300 else text[:300] + "…"


@pytest.fixture(scope="module")
async def fuzz_run(site, other_site, tmp_path_factory):
    """Both tool styles: the separate tools, then the single `browser` tool (its own routing layer)."""
    runs = [await run_fuzz(site, other_site, tmp_path_factory.mktemp("fuzz"), CALLS, "multi"),
            await run_fuzz(site, other_site, tmp_path_factory.mktemp("fuzz-single"), SINGLE_TOOL_CALLS, "single")]
    for figures in runs:
        assert await wait_until_gone_async(figures["browsers"]) == []  # the server took its browsers with it
    total = {key: sum(run[key] for run in runs)
             for key in ("calls", "crashes", "hangs", "errors", "protocol_errors", "seconds")}
    slowest = max(runs, key=lambda run: run["slowest"])
    return {**total, "bad_replies": [item for run in runs for item in run["bad_replies"]],
            "still_up": all(run["still_up"] for run in runs), "slowest": slowest["slowest"],
            "slowest_call": slowest["slowest_call"],
            "seconds_by_tool": sum((run["seconds_by_tool"] for run in runs), Counter())}


def test_a_thousand_malformed_calls_leave_the_server_up_and_answering(fuzz_run, capsys):
    with capsys.disabled():
        print(f"\nfuzz: {fuzz_run['calls']} calls (seed {SEED}) in {fuzz_run['seconds']:.0f} s, "
              f"{fuzz_run['crashes']} crashes, {fuzz_run['hangs']} hangs, {len(fuzz_run['bad_replies'])} bad replies, "
              f"{fuzz_run['errors']} error replies, {fuzz_run['protocol_errors']} JSON-RPC errors, "
              f"slowest answer {fuzz_run['slowest']:.1f} s ({fuzz_run['slowest_call'][:120]}); most time in "
              + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in fuzz_run["seconds_by_tool"].most_common(5)))
    assert fuzz_run["calls"] >= 1000
    assert fuzz_run["crashes"] == 0 and fuzz_run["still_up"]
    assert fuzz_run["hangs"] == 0


def test_no_fuzzed_call_gets_an_unexpected_failure_a_repr_or_a_traceback(fuzz_run):
    assert fuzz_run["bad_replies"] == [], "\n\n".join(" | ".join(item) for item in fuzz_run["bad_replies"][:15])
