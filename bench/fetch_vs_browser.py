#!/usr/bin/env python3
"""web_fetch next to browser_navigate + browser_text on the same documentation pages.

    .venv/bin/python bench/fetch_vs_browser.py            # 8 pages of Python's docs, 5 rounds
    .venv/bin/python bench/fetch_vs_browser.py --quick    # 4 pages, 2 rounds

The pages are Python's HTML docs from the tests' corpus (tests/corpus_site.py, Debian's
python3-doc), served on 127.0.0.1. One Webhand, one conversation: its browser is started and
warmed (one navigate) before anything is timed, so the browser column is a warm session's cost,
not a launch. Each round reads every page both ways, in turn; the figures per page are the
medians over the rounds of the wall time and of the CPU time of this process and every browser
process (renderer, GPU, network service: the work the page costs the machine), with the reply's
characters. Results: bench/results/fetch_vs_browser.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from run import find_chrome  # noqa: E402

from corpus_site import CorpusSite, missing_reason  # noqa: E402

PAGES = ["library/json.html", "library/functions.html", "library/stdtypes.html", "tutorial/introduction.html",
         "library/os.path.html", "library/re.html", "tutorial/controlflow.html", "library/pathlib.html"]


def cpu_seconds() -> float:
    """CPU time of this process and all its descendants (the browsers) so far."""
    total = 0.0
    me = psutil.Process()
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


async def timed(call) -> tuple[float, float, str]:
    cpu, started = cpu_seconds(), time.perf_counter()
    reply = await call()
    elapsed, used = time.perf_counter() - started, cpu_seconds() - cpu
    assert not reply.is_error, reply.text
    return elapsed, used, reply.text


async def measure(site: CorpusSite, pages: list[str], rounds: int, chrome: str) -> list[dict]:
    from webhand import Settings, Webhand

    settings = Settings.from_sources({"executable_path": chrome, "capabilities": ["all"], "warm_reserve": False,
                                      "output_dir": tempfile.mkdtemp(prefix="webhand-bench-")}, env={})
    async with Webhand(settings) as webhand:
        tools = webhand.conversation("bench-fetch")
        await tools.call("browser_navigate", {"url": site.pydoc("index.html")})  # launch and warm, untimed
        await tools.call("web_fetch", {"url": site.pydoc("index.html")})  # trafilatura's first import, untimed
        samples: dict[str, dict[str, list]] = {page: {"fetch": [], "browser": []} for page in pages}
        for _ in range(rounds):
            for page in pages:
                url = site.pydoc(page)
                samples[page]["fetch"].append(await timed(lambda: tools.call("web_fetch", {"url": url})))

                async def browse():
                    await tools.call("browser_navigate", {"url": url})
                    return await tools.call("browser_text", {})

                samples[page]["browser"].append(await timed(browse))
        rows = []
        for page, both in samples.items():
            fetched, browsed = both["fetch"], both["browser"]
            assert not any("Fell back" in text for _, _, text in fetched), f"{page}: web_fetch fell back"
            rows.append({"page": page,
                         "fetch_ms": round(statistics.median(t for t, _, _ in fetched) * 1000, 1),
                         "browser_ms": round(statistics.median(t for t, _, _ in browsed) * 1000, 1),
                         "fetch_cpu_ms": round(statistics.median(c for _, c, _ in fetched) * 1000, 1),
                         "browser_cpu_ms": round(statistics.median(c for _, c, _ in browsed) * 1000, 1),
                         "fetch_chars": len(fetched[-1][2]), "browser_chars": len(browsed[-1][2])})
        return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--chrome")
    args = parser.parse_args()
    reason = missing_reason("pydoc")
    if reason:
        print(f"fetch_vs_browser: skipped: {reason}")
        return 0
    pages, rounds = (PAGES[:4], 2) if args.quick else (PAGES, 5)
    site = CorpusSite()
    try:
        rows = asyncio.run(measure(site, pages, rounds, find_chrome(args.chrome)))
    finally:
        site.close()
    print(f"web_fetch vs browser_navigate + browser_text, Python docs on 127.0.0.1, median of {rounds} rounds")
    print(f"{'page':28} {'wall ms: fetch':>14} {'browser':>8} {'ratio':>6}  {'CPU ms: fetch':>13} {'browser':>8} "
          f"{'ratio':>6}  {'chars: fetch':>12} {'browser':>8}")
    for row in rows:
        print(f"{row['page']:28} {row['fetch_ms']:>14.0f} {row['browser_ms']:>8.0f} "
              f"{row['browser_ms'] / row['fetch_ms']:>5.1f}x  {row['fetch_cpu_ms']:>13.0f} {row['browser_cpu_ms']:>8.0f} "
              f"{row['browser_cpu_ms'] / max(row['fetch_cpu_ms'], 1):>5.1f}x  {row['fetch_chars']:>12,} "
              f"{row['browser_chars']:>8,}")
    totals = {key: sum(r[key] for r in rows) for key in ("fetch_ms", "browser_ms", "fetch_cpu_ms", "browser_cpu_ms")}
    print(f"{'total':28} {totals['fetch_ms']:>14.0f} {totals['browser_ms']:>8.0f} "
          f"{totals['browser_ms'] / totals['fetch_ms']:>5.1f}x  {totals['fetch_cpu_ms']:>13.0f} "
          f"{totals['browser_cpu_ms']:>8.0f} {totals['browser_cpu_ms'] / max(totals['fetch_cpu_ms'], 1):>5.1f}x")
    out = HERE / "results" / "fetch_vs_browser.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rounds": rounds, "rows": rows, "totals": totals}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
