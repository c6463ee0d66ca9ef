"""A small A/B: the median time of browser_snapshot (and of a key press) on the bench's pages, in
process (no MCP), after a few calls to warm up. Run it once per source tree to compare, alternating
the trees so that the machine's load falls on both:
`PYTHONPATH=<tree>/src .venv/bin/python bench/snapshot_ab.py [--pages login,todo,gen-10000] [--calls 30]`
from the repository's root.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pages import PageServer  # noqa: E402

from webhand import Settings, Webhand  # noqa: E402

WARM_UP = 5
GENERATED = (1000, 5000, 10000, 20000, 50000)


async def main(pages_wanted: list[str], calls: int, press: bool) -> None:
    steps = [("browser_snapshot", {})] + ([("browser_press_key", {"key": "Shift"})] if press else [])
    with PageServer() as pages:
        urls = pages.snapshot_pages(GENERATED)
        settings = Settings.from_sources({"warm_reserve": False, "isolation": "context"}, env={})
        async with Webhand(settings) as webhand:
            # ``context``: the name before issue 39's vocabulary, so that the script runs on older trees too.
            tools = (getattr(webhand, "conversation", None) or webhand.context)("snapshot-ab")
            for name in pages_wanted:
                await tools.call("browser_navigate", {"url": urls[name]})
                for tool, arguments in steps:
                    times = []
                    for _ in range(calls + WARM_UP):
                        start = time.perf_counter()
                        await tools.call(tool, arguments)
                        times.append((time.perf_counter() - start) * 1000)
                    print(f"{name:16} {tool:18} median {statistics.median(times[WARM_UP:]):.1f} ms", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", default="login,todo", help="comma-separated labels of bench/pages.py's snapshot pages")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--no-press", action="store_true", help="time browser_snapshot only")
    options = parser.parse_args()
    asyncio.run(main(options.pages.split(","), options.calls, not options.no_press))
