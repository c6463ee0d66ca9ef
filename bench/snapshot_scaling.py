#!/usr/bin/env python3
"""Snapshot size and speed: webhand's snapshot next to Playwright's AI snapshot, and its scaling.

    .venv/bin/python bench/snapshot_scaling.py            # prints two tables
    .venv/bin/python bench/snapshot_scaling.py --json     # the same numbers as JSON

Sizes: for each page (webhand's test pages, plus real Python documentation pages when Debian's
python3-doc is installed), the characters (and cl100k tokens) of webhand's interactive and full
snapshot and of ``page.aria_snapshot(mode="ai")`` — what Playwright MCP returns — on the same
page in the same browser. "controls_playwright" counts Playwright's refs on interactive roles,
"refs_webhand" webhand's refs (which also cover elements clickable without a role); "missing"
counts named controls Playwright gives a ref to (by role and name) that webhand's interactive
snapshot does not list with a ref: it must stay 0.

Scaling: time of one interactive snapshot (max_refs 200, the default) and of one full snapshot
without a ref limit on generated pages of 1,000 / 10,000 / 50,000 elements; the fastest of 5 runs
(the least disturbed by whatever else the machine runs) and the median, plus the CPU time the
renderer processes spent (fastest run), which other load on the machine does not inflate.

Importable: ``await measure_sizes()``, ``await measure_scaling()`` and ``run()`` return the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil

from webhand import Settings, Webhand
from webhand.page.snapshot import take_snapshot

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "tests" / "pages"
PYDOCS = next((p for p in (Path("/usr/share/doc/python3-doc/html"), Path("/usr/share/doc/python3/html"))
               if (p / "library" / "functions.html").exists()), None)
#: label -> path on the page server ({other} is the second origin's port, for cross-origin frames)
SIZE_PAGES = {
    "login": "snapshot/login.html", "repeated buttons": "snapshot/repeated.html", "re-rendering list": "snapshot/rerender.html",
    "frames (cross-origin)": "snapshot/frames.html?other={other}", "shadow DOM": "snapshot/shadow.html",
    "controls": "snapshot/controls.html", "hidden/off-screen": "snapshot/hidden.html", "article": "snapshot/article.html",
    "1,000 elements": "snapshot/big.html?n=1000",
}
if PYDOCS:
    SIZE_PAGES |= {"pydoc tutorial": "pydocs/tutorial/introduction.html", "pydoc functions": "pydocs/library/functions.html",
                   "pydoc stdtypes": "pydocs/library/stdtypes.html"}
SCALING_SIZES = (1_000, 10_000, 50_000)
_INTERACTIVE = {"button", "checkbox", "combobox", "link", "listbox", "menuitem", "option", "radio", "searchbox",
                "slider", "spinbutton", "switch", "tab", "textbox", "treeitem"}


class _Handler(SimpleHTTPRequestHandler):
    def translate_path(self, path: str) -> str:
        if path.startswith("/pydocs/") and PYDOCS:
            return str(PYDOCS / path.split("?")[0][len("/pydocs/"):])
        return super().translate_path(path)

    def log_message(self, *args: object) -> None:
        pass


class _Server:
    def __init__(self) -> None:
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(PAGES)))
        self.http.daemon_threads = True
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def _tokens(text: str) -> int | None:
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from measure import tokens  # the peer benchmark's counter (cl100k, offline)

        return tokens(text)
    except Exception:  # noqa: BLE001 - tokens are a bonus; characters are the figure
        return None


def _missing(playwright_ai: str, ours: str) -> list[str]:
    """Controls Playwright gives a ref to that webhand's snapshot lists with no ref (by role and name)."""
    missing = []
    for role, name in re.findall(r'- \'?(\w+) "((?:[^"\\]|\\.)*)"[^\n]*\[ref=', playwright_ai):
        # Unnamed ones cannot be matched by name (Playwright leaves e.g. links around <code> unnamed).
        if role in _INTERACTIVE and not re.search(re.escape(f"{role} {json.dumps(name, ensure_ascii=False)} [") + r"(f\d+)?e\d+\]", ours):
            missing.append(f'{role} "{name}"')
    return missing


class _Bench:
    """One Webhand with one conversation, and the two page servers."""

    async def __aenter__(self) -> "_Bench":
        self.site, self.other = _Server(), _Server()
        settings = Settings.from_sources({"output_dir": tempfile.mkdtemp(prefix="webhand-bench-"), "isolation": "context",
                                          "warm_reserve": False, "snapshot_max_chars": 10_000_000,
                                          "driver": "playwright"}, env={})  # compares with Playwright's aria_snapshot
        self.webhand = await Webhand(settings).start()
        self.tools = self.webhand.conversation("bench")
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.webhand.close()
        self.site.close()
        self.other.close()

    async def open(self, path: str) -> Any:
        reply = await self.tools.call("browser_navigate", {"url": self.site.url(path.format(other=self.other.port))})
        if reply.is_error:
            raise RuntimeError(reply.text)
        session = await self.webhand.sessions.get_or_create("bench", None)
        return await session.tab()


