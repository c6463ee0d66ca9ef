#!/usr/bin/env python3
"""webhand's two drivers side by side: Playwright and raw CDP, through webhand's Python API.

    .venv/bin/python bench/drivers.py            # about 3 minutes
    .venv/bin/python bench/drivers.py --quick    # about 1 minute

Per driver, on pages served on 127.0.0.1, every figure a median over rounds that alternate the
drivers (so a load spike from elsewhere hits both):

- cold spawn → first page: a fresh Python process imports webhand, launches Chromium and answers
  its first browser_navigate (wall time of the whole child process up to that reply);
- click, type and press_key replies (ms), and the CDP messages each one sends (raw CDP driver;
  Playwright's own messages are counted from its protocol log, DEBUG=pw:protocol);
- snapshot of the 10,000-element generated page (bench/pages.py) (ms);
- memory with one session: browser + host (+ Playwright's Node driver), unique set size (USS) in MB;
- 50 sessions at once (context isolation): each navigates, types, clicks and snapshots; wall time
  and p95 of the replies.

Results: bench/results/drivers.md and drivers.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pages import PageServer

from webhand import Settings, Webhand

DRIVERS = ("playwright", "cdp")
_COLD = """
import asyncio, sys, time
started = float(sys.argv[3])
from webhand import Settings, Webhand
async def main():
    settings = Settings.from_sources({"driver": sys.argv[1], "output_dir": sys.argv[4], "isolation": "process",
                                      "warm_reserve": False}, env={})
    async with Webhand(settings) as wh:
        reply = await wh.conversation("cold").call("browser_navigate", {"url": sys.argv[2]})
        assert not reply.is_error, reply.text
        print(time.time() - started, flush=True)
asyncio.run(main())
"""


def _settings(driver: str, **extra: Any) -> Settings:
    base = {"driver": driver, "output_dir": tempfile.mkdtemp(prefix="webhand-bench-drivers-"), "isolation": "context",
            "warm_reserve": False, "snapshot_max_chars": 10_000_000, "max_sessions": 60, "capabilities": ["all"]}
    return Settings.from_sources({**base, **extra}, env={})


def cold_start(driver: str, url: str) -> float:
    out = tempfile.mkdtemp(prefix="webhand-bench-cold-")
    started = time.time()
    done = subprocess.run([sys.executable, "-c", _COLD, driver, url, repr(started), out], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    if done.returncode != 0:
        raise RuntimeError(f"cold start on {driver} failed: {done.stderr[-500:]}")
    return float(done.stdout.strip().splitlines()[-1]) * 1000


def _uss(processes: list[psutil.Process]) -> float:
    total = 0
    for process in processes:
        try:
            total += process.memory_full_info().uss
        except psutil.Error:
            continue
    return total / 2**20


class _MessageCount:
    """CDP messages the raw driver sends, counted at its one client (its send_raw)."""

    def __init__(self) -> None:
        self.count = 0
        from cdp_use.client import CDPClient

        self._original = CDPClient.send_raw
        counter = self

        async def counted(client: Any, method: str, params: Any = None, session_id: Any = None) -> Any:
            counter.count += 1
            return await counter._original(client, method, params, session_id)

        CDPClient.send_raw = counted  # type: ignore[method-assign]


async def actions(driver: str, pages: PageServer, rounds: int, messages: _MessageCount | None) -> dict[str, Any]:
    """Median reply times of click, type and press_key, snapshot of the 10k page, memory with one session."""
    result: dict[str, Any] = {}
    async with Webhand(_settings(driver)) as wh:
        tools = wh.conversation("bench")
        reply = await tools.call("browser_navigate", {"url": pages.url("/todo")})
        assert not reply.is_error, reply.text
        times: dict[str, list[float]] = {"click": [], "type": [], "press_key": []}
        sent: dict[str, list[int]] = {"click": [], "type": [], "press_key": []}
        calls = {"click": ("browser_click", {"selector": "#add"}),
                 "type": ("browser_type", {"selector": "#new", "text": "Ada Lovelace"}),
                 "press_key": ("browser_press_key", {"key": "Tab"})}
        for _ in range(rounds):
            for step, (name, arguments) in calls.items():
                before = messages.count if messages else 0
                started = time.perf_counter()
                reply = await tools.call(name, arguments)
                times[step].append((time.perf_counter() - started) * 1000)
                assert not reply.is_error, reply.text
                if messages:
                    sent[step].append(messages.count - before)
        for step in calls:
            result[f"{step}_ms"] = round(statistics.median(times[step]), 1)
            if messages:
                result[f"{step}_messages"] = statistics.median(sent[step])
        # Memory: this process (the host), its children (Playwright's Node driver), and the browser.
        host = psutil.Process()
        everything = [host, *host.children(recursive=True)]
        result["memory_uss_mb"] = round(_uss(everything), 1)
        browser = [p for p in everything[1:] if "chrom" in p.name().lower()]
        result["browser_uss_mb"] = round(_uss(browser), 1)
        result["driver_process_uss_mb"] = round(_uss([p for p in everything[1:] if "node" in p.name().lower()]), 1)
        reply = await tools.call("browser_navigate", {"url": pages.url("/gen?n=10000")})
        assert not reply.is_error, reply.text
        snaps = []
        for _ in range(max(3, rounds // 4)):
            started = time.perf_counter()
            reply = await tools.call("browser_snapshot", {"mode": "full"})
            snaps.append((time.perf_counter() - started) * 1000)
            assert not reply.is_error, reply.text
        result["snapshot_10k_ms"] = round(statistics.median(snaps), 1)
    return result


async def concurrency(driver: str, pages: PageServer, sessions: int) -> dict[str, Any]:
    async with Webhand(_settings(driver)) as wh:
        replies: list[float] = []
        failures = 0

        async def agent(number: int) -> None:
            nonlocal failures
            tools = wh.conversation(f"agent-{number}")
            for name, arguments in (("browser_navigate", {"url": pages.url("/todo")}),
                                    ("browser_type", {"selector": "#new", "text": f"agent {number}"}),
                                    ("browser_click", {"selector": "#add"}), ("browser_snapshot", {})):
                started = time.perf_counter()
                reply = await tools.call(name, arguments)
                replies.append((time.perf_counter() - started) * 1000)
                failures += reply.is_error

        started = time.perf_counter()
        await asyncio.gather(*(agent(n) for n in range(sessions)))
        wall = (time.perf_counter() - started) * 1000
    replies.sort()
    return {"sessions": sessions, "wall_ms": round(wall), "p50_ms": round(replies[len(replies) // 2]),
            "p95_ms": round(replies[int(len(replies) * 0.95) - 1]), "failed": failures}


def playwright_messages(url: str) -> dict[str, int]:
    """CDP messages Playwright sends for the same click, type and press_key (its protocol log)."""
    script = f"""
