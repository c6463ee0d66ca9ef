"""Time what a user of ``webhand mcp`` over stdio waits for, with the official MCP client:
spawn → ``initialize`` answered, spawn → first ``browser_navigate`` answered, and the browser
processes' memory (PSS) with that one session open.

    .venv/bin/python scripts/measure_cold_start.py [--runs 5] [--command '.venv/bin/webhand mcp'] [--vs 'OTHER'] [--first-start]

Prints medians (milliseconds, MB); with ``--vs`` the two commands run in turn (A B A B ...) and
each figure's A/B ratio is taken pair by pair, which holds on a busy machine. The side-by-side
benchmark with the peers is `make bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import sys
import tempfile
import time

import psutil
from mcp import ClientSession, StdioServerParameters, stdio_client

from webhand.surfaces.cli.demo import serve_demo_site


def browser_pss_mb(server_pid: int) -> tuple[float, int]:
    """PSS of the Chromium processes below the server (shared pages split among their users), crash
    handlers left out as in bench/measure.py (they leave a peer's process tree, not webhand's)."""
    total, count = 0, 0
    for process in psutil.Process(server_pid).children(recursive=True):
        try:
            name = process.name().lower()
            if "chrom" not in name or "crashpad" in name:
                continue
            total += process.memory_full_info().pss
            count += 1
        except psutil.Error:
            continue
    return total / 1e6, count


async def one_run(command: list[str], url: str, first_start: bool = False) -> dict[str, float]:
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": tempfile.mkdtemp(prefix="cold-start-")}
    if first_start:  # no launch memo from an earlier start (engine/launch/launch_memo.py)
        env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="cold-start-cache-")
    before = {p.pid for p in psutil.Process().children()}
    started = time.perf_counter()
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            initialized = time.perf_counter()
            server = next(p for p in psutil.Process().children() if p.pid not in before)
            cpu = server.cpu_times()  # the server's own CPU until it answered: steadier than wall time on a busy machine
            await session.list_tools()  # what a host does next; with the early answer, the SDK's import shows here
            listed = time.perf_counter()
            reply = await session.call_tool("browser_navigate", {"url": url})
            navigated = time.perf_counter()
            assert not reply.is_error, reply.content
            own = server.cpu_times()
            tree_cpu = own.user + own.system
            for child in server.children(recursive=True):
                try:
                    t = child.cpu_times()
                    tree_cpu += t.user + t.system
                except psutil.Error:
                    pass
            await asyncio.sleep(1.0)  # let the page settle its memory
            pss, count = browser_pss_mb(server.pid)
    return {"initialize_ms": (initialized - started) * 1000, "server_cpu_to_initialize_ms": (cpu.user + cpu.system) * 1000,
            "tools_listed_ms": (listed - started) * 1000, "first_page_ms": (navigated - started) * 1000,
            "server_cpu_to_first_page_ms": (own.user + own.system) * 1000, "tree_cpu_to_first_page_ms": tree_cpu * 1000,
            "browser_pss_mb": pss, "browser_processes": count}


async def main(runs: int, commands: list[list[str]], first_start: bool = False) -> None:
    samples: list[dict[str, list[float]]] = [{} for _ in commands]
    with serve_demo_site() as url:
        for _ in range(runs):
            for command, own in zip(commands, samples, strict=True):  # interleaved: A B A B ...
                for key, value in (await one_run(command, url, first_start)).items():
                    own.setdefault(key, []).append(value)
    print(f"load average {os.getloadavg()[0]:.1f}; {runs} runs each")
    for key in samples[0]:
        line = f"{key:<28}" + "".join(f" {statistics.median(own[key]):9.1f}" for own in samples)
        if len(samples) == 2:
            ratios = [a / b for a, b in zip(samples[0][key], samples[1][key], strict=True) if b]
            line += f"   A/B {statistics.median(ratios):.2f}x" if ratios else ""
        print(line)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--command", default=f"{sys.executable} -m webhand mcp", help="the server to spawn (A)")
    parser.add_argument("--vs", help="a second server (B), run in turn with A")
    parser.add_argument("--first-start", action="store_true",
                        help="give every start an empty cache: webhand's first start, with no launch memo")
    options = parser.parse_args()
    asyncio.run(main(options.runs, [shlex.split(c) for c in (options.command, options.vs) if c], options.first_start))
