"""The console tools: browser_recent_console_logs and browser_clear_console_logs. Console messages of
workers and iframes share the page's ring buffer, tagged by where they came from."""

from __future__ import annotations


def ok(reply):
    assert not reply.is_error, reply.text
    return reply


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
    logs = await _logs_once_they_hold(tools, "shared worker says hello")
    lines = logs.splitlines()
    assert any(line.startswith("[log] page says hello") for line in lines), logs
    assert any(line.startswith("[frame] [warning] frame says hello") for line in lines), logs
    assert any(line.startswith("[worker] [log] dedicated worker says hello") for line in lines), logs
    assert any(line.startswith("[worker] [log] shared worker says hello") for line in lines), logs


async def test_service_worker_messages_are_tagged_sw_once(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("pwa/index.html")}))
    ok(await tools.call("browser_wait_for", {"text": "service worker"}))
    logs = await _logs_once_they_hold(tools, "service worker v1 active")
    installing = [line for line in logs.splitlines() if "service worker v1 installing" in line]
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