import asyncio
from webhand import Settings, Webhand
async def main():
    s = Settings.from_sources({{"driver": "playwright", "isolation": "context", "warm_reserve": False}}, env={{}})
    async with Webhand(s) as wh:
        t = wh.conversation("m")
        await t.call("browser_navigate", {{"url": {url!r}}})
        for step, name, arguments in (("click", "browser_click", {{"selector": "#add"}}),
                                      ("type", "browser_type", {{"selector": "#new", "text": "Ada Lovelace"}}),
                                      ("press_key", "browser_press_key", {{"key": "Tab"}})):
            await t.call(name, arguments)  # once to warm up
            print("MARK", step, flush=True)
            import sys; print("MARK", step, file=sys.stderr, flush=True)
            await t.call(name, arguments)
            print("MARK end", file=sys.stderr, flush=True)
asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DEBUG": "pw:protocol", "PYTHONPATH": os.pathsep.join(sys.path)})
    counts: dict[str, int] = {}
    step = None
    for line in done.stderr.splitlines():
        if line.startswith("MARK "):
            step = line.split()[1] if line.split()[1] != "end" else None
            continue
        if step and "SEND ►" in line:
            counts[step] = counts.get(step, 0) + 1
    return counts


async def main(args: argparse.Namespace) -> int:
    rounds = 8 if args.quick else 20
    cold_rounds = 2 if args.quick else 5
    results: dict[str, Any] = {"rounds": rounds, "cold_rounds": cold_rounds, "drivers": {d: {} for d in DRIVERS}}
    with PageServer() as pages:
        url = pages.url("/todo")
        cold: dict[str, list[float]] = {d: [] for d in DRIVERS}
        for number in range(cold_rounds):
            for driver in DRIVERS if number % 2 == 0 else DRIVERS[::-1]:
                cold[driver].append(cold_start(driver, url))
        messages = _MessageCount()
        for driver in DRIVERS:
            figures = results["drivers"][driver]
            figures["cold_first_page_ms"] = round(statistics.median(cold[driver]))
            figures.update(await actions(driver, pages, rounds, messages if driver == "cdp" else None))
            figures["concurrency"] = await concurrency(driver, pages, args.sessions)
            print(driver, json.dumps(figures), flush=True)
        results["drivers"]["playwright"].update({f"{k}_messages": v for k, v in playwright_messages(url).items()})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "drivers.json").write_text(json.dumps(results, indent=2))
    (out / "drivers.md").write_text(report(results))
    print(report(results))
    return 0


def report(results: dict[str, Any]) -> str:
    rows = [("cold: spawn → first page, ms", "cold_first_page_ms"), ("click reply, ms", "click_ms"),
            ("type reply, ms", "type_ms"), ("press_key reply, ms", "press_key_ms"),
            ("CDP messages per click", "click_messages"), ("CDP messages per type", "type_messages"),
            ("CDP messages per press_key", "press_key_messages"), ("snapshot, 10k elements, ms", "snapshot_10k_ms"),
            ("browser + host memory, one session, USS MB", "memory_uss_mb"), ("  of which the browser", "browser_uss_mb"),
            ("  of which the driver process (Node)", "driver_process_uss_mb")]
    drivers = results["drivers"]
    lines = ["# webhand's drivers side by side", "",
             f"Medians ({results['rounds']} rounds of actions, {results['cold_rounds']} cold starts per driver); "
             "`bench/drivers.py` on this machine.", "",
             "| figure | Playwright | raw CDP |", "| --- | --- | --- |"]
    for label, key in rows:
        lines.append(f"| {label} | {drivers['playwright'].get(key, 'n/a')} | {drivers['cdp'].get(key, 'n/a')} |")
    for label, key in (("sessions at once: wall ms", "wall_ms"), ("  replies p50 ms", "p50_ms"),
                       ("  replies p95 ms", "p95_ms"), ("  failed replies", "failed")):
        sessions = drivers["cdp"]["concurrency"]["sessions"]
        lines.append(f"| {label.replace('sessions', f'{sessions} sessions')} | {drivers['playwright']['concurrency'][key]} | "
                     f"{drivers['cdp']['concurrency'][key]} |")
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (about a minute)")
    parser.add_argument("--sessions", type=int, default=50, help="sessions at once in the concurrency row (default 50)")
    parser.add_argument("--out", default=str(HERE / "results"), help="results folder")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
