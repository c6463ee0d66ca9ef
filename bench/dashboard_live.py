"""The dashboard's live view: frame rate and latency, and what watching costs an idle session.

    PYTHONPATH=src .venv/bin/python bench/dashboard_live.py [--seconds 10]

One Webhand in process isolation (the session has its own Chromium, so its CPU and memory can
be read), a dashboard on 127.0.0.1, and an SSE client reading the live view as the page does.

- Frame rate and latency: the page animates (a counter on every animation frame). Frames are
  counted at the client for --seconds at the default cap (dashboard_max_fps = 5) and at 30.
  Latency is the client's receive time minus the time the browser painted the frame (Chromium's
  screencast metadata), on the same clock.
- Agent action to pixels: the agent clicks a button that repaints the page; the time from the
  call's return to the first frame painted after it.
- Cost to an idle session (a static page): CPU seconds used by the session's browser (all its
  processes) and by this process, and the browser's resident memory, over --seconds, with no
  dashboard, with the dashboard's list polled every 2 s (as the page does), and with the live
  view watched as well.
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import json
import statistics
import threading
import time

import httpx
import psutil

from webhand import Settings, Webhand
from webhand.surfaces.dashboard import DashboardServer
from webhand.surfaces.http_security import HttpOptions

PAGES = {
    "/animated": b"<title>animated</title><h1 id=n>0</h1><script>let i=0;(function f(){n.textContent=++i;"
                 b"requestAnimationFrame(f)})()</script>",
    "/static": b"<title>static</title><h1>Nothing moves here</h1><button onclick=\"document.body.style.background="
               b"'#'+Math.floor(Math.random()*0xffffff).toString(16).padStart(6,'0')\">Repaint</button>",
}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = PAGES.get(self.path, b"")
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


async def read_frames(url: str, seconds: float, on_frame=None) -> list[tuple[float, float]]:
    """(paint time, receive time) of each frame the live view sends in ``seconds``."""
    frames: list[tuple[float, float]] = []
    async with httpx.AsyncClient(timeout=None) as client:
        async with client.stream("GET", url) as stream:
            deadline = time.time() + seconds
            async for line in stream.aiter_lines():
                if line.startswith("data: "):
                    frame = json.loads(line[6:])
                    frames.append((frame["t"], time.time()))
                    if on_frame:
                        on_frame(frame)
                if time.time() > deadline:
                    break
    return frames


def tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def usage(pid: int) -> tuple[float, float, int]:
    """CPU seconds of the browser tree, of this process, and the browser tree's resident bytes."""
    cpu = mem = 0.0
    for process in tree(pid):
        try:
            times = process.cpu_times()
            cpu += times.user + times.system
            mem += process.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    me = psutil.Process().cpu_times()
    return cpu, me.user + me.system, int(mem)


async def measure_idle(pid: int, seconds: float, during=None) -> dict[str, float]:
    before = usage(pid)
    task = asyncio.ensure_future(during()) if during else None
    await asyncio.sleep(seconds)  # a measurement window, not product code
    if task:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    after = usage(pid)
    return {"browser_cpu_s": round(after[0] - before[0], 3), "webhand_cpu_s": round(after[1] - before[1], 3),
            "browser_rss_mb": round(after[2] / 2**20, 1)}


async def main(seconds: float) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}"
    results: dict[str, object] = {}
    for fps in (5.0, 30.0):
        settings = Settings.from_sources({"isolation": "process", "warm_reserve": False, "capabilities": ["all"],
                                          "dashboard_max_fps": fps}, env={})
        async with Webhand(settings) as webhand:
            dashboard = DashboardServer(webhand, HttpOptions(port=0))
            base = await dashboard.start()
            agent = webhand.conversation("bench")
            await agent.call("browser_navigate", {"url": f"{site}/animated"})
            session = webhand.sessions.sessions()[0]
            live = f"{base}/dashboard/api/sessions/{session.public_id}/live"
            frames = await read_frames(live, seconds)
            steady = frames[1:]  # the first is the last frame painted before the stream opened
            latencies = [(received - painted) * 1000 for painted, received in steady]
            results[f"animated page, cap {fps:g} fps"] = {
                "frames_per_s": round(len(steady) / seconds, 1),
                "latency_ms_median": round(statistics.median(latencies), 1) if latencies else None,
                "latency_ms_p95": round(sorted(latencies)[int(len(latencies) * 0.95)], 1) if latencies else None}
            if fps == 5.0:
                results["action to pixels"] = await action_to_pixels(agent, live, site)
                pid = session.browser.pid
                await agent.call("browser_navigate", {"url": f"{site}/static"})
                results["idle, no dashboard"] = await measure_idle(pid, seconds)

                async def poll() -> None:
                    async with httpx.AsyncClient() as client:
                        while True:
                            await client.get(f"{base}/dashboard/api/sessions")
                            await client.get(f"{base}/dashboard/api/sessions/{session.public_id}")
                            await asyncio.sleep(2)  # the page's refresh interval

                async def poll_and_watch() -> None:
                    await asyncio.gather(poll(), read_frames(live, seconds * 10))

                results["idle, dashboard list polled"] = await measure_idle(pid, seconds, poll)
                results["idle, live view watched"] = await measure_idle(pid, seconds, poll_and_watch)
            await dashboard.stop()
    server.shutdown()
    print(json.dumps(results, indent=1))


async def action_to_pixels(agent, live: str, site: str) -> dict[str, float]:
    """From the click's return to the first frame painted after it, five times."""
    await agent.call("browser_navigate", {"url": f"{site}/static"})
    delays = []
    for _ in range(5):
        seen = asyncio.Event()
        clicked = [0.0]

        def on_frame(frame: dict, seen=seen, clicked=clicked) -> None:
            if clicked[0] and frame["t"] >= clicked[0] - 0.05:
                seen.set()

        reader = asyncio.ensure_future(read_frames(live, 30, on_frame))
        await asyncio.sleep(0.5)  # let the stream open and send its first frame
        await agent.call("browser_click", {"selector": "button"})
        clicked[0] = time.time()
        start = time.monotonic()
        await asyncio.wait_for(seen.wait(), 10)
        delays.append((time.monotonic() - start) * 1000)
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    return {"median_ms": round(statistics.median(delays), 1), "max_ms": round(max(delays), 1)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    asyncio.run(main(parser.parse_args().seconds))
