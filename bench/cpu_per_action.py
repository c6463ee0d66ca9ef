#!/usr/bin/env python3
"""CPU time per action, per process, with many sessions at once.

    PYTHONPATH=src .venv/bin/python bench/cpu_per_action.py --sessions 20 --rounds 3
    PYTHONPATH=src .venv/bin/python bench/cpu_per_action.py --isolation process --sessions 10
    PYTHONPATH=src .venv/bin/python bench/cpu_per_action.py --per-tool 30      # one session, by tool
    PYTHONPATH=src .venv/bin/python bench/cpu_per_action.py --drivers cdp --profile /tmp/host.svg  # py-spy

At 50 sessions acting about once a second, a 2-core machine has about 40 ms of CPU per action
for everything: our Python host, Playwright's Node driver, Chromium's browser process and its
renderers. Wall-clock latency on a shared machine swings by 2x; CPU time barely moves. So this
measures, for the scale suite's action mix (type, click Add, tick a box, snapshot; bench/suites/
scale.py), the CPU each process class spent per action, and separately per session per second
while the sessions sit idle (what polling costs, which grows with the number of sessions).

Process classes: host (this process: webhand, minus nothing; the page server thread is idle
during the measured phases), node (Playwright's driver), browser (Chromium's main process),
renderers (--type=renderer), other (GPU, network and storage utility processes, zygotes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import measure  # noqa: E402
from pages import PageServer  # noqa: E402

from webhand import Settings, Webhand  # noqa: E402

CLASSES = ("host", "node", "browser", "renderers", "other")
STEPS = (("browser_type", "field", {"text": "task"}), ("browser_click", "add", {}),
         ("browser_click", "box", {}), ("browser_snapshot", None, {}))


def _class_of(process: psutil.Process) -> str:
    if process.pid == os.getpid():
        return "host"
    name = process.name().lower()
    if "node" in name:
        return "node"
    if not any(n in name for n in ("chrom", "headless")):
        return "other"
    command = " ".join(process.cmdline())
    if "--type=renderer" in command:
        return "renderers"
    return "other" if "--type=" in command else "browser"


class CpuMeter:
    """CPU seconds (user + system) of this process and every descendant, by class. A process that
    exits between two readings loses what it spent since the first (Chromium's renderers live as
    long as their page, so that is rare while the sessions stay open)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[psutil.Process, str]] = {}

    def read(self, *, discover: bool = True) -> dict[int, tuple[str, float]]:
        """``discover``: look for new processes first (walking /proc costs the host a few ms, so a
        reading around one call does not)."""
        if discover or not self._known:
            me = psutil.Process()
            for process in [me, *me.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    if process.pid not in self._known:  # its class is read once
                        self._known[process.pid] = (process, _class_of(process))
        readings = {}
        for pid, (kept, kind) in list(self._known.items()):
            try:
                times = kept.cpu_times()
                readings[pid] = (kind, times.user + times.system)
            except psutil.Error:
                continue
        return readings

    @staticmethod
    def spent(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
        totals = dict.fromkeys(CLASSES, 0.0)
        for pid, (kind, seconds) in after.items():
            totals[kind] += seconds - before.get(pid, (kind, 0.0))[1]
        return totals


def _ref(text: str, role: str, name: str) -> str | None:
    import re

    found = re.search(rf'{re.escape(role)} "{re.escape(name)}[^\n]*?\[((?:f\d+)?e\d+)\]', text)
    return found.group(1) if found else None


async def _open(wh: Webhand, number: int, url: str) -> tuple[Any, dict[str, str | None]]:
    tools = wh.conversation(f"cpu-{number}")
    reply = await tools.call("browser_navigate", {"url": url})
    assert not reply.is_error, reply.text
    shot = (await tools.call("browser_snapshot", {})).text
    refs = {"field": _ref(shot, "textbox", "New todo"), "add": _ref(shot, "button", "Add"),
            "box": _ref(shot, "checkbox", "Buy milk")}
    assert all(refs.values()), shot[:300]
    return tools, refs


async def measure_driver(driver: str, pages: PageServer, sessions: int, rounds: int, think: float,
                         idle_seconds: float, isolation: str = "context") -> dict[str, Any]:
    settings = Settings.from_sources({"driver": driver, "isolation": isolation, "warm_reserve": False,
                                      "max_sessions": sessions + 2,
                                      "output_dir": tempfile.mkdtemp(prefix="webhand-bench-cpu-")}, env={})
    meter = CpuMeter()
    async with Webhand(settings) as wh:
        gate = asyncio.Semaphore(4)

        async def opened(number: int) -> tuple[Any, dict[str, str | None]]:
            async with gate:
                return await _open(wh, number, pages.url("/todo"))

        agents = await asyncio.gather(*(opened(n) for n in range(sessions)))
        await asyncio.sleep(1.0)  # let the page loads settle
        before = meter.read()
        await asyncio.sleep(idle_seconds)
        idle = CpuMeter.spent(before, meter.read())
        errors: list[str] = []
        latencies: list[float] = []

        async def act(number: int, tools: Any, refs: dict[str, str | None]) -> None:
            await asyncio.sleep(think * number / sessions)  # spread the starts evenly
            for _ in range(rounds):
                for tool, ref, extra in STEPS:
                    started = time.perf_counter()
                    reply = await tools.call(tool, {**extra, **({"ref": refs[ref]} if ref else {})})
                    latencies.append((time.perf_counter() - started) * 1000)
                    if reply.is_error:
                        errors.append(f"{tool}: {reply.text[:120]}")
                    await asyncio.sleep(think)

        before, wall = meter.read(), time.perf_counter()
        await asyncio.gather(*(act(n, tools, refs) for n, (tools, refs) in enumerate(agents)))
        wall = time.perf_counter() - wall
        busy = CpuMeter.spent(before, meter.read())
        pss_mb, _ = measure.browser_pss_mb()  # every browser process below this one, shared pages split
    actions = sessions * rounds * len(STEPS)
    # What the sessions would have cost doing nothing over the same time is part of the figure:
    # polling grows with sessions x seconds, and at 50 sessions it is paid per action too.
    per_action = {k: round(v * 1000 / actions, 1) for k, v in busy.items()}
    per_action["total"] = round(sum(busy.values()) * 1000 / actions, 1)
    idle_rate = {k: round(v * 1000 / (sessions * idle_seconds), 2) for k, v in idle.items()}
    idle_rate["total"] = round(sum(idle.values()) * 1000 / (sessions * idle_seconds), 2)
    latencies.sort()
    return {"driver": driver, "isolation": isolation, "sessions": sessions, "actions": actions, "wall_s": round(wall, 1),
            "cpu_ms_per_action": per_action, "idle_cpu_ms_per_session_second": idle_rate,
            "p50_ms": round(latencies[len(latencies) // 2]), "p95_ms": round(latencies[int(len(latencies) * 0.95) - 1]),
            "errors": len(errors), "first_errors": errors[:3], "browser_pss_mb": pss_mb,
            "load_average": os.getloadavg()}


async def per_tool(driver: str, pages: PageServer, repeats: int) -> dict[str, Any]:
    """One session, one call at a time: the CPU of each tool alone, by process class (ms per call)."""
    settings = Settings.from_sources({"driver": driver, "isolation": "context", "warm_reserve": False,
                                      "output_dir": tempfile.mkdtemp(prefix="webhand-bench-cpu-")}, env={})
    meter = CpuMeter()
    spent: dict[str, dict[str, float]] = {}
    async with Webhand(settings) as wh:
        tools, refs = await _open(wh, 0, pages.url("/todo"))
        for _ in range(repeats):
            for tool, ref, extra in STEPS:
                meter.read()  # finds any new process outside the measured window
                before = meter.read(discover=False)
                reply = await tools.call(tool, {**extra, **({"ref": refs[ref]} if ref else {})})
                assert not reply.is_error, reply.text
                name = tool.removeprefix("browser_") + (f"_{ref}" if ref else "")
                for kind, seconds in CpuMeter.spent(before, meter.read(discover=False)).items():
                    spent.setdefault(name, dict.fromkeys(CLASSES, 0.0))[kind] += seconds
    table = {name: {k: round(v * 1000 / repeats, 1) for k, v in kinds.items()} for name, kinds in spent.items()}
    for kinds in table.values():
        kinds["total"] = round(sum(kinds.values()), 1)
    return {"driver": driver, "repeats": repeats, "cpu_ms_per_call": table, "load_average": os.getloadavg()}


async def transport(pages: PageServer, repeats: int) -> dict[str, Any]:
    """The raw-CDP driver's socket alone: host and browser CPU per round trip (microseconds), for a
    small answer and a 100 KB one (about a big page's snapshot)."""
    settings = Settings.from_sources({"driver": "cdp", "isolation": "context", "warm_reserve": False,
                                      "output_dir": tempfile.mkdtemp(prefix="webhand-bench-cpu-")}, env={})
    meter = CpuMeter()
    figures: dict[str, Any] = {}
    async with Webhand(settings) as wh:
        await _open(wh, 0, pages.url("/todo"))
        session = wh.sessions.find("cpu-0", None)
        client, page = session.browser.connection.client, session.active_tab.session_id
        big = {"expression": "Array.from({length: 5000}, (_, i) => 'row ' + i + ' text').join('\\n')",
               "returnByValue": True}
        for name, method, params, target in (("Browser.getVersion", "Browser.getVersion", None, None),
                                             ("evaluate, 100 KB answer", "Runtime.evaluate", big, page)):
            meter.read()
            before = meter.read(discover=False)
            for _ in range(repeats):
                await client.send_raw(method, params, target)
            spent = CpuMeter.spent(before, meter.read(discover=False))
            figures[name] = {k: round(v * 1e6 / repeats) for k, v in spent.items() if v}
        figures["compressed"] = bool(client.ws.protocol.extensions)
    return {"driver": "cdp", "cpu_us_per_round_trip": figures, "load_average": os.getloadavg()}


async def main(args: argparse.Namespace) -> int:
    profiler = None
    if args.profile:
        profiler = subprocess.Popen(["py-spy", "record", "-o", args.profile, "-r", "50", "-p", str(os.getpid()),
                                     *(["--format", "raw"] if not args.profile.endswith(".svg") else [])],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = []
    with PageServer() as pages:
        for driver in args.drivers.split(","):
            if args.transport:
                result = await transport(pages, args.transport)
                print(json.dumps(result), flush=True)
                break
            if args.per_tool:
                result = await per_tool(driver, pages, args.per_tool)
            else:
                result = await measure_driver(driver, pages, args.sessions, args.rounds, args.think, args.idle,
                                              args.isolation)
            print(json.dumps(result), flush=True)
            results.append(result)
    if profiler is not None:
        profiler.send_signal(2)
        profiler.wait(timeout=30)
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--drivers", default="playwright,cdp", help="comma-separated: playwright, cdp")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=4, help="rounds of the four actions per session")
    parser.add_argument("--think", type=float, default=1.0, help="seconds between a session's actions")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of the idle phase")
    parser.add_argument("--isolation", default="context", choices=("context", "process"))
    parser.add_argument("--per-tool", type=int, default=0, metavar="N",
                        help="instead: one session, each tool N times in turn, CPU per call by tool")
    parser.add_argument("--transport", type=int, default=0, metavar="N",
                        help="instead: N round trips on the raw-CDP driver's socket, small and 100 KB answers")
    parser.add_argument("--profile", help="py-spy the host into this file (.svg flame graph, else raw)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
