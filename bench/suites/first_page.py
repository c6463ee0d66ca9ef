"""Time to the first page in a new session.

Over MCP, for every server: *cold* is spawn → initialize → tools/list → first browser_navigate
reply (the server and its browser start from nothing; a host lists the tools before its model's
first call, and a server that answers ``initialize`` early pays its imports at the list); *after idle* is the first navigate of a server that
was started and left alone for a few seconds (what an agent sees when its host started the
server ahead of the conversation; webhand's warm reserve is ready by then, the peers launch
their browser on that first call).

Through webhand's Python API, a new conversation's first navigate in: process isolation without
a reserve (a browser launch), process isolation with the warm reserve ready, and context
isolation (a context in the shared browser).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

import measure
from peers import FIREFOX_LAUNCH_TIMEOUT
from suites import Run

IDLE_SECONDS = 3.0


async def _one(bench: Run, spec: Any, url: str, samples: dict[str, list[float]], errors: list[str]) -> None:
    started = measure.now()
    async with bench.servers([spec]) as servers:
        if not servers:
            return
        samples["initialize"].append(measure.ms(measure.now() - started))
        await servers[0].tool_names()  # tools/list, as a host asks before its model's first call
        samples["tools_listed"].append(measure.ms(measure.now() - started))
        reply = await servers[0].navigate(url)
        if reply.is_error:
            errors.append(reply.text[:160])
        else:
            samples["cold_total"].append(measure.ms(measure.now() - started))
            samples["cold_first_call"].append(reply.ms)
    async with bench.servers([spec]) as servers:
        if not servers:
            return
        await asyncio.sleep(IDLE_SECONDS)
        reply = await servers[0].navigate(url)
        if reply.is_error:
            errors.append(reply.text[:160])
        else:
            samples["after_idle"].append(reply.ms)


async def _mcp(bench: Run, reps: int) -> dict[str, Any]:
    """Servers interleaved rep by rep, so a load spike hits them alike."""
    deadline = measure.now() + 0.6 * bench.left()  # the rest is for the API cases
    url = bench.pages.url("/login")
    chosen = [s for s in bench.specs if s.key != "playwright-settle0"]
    samples: dict[str, dict[str, list[float]]] = {s.key: defaultdict(list) for s in chosen}
    errors: dict[str, list[str]] = {s.key: [] for s in chosen}
    for number in range(reps):
        if number > 0 and measure.now() > deadline:
            bench.note(f"first page over MCP: {number} reps (time budget)")
            break
        for spec in chosen[number % len(chosen):] + chosen[:number % len(chosen)]:
            await _one(bench, spec, url, samples[spec.key], errors[spec.key])
    out: dict[str, Any] = {}
    for spec in chosen:
        out[spec.key] = {"label": spec.label, **{k: measure.summary(v) for k, v in samples[spec.key].items()},
                         "errors": errors[spec.key]}
        print(f"  first page {spec.label}: cold {out[spec.key].get('cold_total')}, "
              f"after idle {out[spec.key].get('after_idle')}", flush=True)
    return out


async def _wait_for_reserve(wh: Any, timeout: float = 15.0) -> None:
    """Wait until the manager's warm reserve (a browser, or a context) is ready.

    webhand has no public "reserve ready" signal; the bench peeks at the reserve's task
    (session/warm_reserve.py), and falls back to a fixed pause if that name changes."""
    deadline = measure.now() + timeout
    reserve = getattr(getattr(wh.sessions, "reserve", None), "task", "missing")
    if reserve == "missing":
        await asyncio.sleep(3.0)
        return
    while measure.now() < deadline:
        reserve = getattr(wh.sessions.reserve, "task", None)
        if reserve is not None and reserve.done():
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # let the launch's tail (first paint, CDP attach) finish


async def _api_case(bench: Run, name: str, reps: int, **settings: Any) -> dict[str, Any]:
    from webhand import Settings, Webhand

    url = bench.pages.url("/login")
    samples: list[float] = []
    errors: list[str] = []
    config = Settings(executable_path=bench.chrome, max_sessions=10, **settings)
    async with Webhand(config) as wh:
        for number in range(reps + 1):
            if number > 3 and bench.over():
                break
            if config.warm_reserve:
                await _wait_for_reserve(wh)
            else:
                await asyncio.sleep(0.3)
            context = wh.conversation(f"first-{name}-{number}")
            started = measure.now()
            reply = await context.call("browser_navigate", {"url": url})
            elapsed = measure.ms(measure.now() - started)
            bench.remember_processes()
            if reply.is_error:
                errors.append(reply.text[:160])
            elif number > 0 or config.isolation == "process":  # context: the first call starts the shared browser
                samples.append(elapsed)
            await wh.end_conversation(context.conversation_id)
    print(f"  first page API {name}: {measure.summary(samples)}", flush=True)
    return {**(measure.summary(samples) or {}), "errors": errors[:5]}


async def run(bench: Run) -> dict[str, Any]:
    mcp_reps, api_reps = (1, 3) if bench.quick else (4, 12)
    out: dict[str, Any] = {"idle_seconds": IDLE_SECONDS, "mcp_reps": mcp_reps, "api_reps": api_reps}
    out["mcp"] = await _mcp(bench, mcp_reps)
    out["api"] = {
        "process_cold": await _api_case(bench, "process_cold", max(3, api_reps // 2), isolation="process", warm_reserve=False),
        "process_warm": await _api_case(bench, "process_warm", api_reps, isolation="process", warm_reserve=True),
        "context": await _api_case(bench, "context", api_reps, isolation="context"),
    }
    if bench.spec("webhand-ff") is not None:  # the same browser launch on Firefox
        out["api"]["firefox_process_cold"] = await _api_case(bench, "firefox_process_cold", max(2, api_reps // 2),
                                                             isolation="process", warm_reserve=False, browser="firefox",
                                                             launch_timeout=FIREFOX_LAUNCH_TIMEOUT)
    return out
