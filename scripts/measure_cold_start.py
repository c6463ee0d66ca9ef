"""Time what a user of ``webhand mcp`` over stdio waits for, with the official MCP client:
spawn → ``initialize`` answered, spawn → first ``browser_navigate`` answered, and the browser
processes' memory (PSS) with that one session open.

    .venv/bin/python scripts/measure_cold_start.py [--runs 5] [--command '.venv/bin/webhand mcp']

Prints medians (milliseconds, MB). The side-by-side benchmark with the peers is `make bench`.
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

from webhand.demo import serve_demo_site


def browser_pss_mb(server_pid: int) -> tuple[float, int]:
    """PSS of the Chromium processes below the server (shared pages split among their users)."""
    total, count = 0, 0
    for process in psutil.Process(server_pid).children(recursive=True):
        try:
            if "chrom" not in process.name().lower():
                continue
            total += process.memory_full_info().pss
            count += 1
        except psutil.Error:
            continue
    return total / 1e6, count


async def one_run(command: list[str], url: str) -> dict[str, float]:
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": tempfile.mkdtemp(prefix="cold-start-")}
    before = {p.pid for p in psutil.Process().children()}
    started = time.perf_counter()
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            initialized = time.perf_counter()
            server = next(p for p in psutil.Process().children() if p.pid not in before)
            cpu = server.cpu_times()  # the server's own CPU until it answered: steadier than wall time on a busy machine
            reply = await session.call_tool("browser_navigate", {"url": url})
            navigated = time.perf_counter()
            assert not reply.is_error, reply.content
            await asyncio.sleep(1.0)  # let the page settle its memory
            pss, count = browser_pss_mb(server.pid)
    return {"initialize_ms": (initialized - started) * 1000, "server_cpu_to_initialize_ms": (cpu.user + cpu.system) * 1000, "first_page_ms": (navigated - started) * 1000,
            "browser_pss_mb": pss, "browser_processes": count}


async def main(runs: int, command: list[str]) -> None:
    samples: dict[str, list[float]] = {}
    with serve_demo_site() as url:
        for _ in range(runs):
            for key, value in (await one_run(command, url)).items():
                samples.setdefault(key, []).append(value)
    for key, values in samples.items():
        print(f"{key:<28} median {statistics.median(values):8.1f}   (min {min(values):.1f}, max {max(values):.1f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--command", default=f"{sys.executable} -m webhand mcp", help="the server to spawn")
    options = parser.parse_args()
    asyncio.run(main(options.runs, shlex.split(options.command)))
