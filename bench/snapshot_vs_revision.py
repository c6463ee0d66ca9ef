#!/usr/bin/env python3
"""Snapshot cost of this tree next to an older revision's, on the generated 10k/50k-element pages.

    .venv/bin/python bench/snapshot_vs_revision.py ed2f9ff            # modes: interactive, full, page
    .venv/bin/python bench/snapshot_vs_revision.py ed2f9ff --rounds 3

The older revision's ``src`` is exported with ``git archive`` into a temporary folder, and each
round runs both trees in turn (old, new, old, new …) in subprocesses of the same venv, so a
drifting machine affects both alike. Each subprocess prints the fastest of 5 snapshots per mode:
the renderer processes' CPU time (what other load inflates least) and the wall time. A mode the
older tree does not know (``page`` before it existed) is skipped for it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASURE = r"""
import asyncio, sys, time, typing
sys.path.insert(0, sys.argv[1])
import snapshot_scaling as bench
from webhand.page.snapshot import Mode, take_snapshot
KNOWN = typing.get_args(Mode)
async def main():
    async with bench._Bench() as page_server:
        for n in (10000, 50000):
            tab = await page_server.open(f"snapshot/big.html?n={n}")
            for mode, max_refs in (("interactive", 200), ("page", 200), ("full", None)):
                if mode not in KNOWN:
                    continue  # this tree does not have the mode
                cpu, wall = [], []
                for _ in range(5):
                    before, start = bench._renderer_cpu(), time.perf_counter()
                    await take_snapshot(tab, mode=mode, max_refs=max_refs)
                    wall.append((time.perf_counter() - start) * 1000)
                    cpu.append((bench._renderer_cpu() - before) * 1000)
                if cpu:
                    print(f"{n:>6} {mode:<12} cpu {min(cpu):6.0f} ms   wall {min(wall):6.0f} ms", flush=True)
asyncio.run(main())
"""


def export(revision: str, into: Path) -> Path:
    archive = into / "src.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), revision, "src"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revision", help="the older revision to compare with (a commit, tag or branch)")
    parser.add_argument("--rounds", type=int, default=2, help="old/new pairs to run (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        trees = {f"{args.revision} (old)": export(args.revision, Path(scratch)), "this tree": ROOT / "src"}
        for round_number in range(1, args.rounds + 1):
            for label, src in trees.items():
                print(f"-- round {round_number}, {label}", flush=True)
                env = {**os.environ, "PYTHONPATH": str(src)}
                subprocess.run([sys.executable, "-c", MEASURE, str(ROOT / "bench")], env=env, check=True)


if __name__ == "__main__":
    main()
