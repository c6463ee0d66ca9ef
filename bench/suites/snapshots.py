"""Snapshot size and time per page, and how both grow with page size.

For every page (the bench's own, generated pages of N elements, Python's docs when installed) each
server snapshots the same loaded page: webhand in its two modes (interactive, the default, and
full), Playwright MCP (one mode) and Chrome DevTools MCP (default, and verbose). Size is the
snapshot itself, in characters and cl100k_base tokens; when webhand put a large snapshot in a file,
the file is read back and counted, and ``to_file`` says so (the model's reply was then short).
"""

from __future__ import annotations

from typing import Any

import measure
from suites import Run

#: (server key, mode label, full?) — each is one column of the size table.
MODES = (("webhand", "webhand interactive", False), ("webhand", "webhand full", True),
         ("playwright", "Playwright MCP", False), ("devtools", "Chrome DevTools MCP", False),
         ("devtools", "Chrome DevTools MCP verbose", True))


def mode_key(server: str, full: bool) -> str:
    return f"{server}:{'full' if full else 'default'}"


CELL_BUDGET_SECONDS = 8.0  # stop repeating a snapshot once its samples add up to this


def _missing_counter() -> Any:
    """The check of bench/snapshot_scaling.py (controls Playwright refs that webhand lists without one), if present."""
    try:
        from snapshot_scaling import _missing

        return _missing
    except Exception:  # noqa: BLE001 - optional: that script belongs to another suite
        return None


async def _cell(bench: Run, server: Any, page: str, label: str, full: bool, reps: int,
                texts: dict[str, str]) -> dict[str, Any]:
    times: list[float] = []
    shot = None
    for _ in range(reps):
        shot = await server.snapshot(full=full)
        if shot.is_error:
            break
        times.append(shot.ms)
        if sum(times) > CELL_BUDGET_SECONDS * 1000 or bench.over():
            break
    if shot is None or shot.is_error:
        bench.note(f"{label} snapshot of {page} failed: {(shot.text if shot else '')[:120]}")
        return {"error": (shot.text if shot else "no reply")[:200]}
    content = shot.content or shot.text
    texts[mode_key(server.spec.key, full)] = content
    return {"chars": len(content), "tokens": measure.tokens(content), "reply_chars": len(shot.text),
            "to_file": content != shot.text, "ms": measure.summary(times)}


async def run(bench: Run) -> dict[str, Any]:
    generated = (1000, 10000) if bench.quick else (1000, 5000, 10000, 20000, 50000)
    reps = 1 if bench.quick else 4
    wanted = [m for m in MODES if not (bench.quick and "verbose" in m[1])]
    urls = bench.pages.snapshot_pages(generated)
    if bench.quick:  # the biggest real pages take the peers seconds each
        urls = {k: v for k, v in urls.items() if k not in ("table", "pydoc-stdtypes")}
    # the big generated pages last: when time runs short, they are what is left out
    urls = dict(sorted(urls.items(), key=lambda kv: kv[0].startswith("gen-") and int(kv[0][4:]) > 10000))
    out: dict[str, Any] = {"reps": reps, "generated": list(generated), "pages": {}, "modes": {}}
    specs = [s for s in bench.specs if s.key in {m[0] for m in wanted}]
    async with bench.servers(specs) as servers:
        modes = [(server, label, full) for server in servers for key, label, full in wanted if key == server.spec.key]
        out["modes"] = {mode_key(server.spec.key, full): label for server, label, full in modes}
        missing = _missing_counter()
        for page, url in urls.items():
            if bench.over():
                bench.note(f"snapshots: {page} and the pages after it skipped (time budget)")
                break
            row: dict[str, Any] = {"url": url.replace(bench.pages.base, "")}
            texts: dict[str, str] = {}
            for server in servers:
                nav = await server.navigate(url)
                for same, label, full in modes:
                    if same is not server or ("verbose" in label and page.startswith("gen-") and int(page[4:]) > 10000):
                        continue  # verbose DevTools on the biggest pages: minutes of time for a figure already clear
                    row[mode_key(server.spec.key, full)] = ({"error": nav.text[:200]} if nav.is_error else
                                                            await _cell(bench, server, page, label, full, reps, texts))
            if missing and "webhand:default" in texts and "playwright:default" in texts:
                row["webhand:default"]["missing_vs_playwright"] = len(missing(texts["playwright:default"], texts["webhand:default"]))
            out["pages"][page] = row
            sizes = ", ".join(f"{out['modes'][k]} {v.get('tokens', 'err')}" for k, v in row.items() if k != "url")
            print(f"  snapshot {page}: {sizes} tokens", flush=True)
        bench.remember_processes()
    out["scaling"] = _scaling(out, generated)
    return out


def _scaling(out: dict[str, Any], generated: tuple[int, ...]) -> dict[str, Any]:
    """Per mode: elements → (median ms, chars, tokens) on the generated pages."""
    scaling: dict[str, Any] = {}
    for mode in out["modes"]:
        points = []
        for n in generated:
            cell = out["pages"].get(f"gen-{n}", {}).get(mode, {})
            if "chars" in cell:
                points.append({"elements": n, "ms": (cell["ms"] or {}).get("median"), "chars": cell["chars"],
                               "tokens": cell["tokens"]})
        scaling[mode] = points
    return scaling
