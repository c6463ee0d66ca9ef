"""Reply time of click, type and press_key on a local static page, waits for effects included.

Each sample is one full tool call through ``Conversation.call``: find the element, act, wait for
the action's effects (navigation, requests, DOM quiet) and build the reply. The page changes its
DOM on every action, so the DOM-quiet wait always has something to see.

    .venv/bin/python bench/action_latency.py --repeats 40
    from bench.action_latency import measure  # -> {"click": {"median": ..., ...}, ...}
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import json
import os
import statistics
import tempfile
import threading
import time
from typing import Any

from webhand import Settings, Webhand

PAGE = b"""<!doctype html><html><head><title>Latency</title></head><body>
<input id="field" aria-label="Field"> <button id="button">Press</button>
<p id="out" role="status">0</p>
<script>
let clicks = 0, keys = 0;
const out = document.getElementById('out');
document.getElementById('button').addEventListener('click', () => { out.textContent = 'clicks ' + (++clicks); });
document.getElementById('field').addEventListener('keydown', () => { out.textContent = 'keys ' + (++keys); });
</script></body></html>"""

ACTIONS: dict[str, dict[str, Any]] = {
    "click": {"selector": "#button"},
    "type": {"selector": "#field", "text": "hello"},
    "press_key": {"selector": "#field", "key": "Enter"},
}


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[max(0, int(0.95 * len(ordered) + 0.5) - 1)], 1),
            "min_ms": round(ordered[0], 1), "n": len(ordered)}


async def measure(repeats: int = 30, warmup: int = 3, settings: Settings | None = None) -> dict[str, dict[str, float]]:
    """Median/p95/min reply time (ms) per action over ``repeats`` calls, after ``warmup`` calls."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    settings = settings or Settings.from_sources(
        {"output_dir": tempfile.mkdtemp(prefix="webhand-bench-"), "isolation": "context", "warm_reserve": False}, env={})
    results: dict[str, dict[str, float]] = {}
    try:
        async with Webhand(settings) as webhand:
            tools = webhand.conversation("latency-bench")
            reply = await tools.call("browser_navigate", {"url": url})
            if reply.is_error:
                raise RuntimeError(reply.text)
            for action, args in ACTIONS.items():
                samples = []
                for number in range(warmup + repeats):
                    start = time.perf_counter()
                    reply = await tools.call(f"browser_{action}", args)
                    elapsed = (time.perf_counter() - start) * 1000
                    if reply.is_error:
                        raise RuntimeError(f"{action}: {reply.text}")
                    if number >= warmup:
                        samples.append(elapsed)
                results[action] = _stats(samples)
    finally:
        server.shutdown()
        server.server_close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="print JSON only")
    options = parser.parse_args()
    results = asyncio.run(measure(options.repeats))
    if options.json:
        print(json.dumps(results))
        return
    cpus, load = os.cpu_count(), os.getloadavg()[0]
    print(f"(machine: {cpus} CPUs, 1-minute load average {load:.1f}; medians grow with load, minimums less so)")
    for action, numbers in results.items():
        print(f"{action:10s} median {numbers['median_ms']:6.1f} ms   p95 {numbers['p95_ms']:6.1f} ms   "
              f"min {numbers['min_ms']:6.1f} ms   (n={numbers['n']})")


if __name__ == "__main__":
    main()
