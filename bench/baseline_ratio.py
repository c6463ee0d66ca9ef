#!/usr/bin/env python3
"""webhand against its own baseline, from one bench run (``bench/run.py --baseline <other src>``).

Every figure the run measured for both ``webhand`` and ``webhand-baseline`` (a step's median latency,
a first page, a snapshot, memory), side by side with their ratio: after / before. Both ran on the
same machine, in the same run, against the same pages, so the ratio holds when the absolute
numbers are noisy. A step counts as slower only past ``--tolerance`` (default 10 %, the spread of
one step's median between two rounds of the same code on this 2-core machine).

    .venv/bin/python bench/run.py --quick --baseline /tmp/before/src --servers webhand,webhand-baseline
    .venv/bin/python bench/baseline_ratio.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

AFTER, BEFORE = "webhand", "webhand-baseline"


def pairs(node: Any, path: tuple[str, ...] = ()) -> list[tuple[str, float, float]]:
    """(where, after, before) for every numeric figure both servers have under the same keys."""
    found: list[tuple[str, float, float]] = []
    if not isinstance(node, dict):
        return found
    for key in node:  # a server's figures under its key, or under "<server>:<mode>" (the snapshot suite)
        mode = key[len(AFTER):] if isinstance(key, str) and key.startswith(AFTER) else None
        if mode in ("",) or (mode or "").startswith(":"):
            other = BEFORE + mode
            if isinstance(node[key], dict) and isinstance(node.get(other), dict):
                found += _leaves(node[key], node[other], path + ((key,) if mode else ()))
    for key, value in node.items():
        if not (isinstance(key, str) and (key.startswith(AFTER + ":") or key.startswith(BEFORE) or key == AFTER)):
            found += pairs(value, path + (str(key),))
    return found


def _leaves(after: Any, before: Any, path: tuple[str, ...]) -> list[tuple[str, float, float]]:
    if isinstance(after, dict) and isinstance(before, dict):
        if "median" in after and "median" in before:  # a measured distribution: its median speaks for it
            return _leaves(after["median"], before["median"], path)
        out: list[tuple[str, float, float]] = []
        for key in after.keys() & before.keys():
            out += _leaves(after[key], before[key], path + (str(key),))
        return out
    numbers = (int, float)
    if isinstance(after, numbers) and isinstance(before, numbers) and not isinstance(after, bool) and before > 0:
        return [("/".join(path), float(after), float(before))]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="?", default=str(Path(__file__).resolve().parent / "results" / "latest.json"))
    parser.add_argument("--tolerance", type=float, default=0.10)
    parser.add_argument("--only", default="latency_ms,/ms,first_page", help="figures whose path holds one of these words "
                        "(comma-separated; empty for all)")
    args = parser.parse_args(argv)
    results = json.loads(Path(args.results).read_text())
    words = [w for w in args.only.split(",") if w]
    rows = [row for row in pairs(results) if not words or any(w in row[0] for w in words)]
    if not rows:
        print(f"no figure has both {AFTER} and {BEFORE}: run bench/run.py with --baseline", file=sys.stderr)
        return 2
    slower = 0
    print(f"{'figure':60} {'after':>10} {'before':>10} {'ratio':>7}")
    for where, after, before in sorted(rows):
        ratio = after / before
        flag = " slower" if ratio > 1 + args.tolerance else ""
        slower += bool(flag)
        print(f"{where[:60]:60} {after:10.1f} {before:10.1f} {ratio:7.2f}{flag}")
    print(f"{len(rows)} figures, {slower} slower than the baseline by more than {args.tolerance:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
