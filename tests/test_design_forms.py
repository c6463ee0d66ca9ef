"""The designs' own forms on the browser tool and the catalog: argument aliases, `launch` with no
name, timeouts with units on every blocking tool, HEIC images and configurable image limits."""

from __future__ import annotations

import io
import json
import re
import uuid

from PIL import Image

from helpers import settings_for_tests
from webhand import Webhand
from webhand.surfaces.single_tool import SingleTool
from webhand.tools import CATALOG

#: Tools that answer from what is already there (the page's DOM, logs, lists) rather than wait for
#: something to happen; the default timeout caps them. Every other tool takes `timeout`.
READS_WITHOUT_WAITING = {
    "browser_clear_console_logs", "browser_close", "browser_content", "browser_cookies", "browser_downloads",
    "browser_find", "browser_get_url", "browser_network_requests", "browser_recent_console_logs", "browser_resize",
    "browser_session_destroy", "browser_session_history", "browser_session_list", "browser_snapshot", "browser_state", "browser_text",
    "read_image"}


def ok(reply) -> str:
    assert not reply.is_error, reply.text
    return reply.text


async def test_the_browser_tool_takes_element_ref_script_and_scroll_into_view(webhand, tools, site):
    single = SingleTool(webhand.tools.values())
    ok(await single.call(tools, {"action": "navigate", "url": site.url("compat/far.html")}))
    page = ok(await single.call(tools, {"action": "snapshot"}))
    ref = re.search(r'button "Far away" \[(e\d+)\]', page).group(1)
    scrolled = ok(await single.call(tools, {"action": "act", "act_kind": "scroll_into_view", "element_ref": ref}))
    assert "into view" in scrolled
    assert json.loads(ok(await single.call(tools, {"action": "evaluate", "script": "window.scrollY > 2000"}))) is True


async def test_the_browser_tool_takes_target_id_for_a_tab(webhand, tools, site):
    single = SingleTool(webhand.tools.values())
    ok(await single.call(tools, {"action": "navigate", "url": site.url("compat/far.html")}))
    ok(await single.call(tools, {"action": "open", "url": site.url("login.html")}))
    assert "Tab 0 is now the current tab" in ok(await single.call(tools, {"action": "focus", "target_id": 0}))
    both = await single.call(tools, {"action": "focus", "target_id": 0, "index": 1})
    assert both.is_error and "name the same argument" in both.text


async def test_launch_without_a_name_opens_the_default_session(webhand, tools, site):
    single = SingleTool(webhand.tools.values())
    assert "default session is open" in ok(await single.call(tools, {"action": "launch"}))
    ok(await single.call(tools, {"action": "navigate", "url": site.url("login.html")}))
    listed = ok(await single.call(tools, {"action": "session_list"}))
    assert "default" in listed


async def test_launch_without_the_sessions_group_is_answered_without_an_error(webhand, tools):
    single = SingleTool(t for t in webhand.tools.values() if t.capability == "core")
    reply = await single.call(tools, {"action": "launch"})
    assert not reply.is_error and 'action="navigate"' in reply.text


def test_every_blocking_tool_takes_a_timeout():
    missing = [t.name for t in CATALOG.values() if t.name not in READS_WITHOUT_WAITING
               and "timeout" not in t.input_model.model_fields]
    assert not missing, f"blocking tools without `timeout`: {missing}"


async def test_timeouts_given_with_a_unit_are_taken_by_the_tools(webhand, tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("actions/covered.html")}))
    waited = await tools.call("browser_wait_for", {"text": "never on this page", "timeout": "1500ms"})
    assert waited.is_error and "1.5 s" in waited.text
    covered = await tools.call("browser_click", {"selector": "#buy", "timeout": "2s"})
    assert covered.is_error and "covered by" in covered.text
    bad = await tools.call("browser_click", {"selector": "#buy", "timeout": "soon"})
    assert bad.is_error and "not a duration" in bad.text


async def test_read_image_reads_a_heic_photo(tools):
    import pillow_heif

    photo = Image.new("RGB", (640, 480), (200, 40, 40))
    heic = pillow_heif.from_pillow(photo)
    path = tools.files.folder / "photo.heic"
    tools.files.folder.mkdir(parents=True, exist_ok=True)
    heic.save(str(path), quality=80)
    reply = ok(await tools.call("read_image", {"path": str(path)}))
    assert "640x480" in reply
    (image,) = (await tools.call("read_image", {"path": str(path)})).images
    assert image.mime_type == "image/jpeg", "a photo goes to the model as JPEG"
    assert Image.open(io.BytesIO(image.data)).size == (640, 480)


async def test_image_limits_come_from_the_settings(tmp_path_factory):
    async with Webhand(settings_for_tests(tmp_path_factory, image_max_side=200, image_max_pixels=20_000,
                                          warm_reserve=False)) as webhand:
        tools = webhand.context(f"images-{uuid.uuid4().hex[:8]}")
        tools.files.folder.mkdir(parents=True, exist_ok=True)
        path = tools.files.folder / "wide.png"
        Image.new("RGB", (800, 400), (0, 90, 200)).save(path)
        reply = await tools.call("read_image", {"path": str(path)})
        assert "sent as 200x100" in ok(reply)
        square = tools.files.folder / "square.png"
        Image.new("RGB", (400, 400), (0, 90, 200)).save(square)
        (image,) = (await tools.call("read_image", {"path": str(square)})).images
        width, height = Image.open(io.BytesIO(image.data)).size
        assert width * height <= 20_000 and width == height
