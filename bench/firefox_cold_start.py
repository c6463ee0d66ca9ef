#!/usr/bin/env python3
"""A Firefox cold start through webhand's own launcher, phase by phase, with Firefox's CPU time.

    PYTHONPATH=src .venv/bin/python bench/firefox_cold_start.py [--rounds N]

Per launch: spawn → the BiDi endpoint announced; ``session.new`` (Firefox answers it once its first
window's idle startup tasks have run); a user context, a tab and a first page (a data: URL); and the
CPU seconds of Firefox's process group by then. CPU moves far less than wall time on a shared
machine. To compare with another revision, run it with that tree on PYTHONPATH, rounds alternating
(``git archive REV src | tar -x -C /tmp/rev``, then ``PYTHONPATH=/tmp/rev/src``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

import psutil

from webhand.engine.bidi.connection import BidiConnection
from webhand.engine.bidi.firefox import FirefoxProcess, find_firefox


def group_cpu_seconds(pgid: int) -> float:
    total = 0.0
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid:
                times = process.cpu_times()
                total += times.user + times.system
        except (ProcessLookupError, psutil.Error):
            continue
    return total


async def once() -> dict[str, float]:
    started = time.perf_counter()
    firefox = await FirefoxProcess.start(find_firefox(), timeout=120)
    endpoint = time.perf_counter()
    try:
        connection = await BidiConnection.open(firefox.ws_endpoint, timeout=120)
        session = time.perf_counter()
        user_context = await connection.send("browser.createUserContext", {})
        tab = await connection.send("browsingContext.create", {"type": "tab", "userContext": user_context["userContext"]})
        await connection.send("browsingContext.navigate", {"context": tab["context"], "url": "data:text/html,<p>hi",
                                                           "wait": "complete"})
        page = time.perf_counter()
        cpu = group_cpu_seconds(firefox.pid)
        await connection.close()
    finally:
        await firefox.close()
    return {"endpoint_s": endpoint - started, "session_new_s": session - endpoint, "first_page_s": page - session,
            "total_s": page - started, "firefox_cpu_s": cpu}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    samples = []
    for _ in range(rounds):
        sample = await once()
        samples.append(sample)
        print("  ".join(f"{k} {v:5.2f}" for k, v in sample.items()), f"(load {os.getloadavg()[0]:.1f})", flush=True)
    print("median  " + "  ".join(f"{k} {statistics.median(s[k] for s in samples):5.2f}" for k in samples[0]))


if __name__ == "__main__":
    asyncio.run(main())
