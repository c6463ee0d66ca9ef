"""stealth = true, against a local page that reads what bot-detection scripts read first (on both drivers)."""

from __future__ import annotations

import json

import psutil
import pytest

from helpers import own_browser_processes, settings_for_tests
from webhand import Webhand
from webhand.config import Settings
from webhand.errors import ConfigError


@pytest.fixture(scope="module")
async def stealthy(tmp_path_factory, driver):
    async with Webhand(settings_for_tests(tmp_path_factory, stealth=True, warm_reserve=False, driver=driver)) as webhand:
        yield webhand


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # it ended meanwhile: the other driver's browser, being reaped
        return ""


async def fingerprint(tools, site) -> dict:
    assert not (await tools.call("browser_navigate", {"url": site.url("compat/fingerprint.html")})).is_error
    reply = await tools.call("browser_eval", {"expression": "JSON.stringify(window.fingerprint)"})
    return json.loads(json.loads(reply.text))


async def test_the_page_sees_the_signs_of_automation_without_stealth(tools, site):
    seen = await fingerprint(tools, site)
    assert "HeadlessChrome" in seen["userAgent"] and seen["webdriver"] is True, "the page does detect them"


async def test_with_stealth_the_page_sees_a_desktop_chrome(stealthy, site):
    tools = stealthy.context("stealth-fingerprint")
    try:
        seen = await fingerprint(tools, site)
        assert "Headless" not in seen["userAgent"] and "Chrome/" in seen["userAgent"]
        assert seen["webdriver"] is False
        assert seen["languages"] == ["en-US", "en"] and seen["plugins"] >= 3
        assert seen["platform"] == "Linux x86_64", "agrees with the user agent"
        assert seen["webglVendor"] and "SwiftShader" not in f"{seen['webglVendor']} {seen['webglRenderer']}"
        assert not (await tools.call("browser_navigate", {"url": site.url("echo")})).is_error
        headers = (await tools.call("browser_text", {})).text
        user_agent = next(line for line in headers.splitlines() if line.lower().startswith("user-agent:"))
        assert "Headless" not in user_agent and "Chrome/" in user_agent, "the HTTP header too"
    finally:
        await stealthy.end_conversation(tools.conversation_id)


async def test_stealth_launches_chromium_without_automation_controlled(stealthy, site):
    tools = stealthy.context("stealth-flags")
    try:
        assert not (await tools.call("browser_navigate", {"url": site.url("login.html")})).is_error
        flagged = [p for p in own_browser_processes() if "--disable-blink-features=AutomationControlled" in _cmdline(p)]
        assert flagged, "the stealthy browser was launched with the flag"
    finally:
        await stealthy.end_conversation(tools.conversation_id)


def test_stealth_is_refused_on_firefox_not_ignored():
    """Its disguise is Chromium's, and Firefox's navigator.webdriver cannot be hidden: the setting is
    refused with browser = "firefox" rather than accepted and left undone."""
    with pytest.raises(ConfigError, match="does not support stealth"):
        Settings.from_sources({"driver": "firefox", "stealth": True}, env={})
