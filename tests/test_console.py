"""The console tools: browser_recent_console_logs and browser_clear_console_logs. Console messages of
workers and iframes share the page's ring buffer, tagged by where they came from."""

from __future__ import annotations

import re
import time

from webhand.response import CONTINUED


def ok(reply):
    assert not reply.is_error, reply.text
    return reply


TIMED = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) ")


def untimed(logs: str) -> list[str]:
    """The log's lines without the time each entry leads with (every line has one, but the later
    lines of a message over several, which the continuation mark leads)."""
    lines = logs.splitlines()
    assert all(TIMED.match(line) or line.startswith(CONTINUED) for line in lines), logs
    return [TIMED.sub("", line) for line in lines]


async def _logs_once_they_hold(tools, *texts: str) -> str:
    """The console log once it holds every text: a shared worker's messages come through its own
    target, a moment after the page heard the worker's answer. Each call is one round trip."""
    for _ in range(100):
        logs = ok(await tools.call("browser_recent_console_logs", {})).text
        if all(text in logs for text in texts):
            return logs
    return logs


async def test_worker_and_iframe_messages_are_tagged_and_the_page_own_are_not(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("workers.html")}))
    ok(await tools.call("browser_wait_for", {"text": "workers answered"}))
    logs = await _logs_once_they_hold(tools, "dedicated worker says hello", "frame says hello")
    lines = untimed(logs)
    assert any(line.startswith("[log] page says hello") for line in lines), logs
    assert any(line.startswith("[frame] [warning] frame says hello") for line in lines), logs
    assert any(line.startswith("[worker] [log] dedicated worker says hello") for line in lines), logs


async def test_shared_worker_messages_are_heard_tagged_worker(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("workers.html")}))
    ok(await tools.call("browser_wait_for", {"text": "workers answered"}))
    logs = await _logs_once_they_hold(tools, "shared worker says hello")
    assert any(line.startswith("[worker] [log] shared worker says hello") for line in untimed(logs)), logs


async def test_service_worker_messages_are_tagged_sw_once(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("pwa/index.html")}))
    ok(await tools.call("browser_wait_for", {"text": "service worker"}))
    logs = await _logs_once_they_hold(tools, "service worker v1 active")
    installing = [line for line in untimed(logs) if "service worker v1 installing" in line]
    assert len(installing) == 1 and installing[0].startswith("[sw] [log] "), logs


async def test_console_logs_are_read_and_cleared(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tall.html")})
    await tools.call("browser_eval", {"expression": "console.error('bad thing'); setTimeout(() => { throw new Error('late boom') })"})
    await tools.call("browser_eval", {"expression": "await new Promise(r => setTimeout(r, 50))"})
    reply = await tools.call("browser_recent_console_logs", {})
    assert "[log] tall page ready" in reply.text and "[warning] a warning" in reply.text
    assert "[error] bad thing" in reply.text and "[pageerror]" in reply.text and "late boom" in reply.text
    last = await tools.call("browser_recent_console_logs", {"limit": 1})
    assert "late boom" in last.text and "tall page ready" not in last.text
    cleared = await tools.call("browser_clear_console_logs", {})
    assert cleared.text == "Cleared 4 console log entries."
    assert (await tools.call("browser_recent_console_logs", {})).text == "No console messages."


async def test_entries_carry_the_time_they_were_logged_and_objects_read_as_devtools_prints_them(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tall.html")})
    ok(await tools.call("browser_clear_console_logs", {}))
    before = time.time()
    ok(await tools.call("browser_eval", {"expression": """
        console.log('hello', 'log', 42, {a: 1, b: 'x', nested: {deep: {deeper: 1}}, list: [1, 2]});
        console.log([1, 2, 3]);
        console.info(new Map([['k', 2]]), null, undefined, true);
        console.log({n: 1, m: 2, o: 3, p: 4, q: 5, r: 6, s: 7});
        console.log('%s', '<b>line one\\nline two</b>', {'odd key': '\\u2028"quote"'});"""}))
    logs = (await tools.call("browser_recent_console_logs", {})).text
    lines = untimed(logs)
    assert lines[0] == '[log] hello log 42 {a: 1, b: "x", nested: {…}, list: Array(2)}', logs
    assert lines[1] == "[log] Array(3) [1, 2, 3]", logs
    assert lines[2] == '[info] Map(1) {"k" => 2} null undefined true', logs
    assert lines[3].startswith("[log] {n: 1, m: 2, o: 3, p: 4, q: 5") and lines[3].endswith(", …}"), logs  # cut
    # A message over lines keeps them (issue 42.13), each later one led by the continuation mark that
    # no reply line starts with; other separators (U+2028) stay escaped, quotes inside a quoted string.
    assert lines[4] == "[log] <b>line one" and lines[5].startswith(CONTINUED + "line two</b>") and len(lines) == 6, logs
    assert '"odd key": ' in lines[5] and "\u2028" not in lines[5], logs
    # The time each was logged, to the millisecond, on the local clock (as DevTools shows it).
    h, m, s, ms = (int(g) for g in TIMED.match(logs.splitlines()[0]).groups())
    logged = time.localtime(before)
    assert (h, m) == (logged.tm_hour, logged.tm_min) or abs((h * 60 + m) - (logged.tm_hour * 60 + logged.tm_min)) <= 1
    data = (await tools.call("browser_recent_console_logs", {})).data["entries"]
    assert before - 1 <= data[0]["logged_at"] <= time.time() + 1, data[0]
