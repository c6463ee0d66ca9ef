"""HTML to readable text (trafilatura on lxml), bounded in size, time and memory.

trafilatura's cost grows faster than the document: 100,000 tiny elements took 37 s, and a 5 MB
page of them (within ``fetch_max_bytes``) took over 100 s and 1.2 GB. Run in a thread, that work
could not be stopped: it went on long after the call had answered at its timeout, and the memory
stayed with the server. So the work is bounded in two places, both outside the converting code:

- Before parsing, the tags are counted (every ``<``, an upper bound, at the speed of one string
  scan): past ``MAX_TAGS`` the document is refused with ``DocumentTooLarge``, whose hint says how
  to read part of it.
- The parsing and extraction run in a worker process (``python -m webhand.page.convert``), one
  per conversion, with its address space limited to ``MEMORY_BUDGET_BYTES`` above its start
  (``RLIMIT_AS``), and an alarm at the call's timeout in case the server is gone. It is killed
  when the call's time is up or the call is cancelled, and in any case once it answered: its memory goes back to the system with it, and the server's own memory
  never holds a parsed tree. The worker's imports (about 0.4 s of CPU) are paid ahead: after a
  first conversion, the next worker is started at once and waits, idle, for its document.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webhand.errors import ActionTimeout, DocumentTooLarge, WebhandError

#: Most ``<`` a document may have to be converted (open and close tags, comments): ~75,000
#: elements, which trafilatura reads in well under the default 15 s timeout on one core.
MAX_TAGS = 150_000
#: Address space a worker may add to what it holds after its imports. Ordinary documents need a
#: tenth of it; the 5 MB page of tiny elements needed 1.2 GB.
MEMORY_BUDGET_BYTES = 768 * 1024 * 1024
#: Marks a worker's command line, for people and tests that look for it.
WORKER_MODULE = "webhand.page.convert"


@dataclass(frozen=True)
class Document:
    title: str
    markdown: str  # the article; empty when none was found
    text: str  # all the visible text, for pages without an article


async def article_markdown(html: str, url: str, *, timeout: float, narrower: str) -> str:
    """The page's article as Markdown (empty when it has none), as browser_text reads it.
    ``narrower``: what to do instead when the document is too large (for the error's hint)."""
    return str(await _convert("article", html, url, timeout, narrower))


async def html_document(html: str, url: str, *, timeout: float, narrower: str) -> Document:
    """Title, article (with absolute links) and visible text of an HTML document, for web_fetch."""
    return Document(**await _convert("document", html, url, timeout, narrower))


async def _convert(job: str, html: str, url: str, timeout: float, narrower: str) -> Any:
    tags = html.count("<")
    if tags > MAX_TAGS:
        raise DocumentTooLarge(f"The document is too large to convert to text: it has about {tags:,} tags, more than "
                               f"the {MAX_TAGS:,} webhand converts.", narrower)
    request = json.dumps({"job": job, "html": html, "url": url, "timeout": timeout}).encode("utf-8", "surrogatepass")
    worker = _workers.take()
    try:
        output, _ = await asyncio.to_thread(worker.communicate, request, timeout)
    except subprocess.TimeoutExpired:
        raise ActionTimeout(f"Converting the document to text did not finish within {timeout:g} s "
                            f"({len(html):,} characters, about {tags:,} tags).", narrower) from None
    finally:
        _end(worker)  # also when the call is cancelled: the work stops with it
        _workers.refill()
    answer = json.loads(output) if output else {}
    if answer.get("error") == "memory" or (worker.returncode or 0) < 0:
        # A failed allocation (MemoryError), or a crash on one in lxml's C code (SIGSEGV, SIGABRT).
        raise DocumentTooLarge(f"The document ({len(html):,} characters) could not be converted to text: it needs "
                               f"more than the {MEMORY_BUDGET_BYTES >> 20:,} MB of memory webhand gives a conversion.",
                               narrower)
    if "result" not in answer:
        raise WebhandError(f"Converting the document to text failed: the converter process exited with status "
                           f"{worker.returncode} and no answer.", "This is a webhand bug (is trafilatura installed?); "
                           "read the page with browser_snapshot meanwhile.")
    return answer["result"]


def _end(worker: subprocess.Popen[bytes]) -> None:
    """Kill the worker if it still runs, and reap it in the background (it exits at once)."""
    if worker.poll() is None:
        worker.kill()
        threading.Thread(target=worker.wait, name="webhand-convert-reap", daemon=True).start()


class _Workers:
    """Starts conversion workers, keeping one started ahead once a first conversion happened."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spare: subprocess.Popen[bytes] | None = None

    def take(self) -> subprocess.Popen[bytes]:
        with self._lock:
            worker, self._spare = self._spare, None
        if worker is not None and worker.poll() is None:
            return worker
        return _start_worker()

    def refill(self) -> None:
        with self._lock:
            if self._spare is None or self._spare.poll() is not None:
                self._spare = _start_worker()

    def end_spare(self) -> None:
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            _end(spare)


def _start_worker() -> subprocess.Popen[bytes]:
    # Started with this interpreter and this copy of webhand, whatever the working directory.
    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    # stdin is the whole request, then its end; a worker whose server died reads an empty one and exits.
    return subprocess.Popen([sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": path})


_workers = _Workers()


def end_spare_worker() -> None:
    """End the worker kept started ahead, if any: a closed Webhand leaves no process of its own behind
    (the next conversion starts one again)."""
    _workers.end_spare()


# -- in the worker -----------------------------------------------------------------------------


def markdown_of(html: Any, url: str, links: bool = False, fast: bool = False) -> str:
    import trafilatura  # imported on first use: it costs ~0.5 s, which every CLI call would pay

    return trafilatura.extract(html, url=url or None, output_format="markdown", include_formatting=True,
                               include_links=links, include_tables=True, include_comments=False, fast=fast) or ""


def document_of(html: str, url: str) -> Document:
    """The article of an HTML document as Markdown with its links (absolute), and its title.

    For web_fetch, which has HTML but no browser. trafilatura resolves a relative link against
    the site's root only ("marshal.html" on /docs/library/ became /marshal.html), so links are
    made absolute against the page's own URL first.
    """
    import re

    import lxml.html

    from webhand.engine.break_hints import without_break_hints

    try:
        tree = lxml.html.document_fromstring(html)
    except (ValueError, lxml.etree.ParserError):  # an empty or undecodable document
        return Document("", "", "")
    tree.make_links_absolute(url, resolve_base_href=True, handle_failures="ignore")
    title = " ".join(without_break_hints(tree.findtext(".//title") or "").split())
    for hidden in tree.xpath("//script|//style|//noscript|//template"):
        hidden.drop_tree()
    body = tree.find("body")
    text = re.sub(r"\n\s*\n+", "\n\n", without_break_hints((body if body is not None else tree).text_content())).strip()
    # The parsed tree goes to trafilatura as it is (no second parse), and without its fallback
    # extractors (fast): on Python's docs the text was the same and a quarter quicker.
    markdown = without_break_hints(markdown_of(tree, url, links=True, fast=True)).strip()
    return Document(title, markdown, text)


def _limit_memory(budget: int) -> None:
    import resource

    try:
        with open("/proc/self/statm") as statm:  # Linux: the address space now, in pages
            now = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = now + budget if hard == resource.RLIM_INFINITY else min(hard, now + budget)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError):  # not Linux: the time bound still holds
        pass


def _work() -> None:
    import math
    import signal

    import lxml.html  # noqa: F401 - imported before the limit and before the document comes
    import trafilatura  # noqa: F401

    _limit_memory(MEMORY_BUDGET_BYTES)
    request = sys.stdin.buffer.read()
    if not request:  # a spare whose server ended
        return
    job = json.loads(request)
    del request
    # Its own time bound too, in case the server that would kill it is gone: SIGALRM ends it.
    signal.alarm(math.ceil(job["timeout"]) + 1)
    try:
        if job["job"] == "article":
            result: Any = markdown_of(job["html"], job["url"])
        else:
            result = document_of(job["html"], job["url"]).__dict__
        answer = {"result": result}
    except MemoryError:
        answer = {"error": "memory"}
    sys.stdout.buffer.write(json.dumps(answer).encode("utf-8", "surrogatepass"))


if __name__ == "__main__":
    _work()
