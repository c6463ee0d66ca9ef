"""CPU a new conversation costs: Python's own, and the browser's by process type.

Each conversation opens a session (a browser context and a tab, as with ``isolation = "context"``),
navigates to a small local page and ends; the browser's processes are read with psutil before and
after (an ended renderer's CPU is counted through its parent's ``children_*`` times). The first
conversation warms the browser up and is not counted.

    PYTHONPATH=src .venv/bin/python bench/conversation_cpu.py cdp 20
    PYTHONPATH=src .venv/bin/python bench/conversation_cpu.py cdp 20 --chromium-flavor full
    PYTHONPATH=src .venv/bin/python bench/conversation_cpu.py firefox 10

CPU time, unlike wall time, barely depends on what else the machine runs.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import http.server
import tempfile
import threading
import time
from pathlib import Path

import psutil

from webhand import Settings
from webhand.host import Webhand

PAGE = "<title>t</title><h1>Hello</h1><a href='#'>link</a><button>Go</button>"


def _kind(process: psutil.Process) -> str:
    line = process.cmdline()
    for part in line:
        if part.startswith("--type="):
            return part.removeprefix("--type=")
        if part == "-contentproc":
            return "firefox content"
    return Path(line[0]).name if line else "?"


def _cpu_by_kind() -> collections.Counter[str]:
    spent: collections.Counter[str] = collections.Counter()
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
            spent[_kind(child)] += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:
            continue
    return spent


async def measure(driver: str, conversations: int, flavor: str, url: str, out: str) -> None:
    base: dict[str, object] = {"output_dir": out, "isolation": "context", "capabilities": ["all"],
                               "warm_reserve": True, "max_sessions": conversations + 2}
    if driver == "firefox":
        base["browser"] = "firefox"
    else:
        base.update(driver=driver, chromium_flavor=flavor)
    async with Webhand(Settings.from_sources(base, env={})) as webhand:
        warm = webhand.conversation("warm-up")
        await warm.call("browser_navigate", {"url": url})
        await webhand.end_conversation("warm-up")
        before, python_before, started = _cpu_by_kind(), time.process_time(), time.monotonic()
        for number in range(conversations):
            tools = webhand.conversation(f"c{number}")
            reply = await tools.call("browser_navigate", {"url": url})
            assert not reply.is_error, reply.text
            await webhand.end_conversation(f"c{number}")
        after = _cpu_by_kind()
        python = (time.process_time() - python_before) / conversations * 1000
        wall = (time.monotonic() - started) / conversations * 1000
    browser = {kind: (after[kind] - before[kind]) / conversations * 1000 for kind in after}
    label = driver if driver == "firefox" else f"{driver} ({flavor})"
    print(f"{label}: per conversation, Python {python:.0f} ms CPU, browser {sum(browser.values()):.0f} ms CPU, "
          f"wall {wall:.0f} ms (load {psutil.getloadavg()[0]:.1f})")
    for kind, ms in sorted(browser.items(), key=lambda item: -item[1]):
        print(f"  {kind:<40} {ms:6.0f} ms")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("driver", choices=["cdp", "playwright", "firefox"])
    parser.add_argument("conversations", type=int, nargs="?", default=20)
    parser.add_argument("--chromium-flavor", default="auto", choices=["auto", "full", "headless-shell"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="conversation-cpu-") as folder:
        (Path(folder) / "page.html").write_text(PAGE)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=folder))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            asyncio.run(measure(args.driver, args.conversations, args.chromium_flavor,
                                f"http://127.0.0.1:{server.server_port}/page.html", str(Path(folder) / "out")))
        finally:
            server.shutdown()


if __name__ == "__main__":
    main()
