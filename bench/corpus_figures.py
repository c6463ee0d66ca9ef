#!/usr/bin/env python3
"""What a model sees on real pages, webhand next to Playwright MCP: the corpus figures of issue 9.

    .venv/bin/python bench/corpus_figures.py            # both servers (Playwright MCP when bench/node_modules has it)
    .venv/bin/python bench/corpus_figures.py --only webhand

The corpus is the tests' (tests/corpus_site.py): 60 seeded MiniWoB++ tasks after START, four pages
of Python's docs, Swagger UI once rendered. For each server's default snapshot it prints:
- instruction visible: on how many tasks MiniWoB's #query text (whitespace folded) is in it whole,
  and on how many every word of it is there in order (quotes unescaped: Playwright MCP writes YAML);
- names matched: the share of ref'd lines (generic and `clickable` ones aside) whose role and name
  Chromium's own accessibility tree of the same page has (names clipped with … match as a prefix);
- characters: the default snapshot's size, summed over the corpus, and webhand's as a share of
  Playwright MCP's.
Chromium's tree comes from a browser of this script's own (Playwright, same binary), on the same
page with the same seed, read with CDP Accessibility.getFullAXTree.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from peers import McpServer, specs, unavailable  # noqa: E402
from run import find_chrome  # noqa: E402
from test_corpus_sufficiency import TEXT_TASKS  # noqa: E402

from corpus_site import CorpusSite, controls, fold, missing_reason  # noqa: E402
from corpus_truth import CHROMIUM_TO_ARIA  # noqa: E402

PYDOC_PAGES = ["index.html", "library/stdtypes.html", "library/functions.html", "tutorial/introduction.html"]
SEED = "([seed, ms]) => { Math.seedrandom(seed); core.EPISODE_MAX_TIME = ms; }"
# Playwright MCP's YAML: `- link "Tab #1" [ref=e15]`, single-quoted when the line holds a quote or a colon.
PLAYWRIGHT_LINE = re.compile(r"""^\s*- '?(?P<role>[\w-]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?"""
                             r"""[^\n]*?\[ref=(?P<ref>(?:f\d+)?e\d+)\]""")


def corpus_pages(site: CorpusSite) -> list[tuple[str, str, str]]:
    """(kind, label, url) of every page that is installed here."""
    pages = []
    if not missing_reason("miniwob"):
        pages += [("miniwob", task, site.miniwob(task)) for task in TEXT_TASKS]
    if not missing_reason("pydoc"):
        pages += [("pydoc", doc, site.pydoc(doc)) for doc in PYDOC_PAGES]
    if not missing_reason("swagger"):
        pages.append(("swagger", "swagger-ui", site.swagger()))
    return pages


# -- Chromium's own view ------------------------------------------------------------------------

async def chromium_views(chrome: str, pages: list[tuple[str, str, str]]) -> dict[str, dict]:
    """Per page: the role -> names Chromium's AX tree has, and (MiniWoB) the instruction after START."""
    from playwright.async_api import async_playwright

    views: dict[str, dict] = {}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chrome, args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 720})
            for kind, label, url in pages:
                await page.goto(url)
                query = ""
                if kind == "miniwob":
                    await page.evaluate(SEED, [f"webhand-{label}", 120_000])
                    await page.click("#sync-task-cover")
                    query = fold(await page.evaluate("document.getElementById('query').textContent"))
                elif kind == "swagger":
                    await page.wait_for_selector(".opblock-summary", timeout=20_000)
                cdp = await page.context.new_cdp_session(page)
                nodes = (await cdp.send("Accessibility.getFullAXTree"))["nodes"]
                await cdp.detach()
                names: dict[str, set[str]] = {}
                for node in nodes:
                    if node.get("ignored"):
                        continue
                    role = str((node.get("role") or {}).get("value", ""))
                    name = fold(str((node.get("name") or {}).get("value", "")))
                    names.setdefault(CHROMIUM_TO_ARIA.get(role, role), set()).add(name)
                views[label] = {"names": names, "query": query}
        finally:
            await browser.close()
    return views


# -- one server's view --------------------------------------------------------------------------

def ref_lines(kind: str, snapshot: str) -> list[tuple[str, str]]:
    """(role, name) of each ref'd line that names something (generic and clickable lines aside)."""
    if kind == "webhand":
        pairs = [(c["role"], c["name"]) for c in controls(snapshot)]
    else:
        pairs = [(m["role"], json.loads(m["name"].replace("''", "'")) if m["name"] else "")
                 for m in (PLAYWRIGHT_LINE.match(line) for line in snapshot.splitlines()) if m]
    return [(role, name) for role, name in pairs if role not in ("generic", "clickable")]


