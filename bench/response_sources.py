"""What knowing each response's source costs: webhand's own CPU per navigate of a page with 150
subresources, with the network tools served (the tab's CDP session enables Network) and without.

    PYTHONPATH=src .venv/bin/python bench/response_sources.py --repeats 30

Prints the median wall time (noisy on a loaded machine) and this process's CPU time per navigate,
which is where the extra CDP events are parsed and dispatched.
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import statistics
import tempfile
import threading
import time

from webhand import Settings, Webhand

PAGE = ("<!doctype html><title>Many</title><h1>Many</h1>"
        + "".join(f'<img src="/r{i}.png" width=1 height=1>' for i in range(150))).encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        page = self.path.startswith("/page")
        body = PAGE if page else b""
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if page else "image/png")
        self.send_header("Cache-Control", "no-store" if page else "max-age=3600")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


async def measure(capabilities: list[str], repeats: int, port: int) -> tuple[float, float]:
    settings = Settings.from_sources({"output_dir": tempfile.mkdtemp(), "isolation": "context", "warm_reserve": False,
                                      "capabilities": capabilities}, env={})
    async with Webhand(settings) as webhand:
        tools = webhand.conversation("bench")
        await tools.call("browser_navigate", {"url": f"http://127.0.0.1:{port}/page"})
        walls, cpu = [], time.process_time()
        for number in range(repeats):
            start = time.perf_counter()
            await tools.call("browser_navigate", {"url": f"http://127.0.0.1:{port}/page?{number}"})
            walls.append(time.perf_counter() - start)
        return statistics.median(walls) * 1000, (time.process_time() - cpu) / repeats * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    repeats = parser.parse_args().repeats
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for label, caps in (("core only", ["core"]), ("network served", ["core", "network"])) * 2:
            wall, cpu = asyncio.run(measure(caps, repeats, server.server_address[1]))
            print(f"{label:>15}: median navigate {wall:.0f} ms, webhand CPU {cpu:.0f} ms per navigate")
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
