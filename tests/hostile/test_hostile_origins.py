"""The origin table: every channel a hostile page has to a blocked origin, in both policy modes.

`site` serves the hostile page (tests/pages/origins/channels.html) and is allowed; `other_site` is
the blocked origin: named in blocked_origins (block-list mode), or left out of allowed_origins
(allow-list mode). Each row makes one attempt to reach it. "Leaked" is judged on the server side:
the blocked server recorded a request carrying the row's marker (or, for WebRTC, a packet or a
connection). Each attempt ends on an event (a response, an error, a load, a commit), so once it is
over a request that was going to arrive has arrived.

The same rows run first with no policy at all: each must then reach the server. That proves every
row really makes its attempt, so that "not leaked" under a policy means refused, not "never tried".

Rerun and print the counts: pytest -s tests/hostile/test_hostile_origins.py -k counts
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers import settings_for_tests
from webhand import Webhand

CHANNELS = "origins/channels.html"


@dataclass
class Row:
    name: str
    attempt: Callable[..., Awaitable[str]]  # (tools, site, target URL) -> what the page or the tool saw
    host: str = "127.0.0.1"  # how the blocked host is spelled in the target URL
    scheme: str = "http"
    reaches_without_policy: bool = True  # False where Chromium itself never lets it through
    reaches_on_firefox: bool = True  # False where Firefox itself never lets it through
    counted: bool = False  # judged by counting packets and connections, not by a marked request


async def _open_channels(tools: Any, site: Any, to: str = "") -> None:
    reply = await tools.call("browser_navigate", {"url": site.url(CHANNELS) + (f"?to={to}" if to else "")})
    assert not reply.is_error, reply.text


def _in_page(call: str) -> Callable[..., Awaitable[str]]:
    """An attempt made by the hostile page's own script: ``call`` names a function of channels.html."""
    async def attempt(tools: Any, site: Any, target: str) -> str:
        await _open_channels(tools, site)
        expression = "await " + call.replace("URL", json.dumps(target))
        reply = await tools.call("browser_eval", {"expression": expression, "timeout": 20})
        return reply.text if reply.is_error else str(reply.data.get("result"))
    return attempt


def _by_tool(name: str, **extra: Any) -> Callable[..., Awaitable[str]]:
    """An attempt the model makes with a tool."""
    async def attempt(tools: Any, site: Any, target: str) -> str:
        reply = await tools.call(name, {"url": target, **extra})
        return ("refused: " if reply.is_error else "") + reply.text.splitlines()[0]
    return attempt


def _click(selector: str) -> Callable[..., Awaitable[str]]:
    """An attempt the page prepares and the model sets off with a click (the click waits for the
    navigation it starts to end)."""
    async def attempt(tools: Any, site: Any, target: str) -> str:
        await _open_channels(tools, site, to=target)
        reply = await tools.call("browser_click", {"selector": selector})
        return reply.text.splitlines()[0]
    return attempt


async def _redirected(tools: Any, site: Any, target: str) -> str:
    reply = await tools.call("browser_navigate", {"url": site.url(f"redirect?to={target}")})
    return ("refused: " if reply.is_error else "") + reply.text.splitlines()[0]


async def _webrtc(tools: Any, site: Any, target: str) -> str:
    await _open_channels(tools, site)
    host, port = target.split("/")[2].rsplit(":", 1)
    reply = await tools.call("browser_eval", {"expression": f"await channels.webrtc({json.dumps(host)}, {port})", "timeout": 20})
    return reply.text


