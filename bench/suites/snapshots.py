"""Snapshot size and time per page, and how both grow with page size.

For every page (the bench's own, generated pages of N elements, Python's docs when installed) each
server snapshots the same loaded page: webhand in its two modes (interactive, the default, and
full), Playwright MCP (one mode), Chrome DevTools MCP (default, and verbose) and agent-browser
(interactive, its default, and full). Size is the snapshot itself, in characters and cl100k_base
tokens; when webhand put a large snapshot in a file, the file is read back and counted, and
``to_file`` says so (the model's reply was then short).

A small snapshot buys less when it leaves out what the model came for, so each cell also says how
much of the page's own text it carries (``text_share``: of the distinct words of four letters or
more in the page's visible text, as its HTML has it, the share the snapshot contains).
"""

from __future__ import annotations

import re
import urllib.request
from html.parser import HTMLParser
from typing import Any

import measure
from suites import Run

#: (server key, mode label, full?) — each is one column of the size table.
MODES = (("webhand", "webhand interactive", False), ("webhand", "webhand full", True),
         ("webhand-baseline", "webhand (baseline) interactive", False),  # bench/run.py --baseline
         ("webhand-ff", "webhand on Firefox interactive", False),
         ("playwright", "Playwright MCP", False), ("devtools", "Chrome DevTools MCP", False),
         ("devtools", "Chrome DevTools MCP verbose", True), ("agent-browser", "agent-browser interactive", False),
         ("agent-browser", "agent-browser full", True))


def mode_key(server: str, full: bool) -> str:
    return f"{server}:{'full' if full else 'default'}"


class _VisibleText(HTMLParser):
    """The text of a page's body as its HTML has it (scripts, styles and the head left out)."""

    HIDDEN = {"script", "style", "head", "title", "noscript", "template"}

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.depth += tag in self.HIDDEN

    def handle_endtag(self, tag: str) -> None:
        self.depth -= tag in self.HIDDEN and self.depth > 0

    def handle_data(self, data: str) -> None:
        if not self.depth:
            self.parts.append(data)


_WORD = re.compile(r"[^\W\d_]{4,}")


def page_words(url: str) -> set[str]:
    """The distinct words (four letters or more, lower case) of the page's visible text."""
    with urllib.request.urlopen(url, timeout=60) as reply:
        parser = _VisibleText()
        parser.feed(reply.read().decode("utf-8", "replace"))
    return {w.lower() for w in _WORD.findall(" ".join(parser.parts))}


def text_share(words: set[str], snapshot: str) -> float | None:
    if not words:
        return None
    found = {w.lower() for w in _WORD.findall(snapshot)}
    return round(len(words & found) / len(words), 3)


CELL_BUDGET_SECONDS = 8.0  # stop repeating a snapshot once its samples add up to this


def _missing_counter() -> Any:
    """The check of bench/snapshot_scaling.py (controls Playwright refs that webhand lists without one), if present."""
    try:
        from snapshot_scaling import _missing

        return _missing
    except Exception:  # noqa: BLE001 - optional: that script belongs to another suite
        return None


async def _cell(bench: Run, server: Any, page: str, label: str, full: bool, reps: int,
                texts: dict[str, str], words: set[str]) -> dict[str, Any]:
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
            "to_file": content != shot.text, "ms": measure.summary(times), "text_share": text_share(words, content)}


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
            words = page_words(url)
            row["page_words"] = len(words)
            for server in servers:
                nav = await server.navigate(url)
                for same, label, full in modes:
                    if same is not server or ("verbose" in label and page.startswith("gen-") and int(page[4:]) > 10000):
                        continue  # verbose DevTools on the biggest pages: minutes of time for a figure already clear
                    row[mode_key(server.spec.key, full)] = ({"error": nav.text[:200]} if nav.is_error else
                                                            await _cell(bench, server, page, label, full, reps, texts, words))
            if missing and "webhand:default" in texts and "playwright:default" in texts:
                row["webhand:default"]["missing_vs_playwright"] = len(missing(texts["playwright:default"], texts["webhand:default"]))
            out["pages"][page] = row
            sizes = ", ".join(f"{out['modes'][k]} {v.get('tokens', 'err')}" for k, v in row.items() if isinstance(v, dict))
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
