"""PNG plots of a bench run (matplotlib, no display): latency per step per server, snapshot size per
page, snapshot growth with page size, and session scaling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STEPS = ("navigate", "snapshot", "type", "click", "press_key")
DPI = 80


def _bars(ax: Any, groups: list[str], series: dict[str, list[float | None]], errors: dict[str, list[float]] | None = None) -> None:
    width = 0.8 / max(1, len(series))
    for index, (label, values) in enumerate(series.items()):
        xs = [g + index * width - 0.4 + width / 2 for g in range(len(groups))]
        heights = [v or 0 for v in values]
        err = None
        if errors and label in errors:
            err = [[0] * len(heights), [max(0.0, e - h) for e, h in zip(errors[label], heights)]]
        ax.bar(xs, heights, width, label=label, yerr=err, capsize=2)
    ax.set_xticks(range(len(groups)), groups, rotation=30, ha="right")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def latency(results: dict[str, Any], out: Path) -> Path | None:
    servers = (results.get("actions") or {}).get("servers") or {}
    if not servers:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.5))
    series = {v["label"]: [(v["latency_ms"].get(s) or {}).get("median") for s in STEPS] for v in servers.values()}
    p95 = {v["label"]: [(v["latency_ms"].get(s) or {}).get("p95") or 0 for s in STEPS] for v in servers.values()}
    _bars(ax, list(STEPS), series, p95)
    ax.set_ylabel("reply time, ms (bar: median, whisker: p95)")
    ax.set_title("Action reply latency per step")
    return _save(fig, out / "latency.png")


def snapshot_size(results: dict[str, Any], out: Path) -> Path | None:
    snap = results.get("snapshots") or {}
    modes, pages = snap.get("modes") or {}, snap.get("pages") or {}
    if not pages:
        return None
    fig, ax = plt.subplots(figsize=(10, 4.5))
    names = list(pages)
    series = {label: [(pages[p].get(mode) or {}).get("tokens") for p in names] for mode, label in modes.items()}
    _bars(ax, names, series)
    ax.set_yscale("log")
    ax.set_ylabel("snapshot tokens (cl100k_base, log)")
    ax.set_title("Snapshot size per page")
    return _save(fig, out / "snapshot_size.png")


def snapshot_scaling(results: dict[str, Any], out: Path) -> Path | None:
    snap = results.get("snapshots") or {}
    scaling, modes = snap.get("scaling") or {}, snap.get("modes") or {}
    if not any(scaling.values()):
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for mode, points in scaling.items():
        if not points:
            continue
        xs = [p["elements"] for p in points]
        left.plot(xs, [p["ms"] for p in points], marker="o", label=modes.get(mode, mode))
        right.plot(xs, [p["tokens"] for p in points], marker="o", label=modes.get(mode, mode))
    for ax, label in ((left, "snapshot time, ms (median)"), (right, "snapshot tokens")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("page elements")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    left.legend(fontsize=7)
    fig.suptitle("Snapshot growth with page size")
    return _save(fig, out / "snapshot_scaling.png")


def sessions(results: dict[str, Any], out: Path) -> Path | None:
    scale = results.get("scale") or {}
    if not any((scale.get(i) or {}).get("levels") for i in ("process", "context")):
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for isolation in ("process", "context"):
        levels = (scale.get(isolation) or {}).get("levels") or []
        xs = [lv["sessions"] for lv in levels]
        left.plot(xs, [(lv["latency_ms"] or {}).get("p95") for lv in levels], marker="o", label=f"{isolation} p95")
        left.plot(xs, [(lv["latency_ms"] or {}).get("median") for lv in levels], marker=".", linestyle="--", label=f"{isolation} p50")
        right.plot(xs, [lv["browser_pss_mb"] for lv in levels], marker="o", label=isolation)
    left.axhline(scale.get("limit_ms", 1000), color="red", linewidth=0.8, label="1 s")
    left.set_ylabel("action reply, ms")
    right.set_ylabel("browser PSS, MB")
    for ax in (left, right):
        ax.set_xlabel("concurrent sessions")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Session scaling (webhand Python API)")
    return _save(fig, out / "session_scaling.png")


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def draw(results: dict[str, Any], out: Path) -> list[Path]:
    return [p for p in (latency(results, out), snapshot_size(results, out), snapshot_scaling(results, out),
                        sessions(results, out)) if p is not None]
