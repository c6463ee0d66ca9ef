"""Each first tool's normal path and its bad inputs."""

from __future__ import annotations

import io
import re

from PIL import Image

from helpers import settings_for_tests
from webhand import Webhand


async def test_navigate_reports_url_title_and_status(tools, site):
    reply = await tools.call("browser_navigate", {"url": site.url("status/404")})
    assert "HTTP 404" in reply.text and "error page" in reply.text
    assert reply.data["status"] == 404


async def test_navigate_to_a_refused_port_says_so(tools):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    reply = await tools.call("browser_navigate", {"url": f"http://127.0.0.1:{port}/"})
    assert reply.is_error and "connection was refused" in reply.text and "browser_navigate" in reply.text


async def test_navigate_to_a_bad_url_is_refused(tools):
    for url in ("ftp://example.org/file", "http://exa mple.com:99999/", ""):
        reply = await tools.call("browser_navigate", {"url": url})
        assert reply.is_error, url
        assert reply.text.startswith("Error: ")


async def test_missing_and_malformed_refs_fail_without_acting(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    await tools.call("browser_snapshot", {})
    for ref, expected in (("e999", "not on the current page"), ("button", "is not a ref"), ("f7e1", "frame is gone")):
        reply = await tools.call("browser_click", {"ref": ref})
        assert reply.is_error and expected in reply.text and "browser_snapshot" in reply.text, reply.text


async def test_arguments_are_validated_before_anything_runs(tools):
    reply = await tools.call("browser_click", {"ref": "e1", "selector": "#x"})
    assert reply.is_error and "exactly one of `ref` and `selector`" in reply.text
    reply = await tools.call("browser_navigate", {"link": "http://127.0.0.1/"})
    assert reply.is_error and "url: Field required" in reply.text and "link: unknown argument" in reply.text
    reply = await tools.call("browser_teleport", {})
    assert reply.is_error and "browser_navigate" in reply.text


async def test_resize_rejects_non_positive_sizes(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    for width, height in ((0, 600), (800, -1)):
        reply = await tools.call("browser_resize", {"width": width, "height": height})
        assert reply.is_error and "between 1 and 16384" in reply.text
    assert not (await tools.call("browser_resize", {"width": 500, "height": 400})).is_error
    size = await tools.call("browser_eval", {"expression": "[innerWidth, innerHeight]"})
    assert size.data == {"result": [500, 400]}


async def test_eval_returns_json_and_reports_exceptions_with_their_line(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    reply = await tools.call("browser_eval", {"expression": "({title: document.title, n: 1 + 1, el: document.querySelector('h1')})"})
    assert reply.data["result"]["title"] == "Sign in" and reply.data["result"]["n"] == 2
    assert reply.data["result"]["el"].startswith("<h1>")
    reply = await tools.call("browser_eval", {"expression": "await new Promise(r => setTimeout(() => r('late'), 10))"})
    assert reply.data == {"result": "late"}
    reply = await tools.call("browser_eval", {"expression": "const a = 1;\nnotDefined.call()"})
    assert reply.is_error and "ReferenceError: notDefined is not defined" in reply.text
    assert re.search(r"line \d+", reply.text)


async def test_eval_can_be_disabled_by_config(tmp_path_factory, site, driver):
    settings = settings_for_tests(tmp_path_factory, evaluate_enabled=False, warm_reserve=False, driver=driver)
    async with Webhand(settings) as wh:
        assert "browser_eval" not in wh.tools
        reply = await wh.context("c").call("browser_eval", {"expression": "1"})
        assert reply.is_error and "not enabled" in reply.text


async def test_large_eval_results_go_to_a_file(tools, site, webhand):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    reply = await tools.call("browser_eval", {"expression": "'x'.repeat(5000)"})
    assert "saved to" in reply.text and len(reply.text) < 1000
    path = re.search(r"saved to (\S+?)\.?$", reply.text, re.M).group(1)
    assert open(path).read() == '"' + "x" * 5000 + '"'


async def test_console_logs_are_read_and_cleared(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tall.html")})
    await tools.call("browser_eval", {"expression": "console.error('bad thing'); setTimeout(() => { throw new Error('late boom') })"})
    await tools.call("browser_eval", {"expression": "await new Promise(r => setTimeout(r, 50))"})
    reply = await tools.call("browser_recent_console_logs", {})
    assert "[log] tall page ready" in reply.text and "[warning] a warning" in reply.text
    assert "[error] bad thing" in reply.text and "[pageerror]" in reply.text and "late boom" in reply.text
    last = await tools.call("browser_recent_console_logs", {"limit": 1})
    assert "late boom" in last.text and "tall page ready" not in last.text
    cleared = await tools.call("browser_clear_console_logs", {})
    assert cleared.text == "Cleared 4 console log entries."
    assert (await tools.call("browser_recent_console_logs", {})).text == "No console messages."


async def test_screenshots_are_saved_and_downscaled_for_the_model(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tall.html")})
    viewport = await tools.call("browser_take_screenshot", {})
    assert viewport.images and viewport.images[0].mime_type == "image/png"
    assert Image.open(io.BytesIO(viewport.images[0].data)).size == (1280, 720)
    full = await tools.call("browser_take_screenshot", {"full_page": True})
    sent = Image.open(io.BytesIO(full.images[0].data))
    saved = Image.open(full.images[0].path)
    assert saved.size[1] > 3000 and max(sent.size) <= 1568 and sent.size[0] * sent.size[1] <= 1_150_000
    assert "sent as" in full.text
    element = await tools.call("browser_take_screenshot", {"selector": "#badge"})
    assert Image.open(element.images[0].path).size == (120, 40)


async def test_read_image_shows_a_saved_screenshot_and_refuses_missing_files(tools, site):
    await tools.call("browser_navigate", {"url": site.url("tall.html")})
    shot = await tools.call("browser_take_screenshot", {"full_page": True})
    reply = await tools.call("read_image", {"path": shot.images[0].path})
    assert reply.images and "sent as" in reply.text
    missing = await tools.call("read_image", {"path": str(tools.files.screenshots / "nope.png")})
    assert missing.is_error and "No image file" in missing.text
    outside = await tools.call("read_image", {"path": "/etc/hostname"})
    assert outside.is_error and "outside the folders webhand may use" in outside.text


async def test_read_image_refuses_a_file_that_is_not_an_image(tools):
    tools.files.folder.mkdir(parents=True, exist_ok=True)
    text = tools.files.folder / "notes.png"
    text.write_text("just some words, not pixels")
    reply = await tools.call("read_image", {"path": str(text)})
    assert reply.is_error and f"{text} is not an image" in reply.text
    assert "object at 0x" not in reply.text and "BytesIO" not in reply.text
