"""`extensions = [folders]` (issue 28): unpacked extensions loaded into the browsers webhand launches,
listed by browser_extensions; refused where they cannot work (context isolation, a browser webhand
connects to) or where the folder is no extension."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import own_browser_processes, settings_for_tests, wait_until_gone_async
from webhand.config import Settings
from webhand.errors import ConfigError
from webhand.host import Webhand

MARKER = Path(__file__).resolve().parent / "pages" / "marker_extension"


async def test_an_extension_runs_in_the_page_and_is_listed(tmp_path_factory, site, driver):
    settings = settings_for_tests(tmp_path_factory, driver=driver, isolation="process", extensions=[str(MARKER)],
                                  capabilities=["all"], warm_reserve=False)
    before = {p.pid for p in own_browser_processes()}  # the worker's shared browsers stay; this host's must go
    async with Webhand(settings) as webhand:
        context = webhand.conversation("extensions")
        opened = await context.call("browser_navigate", {"url": site.url("/")})
        assert not opened.is_error, opened.text
        marked = await context.call("browser_eval", {
            "expression": "document.documentElement.getAttribute('data-webhand-test-marker')"})
        assert marked.data["result"] == "marked", marked.text
        listed = await context.call("browser_extensions", {})
        assert not listed.is_error, listed.text
        (entry,) = listed.data["extensions"]
        assert (entry["name"], entry["version"], entry["enabled"]) == ("webhand test marker", "1.2.3", True)
        if driver == "firefox":  # a temporary add-on whose manifest names no ID gets one of Firefox's making
            assert re.fullmatch(r"[0-9a-f]{40}@temporary-addon", entry["id"]), entry["id"]
        else:  # Chromium's: 32 letters a-p, from the folder's path
            assert len(entry["id"]) == 32 and set(entry["id"]) <= set("abcdefghijklmnop")
        await webhand.end_conversation("extensions")
    ours = [p for p in own_browser_processes() if p.pid not in before]
    assert not await wait_until_gone_async(ours)  # reaped (the subreaper adopts the orphans)


@pytest.mark.one_driver("settings validation, no browser")
@pytest.mark.parametrize("settings, refused", [
    ({"isolation": "context"}, "isolation = \"process\""),
    ({"cdp_url": "http://127.0.0.1:9222"}, "webhand launches"),
    ({"extension_bridge": True}, "webhand launches"),
    ({"playwright_url": "ws://127.0.0.1:3000/pw"}, "webhand launches"),
])
def test_extensions_are_refused_where_they_cannot_work(settings, refused):
    with pytest.raises(ConfigError, match=refused):
        Settings.from_sources({"extensions": [str(MARKER)], **settings}, env={})


@pytest.mark.one_driver("settings validation, no browser")
def test_a_folder_that_is_no_extension_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="not an unpacked extension"):
        Settings.from_sources({"extensions": [str(tmp_path)], "isolation": "process"}, env={})
