"""Time what issue 2 asks about: the first call of a new conversation (cold, and with the warm
reserve, in both isolation modes), and a snapshot and a click on the demo page.

    .venv/bin/python scripts/measure_first_call.py [--runs 5]

Prints medians in milliseconds. The full side-by-side benchmark is `make bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time

from webhand import Settings, Webhand
from webhand.surfaces.cli.demo import serve_demo_site


async def first_call(url: str, isolation: str, warm: bool) -> float:
    settings = Settings.from_sources({"output_dir": tempfile.mkdtemp(), "isolation": isolation, "warm_reserve": warm})
    async with Webhand(settings) as wh:
        if warm:
            await wh.sessions.ready(reserve=True)  # the reserve is ready, as it is for any conversation after the first second
        started = time.perf_counter()
        reply = await wh.conversation("new").call("browser_navigate", {"url": url})
        elapsed = time.perf_counter() - started
        assert not reply.is_error, reply.text
        return elapsed * 1000


async def page_calls(url: str, runs: int) -> dict[str, float]:
    settings = Settings.from_sources({"output_dir": tempfile.mkdtemp()})
    times: dict[str, list[float]] = {"navigate": [], "snapshot": [], "click": []}
    async with Webhand(settings) as wh:
        tools = wh.conversation("demo")
        for _ in range(runs):
            for name, call in (("navigate", ("browser_navigate", {"url": url})), ("snapshot", ("browser_snapshot", {}))):
                started = time.perf_counter()
                reply = await tools.call(*call)
                times[name].append((time.perf_counter() - started) * 1000)
            ref = re.search(r'button "Create ticket" \[(\w+)\]', reply.text).group(1)
            started = time.perf_counter()
            await tools.call("browser_click", {"ref": ref})
            times["click"].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


async def main(runs: int) -> None:
    with serve_demo_site() as url:
        rows = []
        for isolation, warm in (("process", False), ("process", True), ("context", False), ("context", True)):
            samples = [await first_call(url, isolation, warm) for _ in range(runs)]
            label = f"first call (navigate), {isolation} isolation, {'warm reserve' if warm else 'cold'}"
            rows.append((label, statistics.median(samples)))
        for name, value in (await page_calls(url, runs * 4)).items():
            rows.append((f"{name} on the demo page (warm session)", value))
    width = max(len(label) for label, _ in rows)
    print(f"{'what':<{width}}  median ms")
    for label, value in rows:
        print(f"{label:<{width}}  {value:8.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main(parser.parse_args().runs))
