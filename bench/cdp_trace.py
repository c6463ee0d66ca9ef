#!/usr/bin/env python3
"""The CDP commands the raw CDP driver sends on one recorded scenario, in order: a refactoring of
webhand's code that must not change its behaviour is checked by running this on the tree before
and after and comparing the two lists (``diff``).

The scenario (in process, no MCP): open the bench's login page, snapshot, type a user and a
password, click "Sign in" (a navigation), go back, open the todo page, add two todos with the
keyboard, check one, take a screenshot, list the console, open and close a second tab, close.
Each line is ``<target> <method>``, the target being ``browser`` or the tab it went to (``tab1``,
``tab2`` in order of first use), so that ids which differ between runs do not show.

    PYTHONPATH=<tree>/src .venv/bin/python bench/cdp_trace.py > /tmp/trace-<tree>.txt
    diff /tmp/trace-before.txt /tmp/trace-after.txt
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pages import PageServer  # noqa: E402

from webhand import Settings, Webhand  # noqa: E402
from webhand.engine.cdp import connection  # noqa: E402

SENT: list[tuple[str | None, str]] = []
_send_raw = connection._LeanClient.send_raw


async def _recording_send_raw(self, method, params=None, session_id=None):  # type: ignore[no-untyped-def]
    SENT.append((session_id, method))
    return await _send_raw(self, method, params, session_id)


connection._LeanClient.send_raw = _recording_send_raw  # type: ignore[method-assign]


def ref_of(snapshot: str, role: str, name: str) -> str:
    found = re.search(rf'{role} "{re.escape(name)}"[^\n]*?\[(e\d+)\]', snapshot)
    if found is None:
        raise SystemExit(f"no {role} {name!r} in the snapshot:\n{snapshot}")
    return found.group(1)


async def scenario(pages: PageServer) -> None:
    settings = Settings.from_sources({"warm_reserve": False, "isolation": "context", "driver": "cdp"}, env={})
    async with Webhand(settings, capabilities=["core", "tabs"]) as webhand:
        tools = webhand.context("cdp-trace")

        async def call(name: str, arguments: dict[str, object] | None = None) -> str:
            result = await tools.call(name, arguments or {})
            text = result.text
            if result.is_error:
                raise SystemExit(f"{name} failed: {text}")
            return text

        await call("browser_navigate", {"url": pages.url("/login")})
        page = await call("browser_snapshot")
        await call("browser_type", {"ref": ref_of(page, "textbox", "Username"), "text": "ada"})
        await call("browser_type", {"ref": ref_of(page, "textbox", "Password"), "text": "secret"})
        await call("browser_click", {"ref": ref_of(page, "button", "Sign in")})
        await call("browser_back")
        await call("browser_navigate", {"url": pages.url("/todo")})
        page = await call("browser_snapshot")
        new = ref_of(page, "textbox", "New todo")
        for text in ("milk", "bread"):
            await call("browser_type", {"ref": new, "text": text, "submit": True})
        page = await call("browser_snapshot")
        await call("browser_click", {"ref": ref_of(page, "checkbox", "milk")})
        await call("browser_take_screenshot")
        await call("browser_recent_console_logs")
        await call("browser_tabs", {"action": "open", "url": pages.url("/article")})
        await call("browser_tabs", {"action": "close"})
        await call("browser_close")


def main() -> None:
    with PageServer() as pages:
        asyncio.run(scenario(pages))
    names: dict[str, str] = {}
    for session_id, method in SENT:
        target = "browser" if session_id is None else names.setdefault(session_id, f"tab{len(names) + 1}")
        print(f"{target} {method}")


if __name__ == "__main__":
    main()
