"""What every tool's definition promises: its arguments are checked before anything runs, and every tool
that waits takes a `timeout` (units included)."""

from __future__ import annotations


async def test_arguments_are_validated_before_anything_runs(tools):
    reply = await tools.call("browser_click", {"ref": "e1", "selector": "#x"})
    assert reply.is_error and "exactly one of `ref` and `selector`" in reply.text
    reply = await tools.call("browser_navigate", {"link": "http://127.0.0.1/"})
    assert reply.is_error and "url: Field required" in reply.text and "link: unknown argument" in reply.text
    reply = await tools.call("browser_teleport", {})
    assert reply.is_error and "browser_navigate" in reply.text
