"""Finding Chromium and the flags it runs with."""

from __future__ import annotations

import os
import stat

import pytest

from webhand.config import Settings
from webhand.engine.launch import chrome, chromium_binary
from webhand.errors import BrowserNotFound, ConfigError


@pytest.fixture
def no_browser_anywhere(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.delenv("WEBHAND_CHROME", raising=False)
    monkeypatch.setattr(chromium_binary, "CANDIDATE_PATHS", (str(tmp_path / "nowhere" / "chromium"),))
    monkeypatch.setattr(chromium_binary, "SHELL_PATHS", (str(tmp_path / "nowhere" / "chromium-headless-shell"),))


def _fake_binary(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_discovery_order_configured_then_env_then_names(no_browser_anywhere, monkeypatch, tmp_path):
    configured = _fake_binary(tmp_path / "configured" / "chrome")
    from_env = _fake_binary(tmp_path / "env" / "chrome")
    on_path = _fake_binary(tmp_path / "empty-bin" / "chromium")
    monkeypatch.setenv("WEBHAND_CHROME", from_env)
    assert chrome.find_chromium(configured) == configured
    assert chrome.find_chromium(None) == from_env
    monkeypatch.delenv("WEBHAND_CHROME")
    assert chrome.find_chromium(None) == on_path


def test_no_browser_is_a_clear_error_listing_what_was_tried(no_browser_anywhere, monkeypatch):
    monkeypatch.setenv("WEBHAND_CHROME", "/opt/missing/chrome")
    with pytest.raises(BrowserNotFound) as caught:
        chrome.find_chromium("/also/missing")
    message = str(caught.value)
    for tried in ("/also/missing (configured executable_path)", "/opt/missing/chrome (WEBHAND_CHROME)",
                  "chromium", "google-chrome", "msedge", "apt-get install chromium", "WEBHAND_CHROME"):
        assert tried in message


def test_flags_fit_containers_and_closed_networks(tmp_path):
    flags = chrome.launch_flags(str(tmp_path), width=1280, height=720)
    for flag in ("--headless=new", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", f"--user-data-dir={tmp_path}", "--remote-debugging-address=127.0.0.1"):
        assert flag in flags
    # The sandbox is dropped only where it cannot work: as root.
    assert ("--no-sandbox" in flags) == (os.geteuid() == 0 or os.environ.get("WEBHAND_NO_SANDBOX") == "1")


async def test_closing_a_crashed_browser_ends_the_crash_handler_it_left_behind():
    """Chromium's crash handler leaves the browser's process group and outlives a SIGKILLed
    browser; closing the browser must end it too."""
    import signal

    import psutil

    def naming(directory: str) -> list[psutil.Process]:
        return [p for p in psutil.process_iter(["cmdline"]) if any(directory in a for a in p.info["cmdline"] or [])]

    browser = await chrome.ChromeProcess.launch(chrome.find_chromium())
    try:
        outside = [p for p in naming(browser.user_data_dir) if os.getpgid(p.pid) != browser.pid]
        assert outside, "expected Chromium's crash handler outside the group (else this test proves nothing)"
        os.killpg(browser.pid, signal.SIGKILL)  # the browser crashes (a group webhand started, by its pid)
        await browser.process.wait()
        assert all(p.is_running() for p in outside), "the handler outlived its browser"
    finally:
        await browser.close()
    _, alive = psutil.wait_procs(outside, timeout=5)
    assert alive == []


def test_the_real_binary_is_preferred_to_a_wrapper_script(monkeypatch, tmp_path):
    """Debian's /usr/bin/chromium is a shell script that adds its own flags: skip it when the
    real binary is there."""
    wrapper = _fake_binary(tmp_path / "bin" / "chromium")
    real = tmp_path / "lib" / "chromium"
    real.parent.mkdir()
    real.write_bytes(b"\x7fELF")
    real.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("WEBHAND_CHROME", raising=False)
    monkeypatch.setattr(chromium_binary, "CANDIDATE_PATHS", (str(real),))
    assert chrome.find_chromium() == str(real)
    monkeypatch.setattr(chromium_binary, "CANDIDATE_PATHS", ())
    assert chrome.find_chromium() == wrapper  # no real binary: the wrapper still works


@pytest.mark.parametrize("flavor", ["full", "headless-shell"])
async def test_a_launched_browser_holds_no_window_and_no_browser_ui(flavor):
    """No startup window and no preloaded omnibox WebUI: each cost a renderer (the omnibox one
    about 80 MB) that no session uses. The headless shell gets neither --headless nor
    --no-startup-window, and must still open no window; the launch runs the binary chosen."""
    import json
    import urllib.request

    import psutil

    if flavor == "headless-shell" and chromium_binary.find_headless_shell() is None:
        pytest.skip("chromium-headless-shell is not installed (scripts/ensure-chromium installs it)")
    choice = chromium_binary.choose_chromium(Settings(chromium_flavor=flavor))
    browser = await chrome.ChromeProcess.launch(choice.executable)
    try:
        assert chromium_binary.is_headless_shell(psutil.Process(browser.pid).exe()) == (flavor == "headless-shell")
        port = browser.ws_endpoint.split(":")[2].split("/")[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as reply:
            targets = json.load(reply)
    finally:
        await browser.close()
    assert [(t["type"], t["url"]) for t in targets] == []


@pytest.fixture
def both_builds(no_browser_anywhere, monkeypatch, tmp_path):
    """A full browser and a headless shell on the PATH (stand-ins: only their paths are used)."""
    bin_dir = tmp_path / "empty-bin"
    return {"full": _fake_elf(bin_dir / "chromium"), "headless-shell": _fake_elf(bin_dir / "chromium-headless-shell")}


def _fake_elf(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize(("settings", "flavor", "reason"), [
    ({}, "headless-shell", "headless and installed"),
    ({"headless": False}, "full", "the headless shell cannot show a window"),
    ({"extensions": ["EXTENSION"]}, "full", "the headless shell cannot load extensions"),
    ({"stealth": True}, "full", "its disguise is a desktop Chrome's"),
    ({"allow_internal_pages": True}, "full", "the headless shell has none of the browser's own pages"),
    ({"chromium_flavor": "full"}, "full", 'chromium_flavor = "full"'),
    ({"chromium_flavor": "headless-shell"}, "headless-shell", 'chromium_flavor = "headless-shell"'),
])
def test_a_headless_launch_prefers_the_headless_shell_unless_the_settings_need_the_full_browser(
        both_builds, tmp_path, settings, flavor, reason):
    if settings.get("extensions"):
        (tmp_path / "ext").mkdir()
        (tmp_path / "ext" / "manifest.json").write_text("{}")
        settings = {"extensions": [str(tmp_path / "ext")]}
    choice = chromium_binary.choose_chromium(Settings(**settings))
    assert (choice.executable, choice.flavor) == (both_builds[flavor], flavor)
    assert reason in choice.reason
    plan = chrome.launch_plan(Settings(**settings), policy_active=False)
    assert plan["executable"] == both_builds[flavor]


def test_a_named_binary_wins_and_no_shell_falls_back_to_the_full_browser(both_builds, monkeypatch, tmp_path):
    named = _fake_elf(tmp_path / "mine" / "chrome")
    assert chromium_binary.choose_chromium(Settings(executable_path=named)) == \
        chromium_binary.ChromiumChoice(named, "full", "executable_path names it")
    monkeypatch.setenv("WEBHAND_CHROME", both_builds["headless-shell"])  # a shell named so is known as one
    assert chromium_binary.choose_chromium(Settings()).flavor == "headless-shell"
    assert "WEBHAND_CHROME" in chromium_binary.choose_chromium(Settings(stealth=True)).reason
    monkeypatch.delenv("WEBHAND_CHROME")
    os.remove(both_builds["headless-shell"])
    fallback = chromium_binary.choose_chromium(Settings())
    assert (fallback.executable, fallback.flavor) == (both_builds["full"], "full")
    assert "apt-get install chromium-headless-shell" in fallback.reason
    with pytest.raises(BrowserNotFound, match="no Chromium headless shell was found"):
        chromium_binary.choose_chromium(Settings(chromium_flavor="headless-shell"))


@pytest.mark.parametrize("needs_full", [{"headless": False}, {"stealth": True}])
def test_forcing_the_shell_where_only_the_full_browser_serves_is_refused(needs_full):
    with pytest.raises(ConfigError, match="cannot serve these settings"):
        Settings.from_sources({"chromium_flavor": "headless-shell", **needs_full}, env={})


def test_the_headless_shell_gets_no_headless_or_startup_window_flag(tmp_path):
    full = chrome.launch_flags(str(tmp_path))
    shell = chrome.launch_flags(str(tmp_path), headless_shell=True)
    assert {"--headless=new", "--no-startup-window"} <= set(full)
    assert set(full) - set(shell) == {"--headless=new", "--no-startup-window"}
