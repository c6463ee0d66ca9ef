#!/usr/bin/env python3
"""webhand side by side with its peers: latency, tokens, a warm CLI command, sessions, memory and scale.

    make bench            # full run (about 15-20 minutes)
    make bench QUICK=1    # quick run (under 3 minutes)
    .venv/bin/python bench/run.py --quick --suites actions,snapshots

Every server runs on this machine, in this run, against the same Chromium binary and the same
pages (served on 127.0.0.1 by the bench), so ratios hold even when absolute numbers are noisy.
Results: bench/results/latest.md, latest.json and PNG plots.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report  # noqa: E402
from pages import PageServer  # noqa: E402
from peers import specs  # noqa: E402
from suites import Run  # noqa: E402

SUITES = ("tools_list", "cli", "first_page", "actions", "snapshots", "memory", "scale", "flows")
#: Share of the run's time budget per suite; time a suite leaves unused goes to the ones after it.
SHARES = {"tools_list": 0.05, "cli": 0.04, "first_page": 0.15, "actions": 0.17, "snapshots": 0.33, "memory": 0.06, "scale": 0.24,
          "flows": 0.08}
#: Every process the bench starts inherits this variable, so the end of the run can find any left behind.
RUN_MARK = "WEBHAND_BENCH_RUN_ID"


def find_chrome(given: str | None) -> str:
    if given:
        return given
    for path in ("/usr/lib/chromium/chromium", os.environ.get("WEBHAND_CHROME", "")):
        if path and Path(path).exists():
            return path
    from webhand.engine.launch.chrome import find_chromium

    return find_chromium()


def machine(chrome: str) -> dict[str, object]:
    import webhand

    def version(command: list[str]) -> str:
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpus": os.cpu_count(), "cpu": cpu, "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "os": platform.platform(), "python": platform.python_version(), "node": version(["node", "--version"]),
            "chromium": version([chrome, "--version"]), "chromium_path": chrome, "webhand": webhand.__version__,
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


async def main(args: argparse.Namespace) -> int:
    chrome = find_chrome(args.chrome)
    chosen = [s.strip() for s in args.suites.split(",")] if args.suites else list(SUITES)
    unknown = set(chosen) - set(SUITES)
    if unknown:
        print(f"unknown suites: {', '.join(sorted(unknown))}; known: {', '.join(SUITES)}", file=sys.stderr)
        return 2
    started = time.time()
    budget = args.budget or (140.0 if args.quick else 1000.0)
    os.environ[RUN_MARK] = f"{os.getpid()}-{int(started)}"
    results: dict[str, object] = {"mode": "quick" if args.quick else "full", "budget_seconds": budget,
                                  "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                                  "machine": machine(chrome)}
    with PageServer() as pages:
        servers = specs(chrome, baseline=str(Path(args.baseline).resolve()) if args.baseline else None)
        if args.servers:
            wanted = {key.strip() for key in args.servers.split(",")}
            servers = [spec for spec in servers if spec.key in wanted]
        bench = Run(quick=args.quick, chrome=chrome, pages=pages, specs=servers,
                    scale_ladders=[x.strip() for x in args.scale_ladders.split(",")] if args.scale_ladders else None)
        results["servers"] = {s.key: {"label": s.label, "version": s.version, "command": " ".join(
            [Path(s.command).name, *s.args]), "note": s.note} for s in bench.specs}
        if pages.pydocs is None:
            bench.note("python3-doc is not installed: the real-document pages (Python's HTML docs) are skipped")
        for index, name in enumerate(chosen):
            remaining_share = sum(SHARES[n] for n in chosen[index:])
            bench.suite_deadline = time.time() + SHARES[name] / remaining_share * max(0.0, started + budget - time.time())
            print(f"[{time.time() - started:6.1f}s] suite {name} (until +{bench.suite_deadline - started:.0f}s)", flush=True)
            suite_started = time.time()
            try:
                module = importlib.import_module(f"suites.{name}")
                results[name] = await module.run(bench)
            except Exception as error:  # noqa: BLE001 - report it and go on with the next suite
                bench.note(f"suite {name} failed: {type(error).__name__}: {error}")
                results[name] = {"error": f"{type(error).__name__}: {error}"}
            results.setdefault("suite_seconds", {})[name] = round(time.time() - suite_started, 1)  # type: ignore[union-attr]
        await asyncio.sleep(1.0)
        results["cleanup"] = cleanup_check(bench)
        results["notes"] = bench.notes
    results["seconds"] = round(time.time() - started, 1)
    out = Path(args.out)
    written = report.write(results, out, plots=not args.no_plots)
    print(f"[{results['seconds']:6.1f}s] wrote " + ", ".join(str(p) for p in written))
    print((out / "latest.md").read_text() if (out / "latest.md").exists() else "")
    return 0


def _marked() -> list[psutil.Process]:
    """Processes anywhere on the machine (crash handlers re-parent to init) carrying this run's mark."""
    mark = f"{RUN_MARK}={os.environ.get(RUN_MARK)}".encode()
    found = []
    for process in psutil.process_iter():
        if process.pid == os.getpid():
            continue
        try:
            with open(f"/proc/{process.pid}/environ", "rb") as handle:
                if mark in handle.read().split(b"\0"):
                    if process.status() != psutil.STATUS_ZOMBIE:
                        found.append(process)
        except (OSError, psutil.Error):
            continue
    return found


def _describe(process: psutil.Process) -> str:
    try:
        return f"{process.pid} {process.name()}"
    except psutil.Error:
        return str(process.pid)


def cleanup_check(bench: Run, grace: float = 15.0) -> dict[str, object]:
    """Every server and browser the bench started must be gone (after a short grace for exits in flight).

    Found by the mark every process of the run inherits, so a browser helper that re-parented
    itself (Chromium's crash handler does) is found too. What is still there after the grace is
    reported, then ended by its pid."""
    deadline = time.time() + grace
    left = _marked()
    while left and time.time() < deadline:
        time.sleep(0.5)
        left = _marked()
    names = [_describe(p) for p in left]
    for process in left:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    gone, alive = psutil.wait_procs(left, timeout=5)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    ok = not names
    print(f"  cleanup: {'all servers and browsers gone' if ok else f'left after {grace:g} s, then ended by pid: {names}'}", flush=True)
    return {"ok": ok, "processes_seen": len(bench.seen_pids), "left_then_ended": names}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and smaller ladders (under 3 minutes)")
    parser.add_argument("--suites", help=f"comma-separated subset of: {', '.join(SUITES)}")
    parser.add_argument("--chrome", help="Chromium binary every server launches (default: Debian's)")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"), help="results folder")
    parser.add_argument("--budget", type=float, help="seconds the suites share (default: 140 quick, 1000 full)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--baseline", help="another checkout's src folder: its webhand runs beside this one as "
                        "`webhand-baseline` (before/after in one run; compare with bench/baseline_ratio.py)")
    parser.add_argument("--servers", help="comma-separated subset of the servers by key (webhand, webhand-baseline, "
                        "webhand-pw, webhand-ff, playwright, playwright-settle0, devtools, agent-browser)")
    parser.add_argument("--scale-ladders", help="the scale suite's ladders, comma-separated: context, pool, process "
                        "(default: all three)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    if shutil.which("node") is None:
        print("note: node is not installed; only webhand will run", file=sys.stderr)
    sys.exit(asyncio.run(main(parse_args())))
