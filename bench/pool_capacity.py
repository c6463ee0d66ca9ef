"""Sizing a pool: sessions per endpoint against the endpoint's memory and webhand's call latency,
and how long the sessions of a lost endpoint take to run again elsewhere.

One Playwright browser server (the Playwright package's own driver, `launch-server`, with the
machine's Chromium) is the endpoint, as in a pod of deploy/kubernetes.yaml. For each size N, N
sessions open on it and then, all at once, run rounds of navigate + snapshot on the bench's own
pages; the table gives the endpoint's memory (PSS of its whole process group: node and Chromium,
shared pages counted once) and the p50/p95 of those calls as the host sees them.

    .venv/bin/python bench/pool_capacity.py                  # sizes 1 5 10 20, 5 rounds
    .venv/bin/python bench/pool_capacity.py --sizes 1 10 --rounds 3

Absolute times depend on the machine and what else runs on it (the table says how many cores);
memory per session depends on the pages. Measure on your own pages before sizing a pool.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]  # the bench's pages; the tests' engine starter

from pages import PageServer

from remote_engines import PlaywrightServer
from webhand import Settings, Webhand
from webhand.session.placing import endpoint_name


def _pss_mb(server: PlaywrightServer) -> float:
    total = 0
    for process in server.processes():
        try:
            total += process.memory_full_info().pss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total / 2**20


def _settings(output: str, endpoints: list[PlaywrightServer], capacity: int, **pool: object) -> Settings:
    # A generous timeout: a call that still fails counts as failed (a sign of an overloaded endpoint).
    return Settings.from_sources({"output_dir": output, "capabilities": ["all"], "timeout": 60, "pool": {
        "endpoints": [{"name": f"pw{i}", "kind": "playwright", "url": s.url, "capacity": capacity}
                      for i, s in enumerate(endpoints, 1)], **pool}}, env={})


async def one_size(size: int, rounds: int, pages: PageServer, folder: Path) -> dict[str, float]:
    server = PlaywrightServer(folder)
    try:
        idle = _pss_mb(server)
        async with Webhand(_settings(str(folder / "out"), [server], size)) as wh:
            contexts = [wh.conversation(f"s{i}") for i in range(size)]
            opened = await asyncio.gather(*(c.call("browser_navigate", {"url": pages.url("/login")}) for c in contexts))
            failed = sum(reply.is_error for reply in opened)
            latencies: list[float] = []

            async def session_rounds(context: object) -> None:
                nonlocal failed
                for number in range(rounds):
                    for name, arguments in (("browser_navigate", {"url": pages.url(("/article", "/todo")[number % 2])}),
                                            ("browser_snapshot", {})):
                        started = time.perf_counter()
                        reply = await context.call(name, arguments)  # type: ignore[attr-defined]
                        latencies.append(time.perf_counter() - started)
                        failed += reply.is_error

            await asyncio.gather(*(session_rounds(c) for c in contexts))
            busy = _pss_mb(server)
        latencies.sort()
        return {"sessions": size, "idle_mb": idle, "mb": busy, "per_session_mb": (busy - idle) / size,
                "p50_ms": statistics.median(latencies) * 1000,
                "p95_ms": latencies[max(0, round(0.95 * len(latencies)) - 1)] * 1000, "calls": len(latencies),
                "failed": failed}
    finally:
        server.kill()


async def recovery(pages: PageServer, folder: Path) -> list[float]:
    """Seconds from an endpoint's kill to each of its sessions' first successful call elsewhere."""
    servers = [PlaywrightServer(folder) for _ in range(3)]
    try:
        async with Webhand(_settings(str(folder / "out"), servers, 4, health_interval=1)) as wh:
            contexts = [wh.conversation(f"r{i}") for i in range(6)]
            for context in contexts:
                await context.call("browser_navigate", {"url": pages.url("/login")})
            lost = [c for c in contexts if endpoint_name(wh.sessions.find(c.conversation_id)) == "pw1"]
            servers[0].kill()
            killed = time.perf_counter()
            times = []
            for context in lost:
                for _ in range(3):  # the call that raced the drop says so; the next one runs elsewhere
                    if not (await context.call("browser_navigate", {"url": pages.url("/login")})).is_error:
                        times.append(time.perf_counter() - killed)
                        break
            return times
    finally:
        for server in servers:
            server.kill()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 5, 10, 20])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with PageServer() as pages, tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; "
              f"{args.rounds} rounds of navigate + snapshot per session, all sessions at once\n")
        print("| sessions on one endpoint | endpoint memory (PSS) | per session | p50 call | p95 call | calls "
              "| failed |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for size in args.sizes:
            row = await one_size(size, args.rounds, pages, folder)
            print(f"| {size} | {row['mb']:.0f} MB | {row['per_session_mb']:.0f} MB | {row['p50_ms']:.0f} ms "
                  f"| {row['p95_ms']:.0f} ms | {row['calls']} | {row['failed']} |", flush=True)
        times = await recovery(pages, folder)
        print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
        print(f"recovery: {len(times)} sessions of a killed endpoint ran again elsewhere "
              f"{', '.join(f'{t:.2f} s' for t in times)} after the kill")


if __name__ == "__main__":
    asyncio.run(main())
