"""Flows on real apps (bench/flows.py): a task done through the tools, saved as a flow, replayed on a
fresh instance with browser_run_flow, and its Playwright export run on Chromium. Runs alone too:
``.venv/bin/python bench/flows.py``."""

from __future__ import annotations

from typing import Any

import flows
from suites import Run


async def run(bench: Run) -> dict[str, Any]:
    apps = list(flows.APPS)
    result = await flows.measure_all(apps, bench.chrome)
    for row in result["rows"]:
        if "error" in row:
            bench.note(f"flows: {row['app']} failed: {row['error'][:300]}")
    result["table"] = flows.table(result["rows"])
    bench.remember_processes()
    return result
