#!/usr/bin/env python3
"""webhand side by side with its peers: latency, tokens, sessions, memory and scale.

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
import importlib
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
import report  # noqa: E402
from pages import PageServer  # noqa: E402
from peers import specs  # noqa: E402
from suites import Run  # noqa: E402

SUITES = ("tools_list", "first_page", "actions", "snapshots", "memory", "scale")


def find_chrome(given: str | None) -> str:
    if given:
        return given
    for path in ("/usr/lib/chromium/chromium", os.environ.get("WEBHAND_CHROME", "")):
        if path and Path(path).exists():
            return path
    from webhand.engine.chrome import find_chromium

    return find_chromium()


def machine(chrome: str) -> dict[str, object]:
    import psutil

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
    results: dict[str, object] = {"mode": "quick" if args.quick else "full",
                                  "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                                  "machine": machine(chrome)}
    with PageServer() as pages:
        bench = Run(quick=args.quick, chrome=chrome, pages=pages, specs=specs(chrome))
        results["servers"] = {s.key: {"label": s.label, "version": s.version, "command": " ".join(
            [Path(s.command).name, *s.args]), "note": s.note} for s in bench.specs}
        if pages.pydocs is None:
            bench.note("python3-doc is not installed: the real-document pages (Python's HTML docs) are skipped")
        for name in chosen:
            print(f"[{time.time() - started:6.1f}s] suite {name}", flush=True)
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


def cleanup_check(bench: Run, grace: float = 15.0) -> dict[str, object]:
    """Every server and browser the bench started must be gone (after a short grace for exits in flight)."""
    import psutil

    def alive() -> list[str]:
        out = []
        for pid, created in bench.seen_pids.items():
            try:
                process = psutil.Process(pid)
                if process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE:
                    out.append(f"{pid} {process.name()}")
            except psutil.Error:
                continue
        return out

    deadline = time.time() + grace
    left, still = measure.leftover_processes(), alive()
    while (left or still) and time.time() < deadline:
        time.sleep(0.5)
        left, still = measure.leftover_processes(), alive()
    ok = not left and not still
    print(f"  cleanup: {'all servers and browsers gone' if ok else f'LEFT RUNNING: {left} {still}'}", flush=True)
    return {"ok": ok, "processes_seen": len(bench.seen_pids), "still_running": left, "seen_still_alive": still}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and smaller ladders (under 3 minutes)")
    parser.add_argument("--suites", help=f"comma-separated subset of: {', '.join(SUITES)}")
    parser.add_argument("--chrome", help="Chromium binary every server launches (default: Debian's)")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"), help="results folder")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    return parser.parse_args(argv)


if __name__ == "__main__":
    if shutil.which("node") is None:
        print("note: node is not installed; only webhand will run", file=sys.stderr)
    sys.exit(asyncio.run(main(parse_args())))
