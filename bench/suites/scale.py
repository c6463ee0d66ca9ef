"""Concurrent sessions through webhand's Python API: the most that keep p95 action latency under 1 s.

A ladder of session counts, per isolation mode. At each level every session (one conversation
each, on the todo app) acts like an agent that is fast at thinking: type, click Add, tick a box,
snapshot, with a think time of 0.5-1.5 s between actions, for a few rounds, all sessions at once.
The level passes when the p95 of all those action replies is under 1 s and none failed. The ladder
stops after two levels in a row fail (one may be a load spike from elsewhere on the machine), when
memory runs low, or when the suite's time budget is spent; the figure is the largest level passed.

Three ladders: context isolation (every session a browser context of one Chromium webhand
launched), process isolation (a Chromium per session), and ``pool``: context sessions placed on a
pool of two CDP endpoints, two Chromiums started here with ``--remote-debugging-port`` the way a
user starts browsers for webhand to connect to (``[[pool.endpoints]] kind = "cdp"``). Each level
records the browsers' memory (PSS, shared pages counted once) and it per session, and the
machine's load average: other work on the machine makes the figures pessimistic.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

import measure
from suites import Run
from suites.first_page import _wait_for_reserve

LIMIT_MS = 1000.0
MIN_FREE_BYTES = 4 * 2**30


def _ref(text: str, role: str, name: str) -> str | None:
    found = re.search(rf'{re.escape(role)} "{re.escape(name)}[^\n]*?\[((?:f\d+)?e\d+)\]', text)
    return found.group(1) if found else None


class _Agent:
    def __init__(self, wh: Any, name: str, url: str, rng: random.Random) -> None:
        self.context = wh.conversation(name)
        self.url = url
        self.rng = rng
        self.refs: dict[str, str | None] = {}

    async def open(self) -> str | None:
        reply = await self.context.call("browser_navigate", {"url": self.url})
        if reply.is_error:
            return reply.text[:160]
        shot = (await self.context.call("browser_snapshot", {})).text
        self.refs = {"field": _ref(shot, "textbox", "New todo"), "add": _ref(shot, "button", "Add"),
                     "box": _ref(shot, "checkbox", "Buy milk")}
        missing = [k for k, v in self.refs.items() if v is None]
        return f"no ref for {missing} in: {shot[:200]}" if missing else None

    async def act(self, rounds: int, think: float, latencies: list[float], errors: list[str],
                  by_tool: dict[str, list[float]]) -> None:
        await asyncio.sleep(self.rng.uniform(0, think))
        steps = [("browser_type", {"ref": self.refs["field"], "text": "task"}), ("browser_click", {"ref": self.refs["add"]}),
                 ("browser_click", {"ref": self.refs["box"]}), ("browser_snapshot", {})]
        for _ in range(rounds):
            for tool, args in steps:
                started = measure.now()
                reply = await self.context.call(tool, args)
                latencies.append(measure.ms(measure.now() - started))
                by_tool.setdefault(tool.removeprefix("browser_") + ("_add" if args.get("ref") == self.refs["add"] else ""),
                                   []).append(latencies[-1])
                if reply.is_error:
                    errors.append(f"{tool}: {reply.text[:160]}")
                await asyncio.sleep(self.rng.uniform(0.5, 1.5) * think)


@contextlib.contextmanager
def _cdp_endpoints(count: int) -> Iterator[list[str]]:
    """``count`` Chromiums with remote debugging on 127.0.0.1 (the tests' starter); their http URLs.
    Each is ended by the PID this process started, with its process group, at the end."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
    from remote_engines import DebuggingChrome

    folder = Path(tempfile.mkdtemp(prefix="bench-pool-"))
    started: list[Any] = []
    try:
        for number in range(count):
            started.append(DebuggingChrome(folder / f"endpoint-{number}"))
        yield [browser.http_url for browser in started]
    finally:
        for browser in started:
            with contextlib.suppress(Exception):
                browser.kill()
        shutil.rmtree(folder, ignore_errors=True)


def _settings(bench: Run, isolation: str, sessions: int, endpoints: list[str]) -> Any:
    from webhand import Settings

    if isolation != "pool":
        return Settings(executable_path=bench.chrome, isolation=isolation, max_sessions=sessions)
    share = math.ceil(sessions / len(endpoints))
    pool = {"endpoints": [{"name": f"endpoint-{n}", "kind": "cdp", "url": url, "capacity": share}
                          for n, url in enumerate(endpoints)]}
    return Settings(isolation="context", max_sessions=sessions, pool=pool, warm_reserve=False)


async def _ladder(bench: Run, isolation: str, levels: list[int], rounds: int, budget: float,
                  min_samples: int, endpoints: list[str] | None = None) -> dict[str, Any]:
    from webhand import Webhand

    rng = random.Random(5)
    config = _settings(bench, isolation, max(levels) + 2, endpoints or [])
    results: list[dict[str, Any]] = []
    best = failures = 0
    stopped = "ladder done"
    started = measure.now()
    agents: list[_Agent] = []
    async with Webhand(config) as wh:
        for done, level in enumerate(levels):
            if done >= 2 and measure.now() - started > budget:  # the first two levels always run
                stopped = f"time budget ({budget:g} s) spent before {level} sessions"
                break
            if psutil.virtual_memory().available < MIN_FREE_BYTES:
                stopped = f"less than {MIN_FREE_BYTES >> 30} GB free before {level} sessions"
                break
            opening = measure.now()
            gate = asyncio.Semaphore(4)

            async def open_one(agent: _Agent) -> str | None:
                async with gate:
                    return await agent.open()

            fresh = [_Agent(wh, f"scale-{isolation}-{n}", bench.pages.url("/todo"), rng) for n in range(len(agents), level)]
            problems = [p for p in await asyncio.gather(*(open_one(a) for a in fresh)) if p]
            agents += fresh
            open_seconds = round(measure.now() - opening, 1)
            if config.warm_reserve:
                await _wait_for_reserve(wh)  # measure steady state, not the reserve's refill launch
            latencies: list[float] = []
            errors: list[str] = problems[:]
            by_tool: dict[str, list[float]] = {}
            level_rounds = max(rounds, math.ceil(min_samples / (4 * level)))  # enough samples for a p95 at small levels
            await asyncio.gather(*(a.act(level_rounds, 1.0, latencies, errors, by_tool) for a in agents if all(a.refs.values())))
            pss, processes = measure.browser_pss_mb()
            bench.remember_processes()
            stats = measure.summary(latencies) or {}
            passed = bool(latencies) and stats["p95"] < LIMIT_MS and not errors
            load = [round(x, 2) for x in os.getloadavg()]
            results.append({"sessions": level, "latency_ms": stats, "errors": len(errors), "first_errors": errors[:3],
                            "open_seconds": open_seconds, "browser_pss_mb": pss, "pss_per_session_mb": round(pss / level, 1),
                            "load_average": load,
                            "by_tool_ms": {k: measure.summary(v) for k, v in by_tool.items()}, "browser_processes": processes,
                            "passed": passed})
            print(f"  scale {isolation} {level} sessions: p50 {stats.get('median')} p95 {stats.get('p95')} ms, "
                  f"{len(errors)} errors, {pss:.0f} MB ({pss / level:.1f} per session), opened in {open_seconds} s, "
                  f"load {load}", flush=True)
            if passed:
                best, failures = level, 0
                continue
            failures += 1
            if failures == 2:
                stopped = f"two levels in a row failed (p95 {stats.get('p95')} ms, {len(errors)} errors at {level})"
                break
    return {"max_sessions_under_1s": best, "stopped": stopped, "levels": results}


#: The ladders of a full run: levels, rounds per level, most seconds, and share of the time left.
FULL_PLAN = {"context": ([1, 5, 10, 20, 35, 50, 75, 100, 125, 150], 3, 400.0, 0.45),
             "pool": ([1, 10, 25, 50, 75, 100, 125, 150], 3, 300.0, 0.6),
             "process": ([1, 5, 10, 20, 30, 40], 3, 300.0, 1.0)}
QUICK_PLAN = {"context": ([1, 10], 2, 40.0, 0.4), "pool": ([1, 10], 2, 40.0, 0.5), "process": ([1, 3], 2, 40.0, 1.0)}


async def run(bench: Run, only: list[str] | None = None) -> dict[str, Any]:
    plan = QUICK_PLAN if bench.quick else FULL_PLAN
    out: dict[str, Any] = {"limit_ms": LIMIT_MS, "think_seconds": "0.5-1.5", "actions": "type, click, click, snapshot",
                           "min_samples_per_level": 12 if bench.quick else 24, "cpus": os.cpu_count()}
    only = only or bench.scale_ladders
    for isolation, (levels, rounds, budget, share) in plan.items():
        if only and isolation not in only:
            continue
        seconds = min(budget, share * bench.left())
        if isolation != "pool":
            out[isolation] = await _ladder(bench, isolation, levels, rounds, seconds, 12 if bench.quick else 24)
            continue
        with _cdp_endpoints(2) as endpoints:
            out[isolation] = await _ladder(bench, isolation, levels, rounds, seconds, 12 if bench.quick else 24, endpoints)
            out[isolation]["endpoints"] = len(endpoints)
    return out
