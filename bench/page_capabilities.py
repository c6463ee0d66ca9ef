"""What issue 41's page capabilities cost, in process (no MCP), per driver:

- the page's own tools (WebMCP): the median time of a navigation and a snapshot on pages without
  tools, Chromium started with the feature (``page_tools = true``, the default) against without it,
  A/B in the same run; and the same on a page that offers three tools (the "Page tools:" line);
- the accessibility audit: ``browser_audit_accessibility``'s time on pages of growing size, the
  first call on a document (axe-core sent into its isolated world) and a second one.

`.venv/bin/python bench/page_capabilities.py [--drivers cdp,playwright,firefox] [--calls 20]` from the
repository's root. Python's docs (Debian's python3-doc) are audited when installed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))

from helpers import Site  # noqa: E402  (the test pages' server: tests/pages on 127.0.0.1)
from pages import PageServer  # noqa: E402

from webhand import Settings, Webhand  # noqa: E402

WARM_UP = 3


async def _timed(tools, name: str, arguments: dict) -> float:
    start = time.perf_counter()
    reply = await tools.call(name, arguments)
    if reply.is_error:
        raise SystemExit(f"{name} failed: {reply.text[:300]}")
    return (time.perf_counter() - start) * 1000


async def page_tools_cost(driver: str, site: Site, bench: PageServer, calls: int) -> list[str]:
    """Two Webhands side by side, Chromium with and without the feature, their calls alternated so
    that the machine's load falls on both alike."""
    pages = {"bench login (no tools)": bench.url("/login"), "bench todo (no tools)": bench.url("/todo"),
             "flights (3 page tools)": site.url("page_tools/flights.html")}

    def settings(feature: bool) -> Settings:
        return Settings.from_sources({"warm_reserve": False, "isolation": "context", "driver": driver,
                                      "page_tools": feature, "capabilities": ["all"]}, env={})

    times: dict[tuple[str, bool], list[float]] = {}
    async with Webhand(settings(True)) as with_it, Webhand(settings(False)) as without:
        sides = {True: with_it.conversation("page-tools-on"), False: without.conversation("page-tools-off")}
        for label, url in pages.items():
            for number in range(calls + WARM_UP):
                for feature, tools in sides.items():
                    spent = await _timed(tools, "browser_navigate", {"url": url}) + await _timed(tools, "browser_snapshot", {})
                    if number >= WARM_UP:
                        times.setdefault((label, feature), []).append(spent)
    lines = []
    for label in pages:
        on, off = statistics.median(times[(label, True)]), statistics.median(times[(label, False)])
        lines.append(f"| {driver} | {label} | {on:.1f} | {off:.1f} | {on / off:.2f} |")
    return lines


async def audit_cost(driver: str, site: Site, bench: PageServer) -> list[str]:
    pages = {"violations.html (22 elements)": site.url("audit/violations.html"),
             "gen 2,000 rows": bench.url("/gen?n=2000")}
    if bench.pydocs is not None:
        pages["pydoc functions.html"] = bench.url("/pydocs/library/functions.html")
    settings = Settings.from_sources({"warm_reserve": False, "isolation": "context", "driver": driver,
                                      "capabilities": ["all"]}, env={})
    lines = []
    async with Webhand(settings) as webhand:
        tools = webhand.conversation("audit")
        for label, url in pages.items():
            await tools.call("browser_navigate", {"url": url})
            first = await _timed(tools, "browser_audit_accessibility", {"timeout": 120})
            second = await _timed(tools, "browser_audit_accessibility", {"timeout": 120})
            lines.append(f"| {driver} | {label} | {first:.0f} | {second:.0f} |")
    return lines


async def main(drivers: list[str], calls: int) -> None:
    os.chdir(ROOT)
    site = Site()
    with PageServer() as bench:
        tools_rows, audit_rows = [], []
        for driver in drivers:
            if driver != "firefox":  # Firefox has no WebMCP: nothing to compare
                tools_rows += await page_tools_cost(driver, site, bench, calls)
            audit_rows += await audit_cost(driver, site, bench)
    site.close()
    print("navigate + snapshot, median ms:\n\n| driver | page | page_tools on | off | on/off |\n|---|---|---|---|---|")
    print("\n".join(tools_rows))
    print("\nbrowser_audit_accessibility, ms:\n\n| driver | page | first call | second call |\n|---|---|---|---|")
    print("\n".join(audit_rows))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--drivers", default="cdp,playwright,firefox")
    parser.add_argument("--calls", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.drivers.split(","), options.calls))
