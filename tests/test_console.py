"""The console tools: browser_recent_console_logs and browser_clear_console_logs (where each
message came from: test_console_sources.py)."""

from __future__ import annotations


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
