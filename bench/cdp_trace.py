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

A few commands depend on timing, not on the code: a title read after a history navigation races
the page's load, so two runs of the same tree can differ by one ``Runtime.evaluate`` there. Run
each tree several times and compare the sets of traces (``--runs N`` prints how many distinct ones
a tree gave, each once, with its count).
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
        # ``context``: the name before issue 39's vocabulary, so that the script runs on older trees too.
        tools = (getattr(webhand, "conversation", None) or webhand.context)("cdp-trace")

        async def call(name: str, arguments: dict[str, object] | None = None) -> str:
            SENT.append((None, f"== {name}"))  # where each call's commands begin, for a readable diff
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


def trace() -> list[str]:
    SENT.clear()
    with PageServer() as pages:
        asyncio.run(scenario(pages))
    names: dict[str, str] = {}
    lines = []
    for session_id, method in SENT:
        if method.startswith("=="):
            lines.append(method)
            continue
        target = "browser" if session_id is None else names.setdefault(session_id, f"tab{len(names) + 1}")
        lines.append(f"{target} {method}")
    return lines


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 1
    seen: dict[tuple[str, ...], int] = {}
    for _ in range(runs):
        key = tuple(trace())
        seen[key] = seen.get(key, 0) + 1
    for lines, count in sorted(seen.items(), key=lambda item: -item[1]):
        if runs > 1:
            print(f"### trace seen in {count} of {runs} runs ({sum(not l.startswith('==') for l in lines)} commands)")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
