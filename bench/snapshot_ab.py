"""A small A/B: the median time of browser_snapshot and of a key press on the bench's login and todo
pages, in process (no MCP), 50 calls each after 10 to warm up. Run it once per source tree to compare:
`PYTHONPATH=<tree>/src .venv/bin/python bench/snapshot_ab.py` from the repository's root.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pages import PageServer  # noqa: E402

from webhand import Settings, Webhand  # noqa: E402

CALLS, WARM_UP = 60, 10
STEPS = (("browser_snapshot", {}), ("browser_press_key", {"key": "Shift"}))


async def main() -> None:
    with PageServer() as pages:
        settings = Settings.from_sources({"warm_reserve": False, "isolation": "context"}, env={})
        async with Webhand(settings) as webhand:
            tools = webhand.conversation("snapshot-ab")
            for path in ("/login", "/todo"):
                await tools.call("browser_navigate", {"url": pages.url(path)})
                for tool, arguments in STEPS:
                    times = []
                    for _ in range(CALLS):
                        start = time.perf_counter()
                        await tools.call(tool, arguments)
                        times.append((time.perf_counter() - start) * 1000)
                    print(f"{path:7} {tool:18} median {statistics.median(times[WARM_UP:]):.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
