"""Wall time of browser_navigate on a page that starts a dedicated worker, a shared worker and a
service worker (tests/pages/effects/workers.html), per driver: the median of N navigates, each a
full tool call (the navigation, the wait for the page's requests, the reply).

Worker scripts are answered to the worker, not to the page: a wait that counted them as the page's
requests ended only at the request cap (issue 38, item 4).

    PYTHONPATH=src .venv/bin/python bench/navigate_workers.py --drivers cdp,playwright,firefox --repeats 5
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import http.server
import statistics
import tempfile
import threading
import time
from pathlib import Path

from webhand import Settings, Webhand

PAGES = Path(__file__).resolve().parent.parent / "tests" / "pages"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


async def measure(driver: str, base: str, repeats: int) -> tuple[list[float], str]:
    settings = {"output_dir": tempfile.mkdtemp(prefix="webhand-bench-"), "isolation": "context", "capabilities": ["all"]}
    settings.update({"browser": "firefox"} if driver == "firefox" else {"driver": driver})
    async with Webhand(Settings.from_sources(settings, env={})) as webhand:
        tools = webhand.conversation("bench")
        await tools.call("browser_navigate", {"url": "about:blank"})  # the browser's start is not the figure
        times, reply = [], ""
        for number in range(repeats):
            started = time.perf_counter()
            reply = (await tools.call("browser_navigate", {"url": f"{base}/effects/workers.html?n={number}"})).text
            times.append(time.perf_counter() - started)
        return times, reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--drivers", default="cdp,playwright,firefox")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(PAGES)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for driver in args.drivers.split(","):
            times, reply = asyncio.run(measure(driver, base, args.repeats))
            still = "; replies say 'Still loading'" if "Still loading" in reply else ""
            print(f"{driver}: median {statistics.median(times):.2f} s over {len(times)} navigates "
                  f"({', '.join(f'{t:.2f}' for t in times)}){still}")
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
