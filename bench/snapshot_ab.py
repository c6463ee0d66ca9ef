"""A small A/B: the median time of browser_snapshot and of a key press on the bench's login and todo
pages, in process (no MCP), 50 calls each after 10 to warm up. Run it with two source trees to compare:
`PYTHONPATH=<tree>/src .venv/bin/python bench/snapshot_ab.py` from the repository's root.
"""
import asyncio, sys, time, statistics
sys.path.insert(0, "bench")
from pages import PageServer
from webhand import Webhand, Settings
async def main():
    with PageServer() as pages:
        async with Webhand(Settings.from_sources({"warm_reserve": False, "isolation": "context"}, env={})) as wh:
            t = wh.context("b")
            out = {}
            for path in ("/login", "/todo"):
                await t.call("browser_navigate", {"url": pages.url(path)})
                for tool, args in (("browser_snapshot", {}), ("browser_press_key", {"key": "Shift"})):
                    times = []
                    for i in range(60):
                        s = time.perf_counter(); r = await t.call(tool, args); times.append((time.perf_counter()-s)*1000)
                    out[(path, tool)] = statistics.median(times[10:])
            for k, v in out.items(): print(k, f"{v:.1f} ms")
asyncio.run(main())