ROWS = [
    Row("navigate", _by_tool("browser_navigate")),
    Row("redirect", _redirected),
    Row("iframe", _in_page("channels.iframe(URL)")),
    Row("popup", _in_page("channels.popup(URL)")),
    Row("fetch", _in_page("channels.fetch(URL)")),
    Row("XHR", _in_page("channels.xhr(URL)")),
    Row("fetch redirected", _in_page("channels.fetch(location.origin + '/redirect?to=' + encodeURIComponent(URL))")),
    Row("WebSocket", _in_page("channels.ws(URL)"), scheme="ws"),
    Row("form post", _click("#submit")),
    Row("location by JS", _click("#script-location")),
    Row("link", _click("#link")),
    Row("dedicated worker fetch", _in_page("channels.worker('fetch', URL)")),
    Row("dedicated worker WebSocket", _in_page("channels.worker('ws', URL)"), scheme="ws"),
    Row("dedicated worker fetch redirected",
        _in_page("channels.worker('fetch', location.origin + '/redirect?to=' + encodeURIComponent(URL))")),
    Row("shared worker fetch", _in_page("channels.sharedWorker('fetch', URL)")),
    Row("shared worker WebSocket", _in_page("channels.sharedWorker('ws', URL)"), scheme="ws"),
    Row("service worker fetch", _in_page("channels.serviceWorker('fetch', URL)")),
    Row("service worker WebSocket", _in_page("channels.serviceWorker('ws', URL)"), scheme="ws"),
    Row("data: URL frame", _in_page("channels.dataFrame(URL)")),
    Row("javascript: URL", _in_page("channels.javascriptUrl(URL)")),
    # Firefox refuses to navigate to view-source: over WebDriver BiDi ("not allowed in this context").
    Row("view-source: URL", _by_tool("browser_navigate"), scheme="view-source:http", reaches_on_firefox=False),
    Row("file: URL (navigate)", _by_tool("browser_navigate"), scheme="file"),
    Row("file: URL (link)", _click("#link"), scheme="file", reaches_without_policy=False),
    # Firefox sends no ICE to loopback servers (media.peerconnection.ice.loopback is off): the policy's
    # hold on WebRTC is proven on Firefox with loopback ICE on (test_firefox.py, ..._keeps_webrtc_...).
    Row("WebRTC STUN/TURN", _webrtc, counted=True, reaches_on_firefox=False),
    Row("trailing dot (navigate)", _by_tool("browser_navigate"), host="localhost."),
    Row("trailing dot (fetch)", _in_page("channels.fetch(URL)"), host="localhost."),
    Row("trailing dot (WebSocket)", _in_page("channels.ws(URL)"), host="localhost.", scheme="ws"),
    Row("upper case (fetch)", _in_page("channels.fetch(URL)"), host="LOCALHOST"),
    Row("127.1 (navigate)", _by_tool("browser_navigate"), host="127.1"),
    Row("127.1 (fetch)", _in_page("channels.fetch(URL)"), host="127.1"),
    Row("0x7f.0.0.1 (fetch)", _in_page("channels.fetch(URL)"), host="0x7f.0.0.1"),
    Row("2130706433 (fetch)", _in_page("channels.fetch(URL)"), host="2130706433"),
    Row("0177.0.0.1 (fetch)", _in_page("channels.fetch(URL)"), host="0177.0.0.1"),
    Row("0x7f.1 (WebSocket)", _in_page("channels.ws(URL)"), host="0x7f.1", scheme="ws"),
    Row("[::ffff:127.0.0.1] (fetch)", _in_page("channels.fetch(URL)"), host="[::ffff:127.0.0.1]"),
    Row("*.localhost (fetch)", _in_page("channels.fetch(URL)"), host="probe.localhost"),
    Row("userinfo trick (navigate)", _by_tool("browser_navigate"), host="127.0.0.1:1@127.0.0.1"),
]


class UdpRecorder:
    """Counts UDP packets sent to the blocked port (STUN), which no HTTP server would see."""

    def __init__(self, port: int) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", port))
        self.packets = 0
        threading.Thread(target=self._count, daemon=True).start()

    def _count(self) -> None:
        while True:
            try:
                self.socket.recv(4096)
            except OSError:
                return
            self.packets += 1

    def close(self) -> None:
        self.socket.close()


@dataclass
class Outcome:
    mode: str
    row: str
    saw: str
    leaked: bool


async def _run_row(webhand: Webhand, mode: str, row: Row, site: Any, other_site: Any, udp: UdpRecorder,
                   files: Path) -> Outcome:
    marker = f"leak-{uuid.uuid4().hex[:12]}"
    if row.scheme == "file":  # the "server" is the disk: a page whose title is the marker
        (files / f"{marker}.html").write_text(f"<title>{marker}</title><p>{marker}</p>")
        target = (files / f"{marker}.html").as_uri()
    else:
        target = f"{row.scheme}://{row.host}:{other_site.port}/{marker}?q=secret"
    tools = webhand.conversation(f"origins-{mode}-{marker}")
    packets, connections = udp.packets, other_site.connections

    def counted() -> bool:
        return udp.packets > packets or other_site.connections > connections

    try:
        if row.counted:
            saw = await _until(row.attempt(tools, site, target), counted)
        else:
            saw = await row.attempt(tools, site, target)
        if row.scheme == "file":  # leaked if any tab (or a frame's text) shows the file
            tabs = (await tools.call("browser_get_url", {})).data.get("tabs", [])
            text = (await tools.call("browser_text", {})).text
            leaked = any(tab["title"] == marker for tab in tabs) or marker in text.replace(target, "")
    finally:
        await webhand.end_conversation(tools.conversation_id)
    if row.counted:
        leaked = counted()
    elif row.scheme != "file":
        leaked = bool(other_site.received_paths(marker))
    return Outcome(mode, row.name, str(saw)[:100], leaked)