async def measure_sizes(pages: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Per page: characters (and tokens) of webhand interactive / full and of Playwright's AI snapshot."""
    rows = []
    async with _Bench() as bench:
        for label, path in (pages or SIZE_PAGES).items():
            tab = await bench.open(path)
            interactive = (await take_snapshot(tab, max_refs=None)).text
            full = (await take_snapshot(tab, mode="full", max_refs=None)).text
            playwright_ai = await tab.page.aria_snapshot(mode="ai")  # the bench may look under the Driver
            rows.append({
                "page": label, "interactive": len(interactive), "full": len(full), "playwright_ai": len(playwright_ai),
                "ratio_interactive": round(len(interactive) / len(playwright_ai), 2),
                "ratio_full": round(len(full) / len(playwright_ai), 2),
                "tokens_interactive": _tokens(interactive), "tokens_playwright_ai": _tokens(playwright_ai),
                "controls_playwright": sum(1 for role in re.findall(r"- '?(\w+)[^\n]*\[ref=", playwright_ai) if role in _INTERACTIVE),
                "refs_webhand": len(re.findall(r"\[(?:f\d+)?e\d+\]", interactive)),
                "missing": _missing(playwright_ai, interactive),
            })
    return rows


async def measure_scaling(sizes: tuple[int, ...] = SCALING_SIZES, runs: int = 5) -> list[dict[str, Any]]:
    """Per page size: fastest and median ms of an interactive snapshot (max_refs 200) and a full one (no limit)."""
    rows = []
    async with _Bench() as bench:
        for n in sizes:
            tab = await bench.open(f"snapshot/big.html?n={n}")
            timings: dict[str, list[float]] = {"interactive": [], "full": []}
            cpu: dict[str, list[float]] = {"interactive": [], "full": []}
            chars = {}
            for _ in range(runs):
                for mode, max_refs in (("interactive", 200), ("full", None)):
                    cpu_before, start = _renderer_cpu(), time.perf_counter()
                    shot = await take_snapshot(tab, mode=mode, max_refs=max_refs)  # type: ignore[arg-type]
                    timings[mode].append((time.perf_counter() - start) * 1000)
                    cpu[mode].append((_renderer_cpu() - cpu_before) * 1000)
                    chars[mode] = len(shot.text)
            best = {mode: min(times) for mode, times in timings.items()}
            rows.append({"elements": n, "interactive_ms": round(best["interactive"], 1), "full_ms": round(best["full"], 1),
                         "full_ms_per_1000": round(best["full"] / n * 1000, 2),
                         "interactive_median_ms": round(statistics.median(timings["interactive"]), 1),
                         "full_median_ms": round(statistics.median(timings["full"]), 1),
                         "interactive_cpu_ms": round(min(cpu["interactive"]), 1), "full_cpu_ms": round(min(cpu["full"]), 1),
                         "interactive_chars": chars["interactive"], "full_chars": chars["full"]})
    return rows


def _renderer_cpu() -> float:
    """CPU seconds used so far by this process's Chromium renderers: unlike wall time, it does not
    grow when other programs load the machine, so it shows the walk's own cost."""
    total = 0.0
    for process in psutil.Process().children(recursive=True):
        try:
            if "--type=renderer" in " ".join(process.cmdline()):
                times = process.cpu_times()
                total += times.user + times.system
        except psutil.Error:
            continue
    return total


def run() -> dict[str, Any]:
    """Both measurements, for the peer benchmark or a notebook."""
    async def both() -> dict[str, Any]:
        return {"sizes": await measure_sizes(), "scaling": await measure_scaling()}
    return asyncio.run(both())


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    cells = [[str(c) for c in columns]] + [[_cell(r[c]) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    return "\n".join("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths)))
                     for row in cells)


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return str(len(value))
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    numbers = run()
    if parser.parse_args().json:
        print(json.dumps(numbers, indent=1))
        return
    print("Snapshot size in characters (ratio = webhand / Playwright AI snapshot)\n")
    print(_table(numbers["sizes"], ["page", "interactive", "full", "playwright_ai", "ratio_interactive", "ratio_full",
                                    "tokens_interactive", "tokens_playwright_ai", "controls_playwright", "refs_webhand", "missing"]))
    print("\nSnapshot time in ms on generated pages (fastest of 5, then median; interactive: max_refs 200; full: no ref limit)\n")
    print(_table(numbers["scaling"], ["elements", "interactive_ms", "full_ms", "full_ms_per_1000", "interactive_median_ms",
                                      "full_median_ms", "interactive_cpu_ms", "full_cpu_ms", "interactive_chars", "full_chars"]))
    for row in numbers["sizes"]:
        if row["missing"]:
            print(f"\n{row['page']}: not reachable by ref: {', '.join(row['missing'][:10])}")


if __name__ == "__main__":
    main()
