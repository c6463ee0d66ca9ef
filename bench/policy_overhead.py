"""What an origin policy costs a page load: every request of a context with a policy goes through
its policy proxy (engine/policy_proxy.py), one connection per plain http:// request.

Each sample is one browser_navigate to a local page with 20 subresources, waited until load,
without a policy and with a block-list that refuses nothing the page needs.

    .venv/bin/python bench/policy_overhead.py --repeats 30
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import os
import statistics
import tempfile
import threading
import time

from webhand import Settings, Webhand

_IMAGE = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,"
          b"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
_PAGE = ("<!doctype html><title>Overhead</title>"
         + "".join(f'<img src="/image-{n}.gif?{{stamp}}">' for n in range(20))).encode()


class _Site(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body, kind = (_IMAGE, "image/gif") if self.path.startswith("/image-") else (_PAGE, "text/html")
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


async def _median_ms(url: str, repeats: int, **policy: object) -> float:
    settings = Settings.from_sources({"output_dir": tempfile.mkdtemp(prefix="webhand-bench-"), "isolation": "context",
                                      "warm_reserve": False, **policy}, env={})
    samples = []
    async with Webhand(settings) as webhand:
        tools = webhand.conversation("policy-overhead")
        for number in range(repeats + 3):
            start = time.perf_counter()
            reply = await tools.call("browser_navigate", {"url": f"{url}?{number}"})
            if reply.is_error:
                raise RuntimeError(reply.text)
            if number >= 3:  # the first loads warm the browser up
                samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def main(repeats: int) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/page.html"
    try:
        without = await _median_ms(url, repeats)
        with_policy = await _median_ms(url, repeats, blocked_origins=["blocked.example"])
    finally:
        server.shutdown()
    print(f"(machine: {os.cpu_count()} CPUs, 1-minute load average {os.getloadavg()[0]:.1f})")
    print(f"navigate, page + 20 images: no policy {without:.1f} ms, with a policy {with_policy:.1f} ms (medians, n={repeats})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    asyncio.run(main(parser.parse_args().repeats))