async def _until(attempt: Awaitable[str], reached: Callable[[], bool]) -> str:
    """The attempt's outcome, or, as soon as the blocked server counted a packet or a connection,
    that: a counted attempt (WebRTC) has no event of its own on the page when its server never
    answers (gathering waits out the page's cap), but the server's count is the event that matters.
    Where nothing arrives the attempt still runs to its own end, so a late packet is still seen."""
    task = asyncio.ensure_future(attempt)
    while not task.done():
        if reached():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return "reached the server"
        await asyncio.wait([task], timeout=0.05)
    return task.result()


@pytest.fixture(scope="module")
def udp(other_site):
    recorder = UdpRecorder(other_site.port)
    yield recorder
    recorder.close()


def _modes(site: Any, other_site: Any) -> dict[str, dict[str, Any]]:
    return {
        "no policy": {"allow_file_urls": True},
        "block-list": {"blocked_origins": [other_site.origin]},
        "allow-list": {"allowed_origins": [site.origin]},
    }


#: Rows of one mode run side by side (each in its own conversation, with its own marker).
_ROWS_AT_ONCE = 4


async def _table(tmp_path_factory, site, other_site, udp, modes: list[str], driver: str) -> list[Outcome]:
    outcomes = []
    files = tmp_path_factory.mktemp("local-files")
    for mode in modes:
        settings = settings_for_tests(tmp_path_factory, warm_reserve=False, driver=driver,
                                      **_modes(site, other_site)[mode])
        async with Webhand(settings) as webhand:
            gate = asyncio.Semaphore(_ROWS_AT_ONCE)

            async def run(row: Row) -> Outcome:
                async with gate:
                    return await _run_row(webhand, mode, row, site, other_site, udp, files)

            # WebRTC's leak is counted (packets, connections), not marked: it runs alone.
            alone = [row for row in ROWS if row.counted]
            outcomes += await asyncio.gather(*(run(row) for row in ROWS if not row.counted))
            outcomes += [await run(row) for row in alone]
    return outcomes


async def test_origin_table_counts_no_blocked_origin_is_reached(tmp_path_factory, site, other_site, udp, driver):
    outcomes = await _table(tmp_path_factory, site, other_site, udp, ["no policy", "block-list", "allow-list"],
                            driver)
    control = {o.row: o for o in outcomes if o.mode == "no policy"}
    guarded = [o for o in outcomes if o.mode != "no policy"]
    print("\nOrigin table (leaked = the blocked server received the request):")
    print(f"  {'row':<36} {'no policy':<10} {'block-list':<11} {'allow-list':<11}")
    for row in ROWS:
        cells = [next(o for o in outcomes if o.mode == m and o.row == row.name) for m in ("no policy", "block-list", "allow-list")]
        print(f"  {row.name:<36} " + " ".join(f"{'LEAKED' if c.leaked else 'refused':<10}" for c in cells))
    leaked = [o for o in guarded if o.leaked]
    print(f"Origin table: tried {len(guarded)}, refused {len(guarded) - len(leaked)}, leaked {len(leaked)} "
          f"(rows that reach the server with no policy: {sum(c.leaked for c in control.values())} of {len(control)})")
    # Every row really makes its attempt: with no policy it reaches the server (where the browser lets it).
    not_tried = [r.name for r in ROWS if r.reaches_without_policy and (driver != "firefox" or r.reaches_on_firefox)
                 and not control[r.name].leaked]
    assert not not_tried, f"rows that never reached the server even without a policy: {not_tried}"
    assert not leaked, "leaked: " + "; ".join(f"{o.mode} / {o.row} (the page saw {o.saw!r})" for o in leaked)