def matched(role: str, name: str, truth: dict[str, set[str]]) -> bool:
    name = fold(name)
    known = truth.get(role, set())
    if name.endswith("…"):
        return any(n.startswith(name[:-1].rstrip()) for n in known)
    return name in known


def instruction_seen(query: str, snapshot: str) -> tuple[bool, bool]:
    """(whole, every word in order) of the instruction in the snapshot."""
    text = fold(snapshot.replace('\\"', '"'))
    position = 0
    for word in query.split():
        position = text.find(word, position)
        if position < 0:
            return query in text, False
        position += len(word)
    return query in text, True


async def snapshot_of(server: McpServer, kind: str, label: str, url: str) -> str:
    async def shoot():  # the default mode of each server, whatever it is
        return await server.call("browser_snapshot", {})

    async def seed() -> None:
        call = f"({SEED})(['webhand-{label}', 120000])"
        if server.spec.kind == "webhand":
            await server.call("browser_eval", {"expression": call})
        else:
            await server.call("browser_evaluate", {"function": f"() => {call}"})

    await server.navigate(url)
    if kind == "swagger":  # the same wait for both servers: Swagger UI renders after fetching its spec
        for _ in range(50):
            if "Add a new pet" in (await shoot()).text:
                break
            await asyncio.sleep(0.2)
    if kind == "miniwob":
        await seed()
        before = (await shoot()).text
        start = re.search(r"START[^\n]*?\[(?:ref=)?((?:f\d+)?e\d+)\]|\[(?:ref=)?((?:f\d+)?e\d+)\][^\n]*START", before)
        if start:
            await server.click(start.group(1) or start.group(2))
    reply = await shoot()
    saved = re.search(r"saved to (\S+?\.txt)\.", reply.text)
    return Path(saved.group(1)).read_text() if saved and Path(saved.group(1)).exists() else reply.text


async def measure(server: McpServer, pages: list[tuple[str, str, str]], views: dict[str, dict]) -> dict:
    figures = {"whole": 0, "words": 0, "tasks": 0, "lines": 0, "matched": 0, "chars": 0, "misses": []}
    for kind, label, url in pages:
        shot = await snapshot_of(server, kind, label, url)
        figures["chars"] += len(shot)
        if kind == "miniwob":
            whole, words = instruction_seen(views[label]["query"], shot)
            figures["tasks"] += 1
            figures["whole"] += whole
            figures["words"] += words
        for role, name in ref_lines(server.spec.kind, shot):
            figures["lines"] += 1
            if matched(role, name, views[label]["names"]):
                figures["matched"] += 1
            else:
                figures["misses"].append(f"{label}: {role} {json.dumps(name)[:90]}")
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["webhand", "playwright"], help="measure one server")
    parser.add_argument("--chrome", help="Chromium binary (default: Debian's)")
    parser.add_argument("--misses", type=int, default=15, help="name misses to list per server")
    args = parser.parse_args()
    chrome = find_chrome(args.chrome)
    site = CorpusSite()
    try:
        pages = corpus_pages(site)
        print(f"corpus: {len(pages)} pages ({sum(k == 'miniwob' for k, _, _ in pages)} MiniWoB++ tasks)", flush=True)
        views = await chromium_views(chrome, pages)
        results = {}
        for spec in specs(chrome):
            if spec.key not in ("webhand", "playwright") or (args.only and spec.key != args.only):
                continue
            if unavailable(spec):
                print(f"{spec.label} skipped: {unavailable(spec)}")
                continue
            server = McpServer(spec)
            await server.start()
            try:
                results[spec.label] = await measure(server, pages, views)
            finally:
                await server.stop()
        report(results, args.misses)
    finally:
        site.close()


def report(results: dict[str, dict], misses: int) -> None:
    print(f"\n{'server':<16} {'instruction whole':>18} {'every word':>11} {'names matched':>22} {'characters':>11}")
    for label, f in results.items():
        share = f"{f['matched']}/{f['lines']} = {100 * f['matched'] / max(1, f['lines']):.1f}%"
        tasks = f["tasks"]
        print(f"{label:<16} {f['whole']:>11}/{tasks:<6} {f['words']:>5}/{tasks:<5} {share:>22} {f['chars']:>11,}")
    if "webhand" in results and "Playwright MCP" in results:
        ratio = results["webhand"]["chars"] / max(1, results["Playwright MCP"]["chars"])
        print(f"webhand's default snapshots are {ratio:.2f}x Playwright MCP's characters on this corpus")
    for label, f in results.items():
        if f["misses"]:
            print(f"\n{label}: ref'd lines without an equal in Chromium's tree (first {misses}):")
            print("\n".join("  " + m for m in f["misses"][:misses]))


if __name__ == "__main__":
    asyncio.run(main())
