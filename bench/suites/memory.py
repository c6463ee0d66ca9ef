"""Memory per session through webhand's Python API: the browser processes' PSS.

Sessions are opened one after another on the same long page (no warm reserve, so nothing but
sessions is counted). *First* is the PSS with one session (a whole browser in process isolation;
the shared browser plus one context in context isolation); *each more* is the growth per added
session, (PSS(N) - PSS(1)) / (N - 1). The peers' one-session figures come from the action suite.
"""

from __future__ import annotations

import asyncio
from typing import Any

import measure
from peers import FIREFOX_LAUNCH_TIMEOUT
from suites import Run


async def _case(bench: Run, isolation: str, sessions: int, browser: str = "chromium", **extra: Any) -> dict[str, Any]:
    from webhand import Settings, Webhand

    config = Settings(executable_path=bench.chrome, isolation=isolation, warm_reserve=False, max_sessions=sessions + 2,
                      browser=browser, **extra)
    points: list[dict[str, Any]] = []
    errors: list[str] = []
    async with Webhand(config) as wh:
        for number in range(1, sessions + 1):
            reply = await wh.conversation(f"mem-{isolation}-{number}").call("browser_navigate",
                                                                        {"url": bench.pages.url("/article")})
            if reply.is_error:
                errors.append(reply.text[:160])
            await asyncio.sleep(0.5)  # let the page settle its memory
            if number in (1, sessions) or number % 4 == 0:
                pss, count = measure.browser_pss_mb()
                points.append({"sessions": number, "browser_pss_mb": pss, "browser_processes": count})
        bench.remember_processes()
    first = points[0]["browser_pss_mb"]
    last = points[-1]
    more = round((last["browser_pss_mb"] - first) / (last["sessions"] - 1), 1) if last["sessions"] > 1 else None
    print(f"  memory {isolation} ({browser}): first {first} MB, each more {more} MB", flush=True)
    return {"first_session_mb": first, "each_more_mb": more, "points": points, "errors": errors[:5]}


async def run(bench: Run) -> dict[str, Any]:
    sessions = 3 if bench.quick else 8
    out = {"sessions": sessions, "page": "/article",
           "process": await _case(bench, "process", sessions), "context": await _case(bench, "context", sessions)}
    if bench.spec("webhand-ff") is not None:  # Firefox: sessions are user contexts of one Firefox
        out["firefox_context"] = await _case(bench, "context", sessions, browser="firefox",
                                             launch_timeout=FIREFOX_LAUNCH_TIMEOUT)
    return out
