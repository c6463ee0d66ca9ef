"""browser_text, browser_content and browser_state: the page as an article, as HTML, as JSON."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path


async def test_text_of_a_long_article_is_the_article_not_the_menus(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/article.html")})
    reply = await tools.call("browser_text", {})
    assert not reply.is_error, reply.text
    assert "# The lighthouse that outlived the sea" in reply.text
    assert "## A logbook of two centuries" in reply.text
    assert "It's a promise to whoever is out there in the dark." in reply.text
    for chrome in ("Podcasts", "Trending story number", "Advertise with us", "Subscribe"):
        assert chrome not in reply.text


async def test_text_is_cut_at_the_configured_size_with_a_notice(tools, site, webhand):
    await tools.call("browser_navigate", {"url": site.url("snapshot/article.html")})
    limit = webhand.settings.text_max_chars
    webhand.settings.text_max_chars = 600
    try:
        reply = await tools.call("browser_text", {})
    finally:
        webhand.settings.text_max_chars = limit
    assert "[Cut at 600 of" in reply.text and "selector" in reply.text
    assert "out there in the dark" not in reply.text  # the end of the article was cut
    path = re.search(r"whole text is in (\S+?\.md)", reply.text).group(1)
    assert "out there in the dark" in open(path).read()


async def test_text_of_one_part_by_selector(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/article.html")})
    reply = await tools.call("browser_text", {"selector": "aside"})
    assert "Trending story number 3" in reply.text and "lighthouse" not in reply.text.split("\n", 1)[1]
    missing = await tools.call("browser_text", {"selector": "#no-such-thing"})
    assert missing.is_error and "No element matches" in missing.text


async def test_content_gives_the_rendered_html_of_the_page_or_one_element(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/rerender.html")})
    page = await tools.call("browser_content", {})
    assert page.text.startswith("<!DOCTYPE html>") and "<button>Done: Walk dog</button>" in page.text  # built by script
    shot = (await tools.call("browser_snapshot", {})).text
    add = re.search(r'button "Add item" \[(e\d+)\]', shot).group(1)
    element = await tools.call("browser_content", {"ref": add})
    assert element.text == '<button id="add">Add item</button>'


async def test_content_is_cut_at_100_kb_with_a_notice(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/big.html?n=20000")})
    reply = await tools.call("browser_content", {})
    assert "[Cut at 102,400 of" in reply.text and "ref or selector" in reply.text
    assert len(reply.text.encode()) < 102_400 + 500


async def test_state_lists_interactive_elements_with_the_snapshot_refs(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/login.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    reply = await tools.call("browser_state", {})
    assert not reply.is_error, reply.text
    state = reply.data
    assert json.loads(reply.text) == state
    assert state["viewport"] == {"scroll_x": 0, "scroll_y": 0, "width": 1280, "height": 720, "device_scale": 1,
                                 "content_width": 1280}
    by_name = {e["name"]: e for e in state["elements"]}
    password = by_name["Password"]
    assert f'[{password["ref"]}]' in shot
    assert password["tag"] == "input" and password["type"] == "password" and password["has_value"]
    assert password["required"] and "value" not in password["attributes"]
    assert "hunter2" not in reply.text
    remember = by_name["Remember me"]
    assert remember["checked"] is True and remember["attributes"]["name"] == "remember"
    assert by_name["Email"]["has_value"] is False and by_name["Email"]["read_only"] is False
    assert [e["ref"] for e in state["elements"]] == re.findall(r"\[(e\d+)\]", shot)


def test_the_html_cleaner_browser_text_needs_is_declared_and_pinned():
    # trafilatura imports lxml.html.clean, a separate project (lxml_html_clean) since lxml 5.2:
    # an install without it fails browser_text with an ImportError.
    root = Path(__file__).resolve().parent.parent
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower().replace("_", "-") for d in declared}
    assert "lxml-html-clean" in names
    pins = (root / "constraints.txt").read_text().lower().replace("_", "-").splitlines()
    assert any(line.startswith("lxml-html-clean==") for line in pins)
