"""Median time of a repeated ``browser_navigate`` through the Python API, on the bundled demo site.

    PYTHONPATH=src .venv/bin/python scripts/measure_navigate.py [cdp|playwright|default] [load_quiet_ms]

A quick figure for one tree (bisect with ``git bisect run``); the side-by-side figure with the
peers is the bench's actions suite (`bench/run.py --suites actions`).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time

from webhand import Settings, Webhand
from webhand.surfaces.cli.demo import serve_demo_site


async def main(driver: str, load_quiet_ms: int) -> None:
    with serve_demo_site() as url:
        chosen = {"driver": driver} if driver != "default" else {}
        settings = Settings(output_dir=tempfile.mkdtemp(), isolation="context", warm_reserve=False,
                            load_quiet_ms=load_quiet_ms, **chosen)
        async with Webhand(settings) as webhand:
            tools = webhand.conversation("measure")
            await tools.call("browser_navigate", {"url": url})
            times = []
            for number in range(8):
                started = time.perf_counter()
                await tools.call("browser_navigate", {"url": f"{url}?i={number}"})
                times.append((time.perf_counter() - started) * 1000)
            print(f"{driver} navigate median {statistics.median(times):.0f} ms")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "default", int(sys.argv[2]) if len(sys.argv) > 2 else 150))
