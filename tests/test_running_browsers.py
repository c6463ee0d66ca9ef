"""Finding running browsers (engine/launch/running_browsers.py, `webhand browsers`, `webhand doctor`): a
Chromium started here with a debugging port in a profile under a temporary home is found and can
be attached; what a DevToolsActivePort file or a profile folder may hold that is wrong or hostile
is explained, never followed out of the home folder, never waited on."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import short_temp_dir
from webhand.engine.launch.running_browsers import examine, find_running_browsers

CHROMIUM = "/usr/lib/chromium/chromium"
ROOT = Path(__file__).resolve().parent.parent


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed once the probe goes


@pytest.fixture(scope="module")
def home_with_chromium(tmp_path_factory):
    """A home whose ~/.config/chromium is the profile of a running Chromium with --remote-debugging-port=0."""
    home = tmp_path_factory.mktemp("home")
    profile = home / ".config" / "chromium"
    profile.mkdir(parents=True)
    # TMPDIR of its own: a Chromium that SIGTERM does not end in time is killed, and would leave its
    # singleton folder (org.chromium.Chromium.*) in the shared /tmp.
    with short_temp_dir() as standin_tmp:
        chrome = subprocess.Popen([CHROMIUM, "--headless=new", "--no-sandbox", "--no-first-run",
                                   f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                  env={**os.environ, "TMPDIR": standin_tmp})
        try:
            deadline = time.monotonic() + 20
            while not (profile / "DevToolsActivePort").exists():
                assert time.monotonic() < deadline, "Chromium wrote no DevToolsActivePort"
                time.sleep(0.05)
            yield home, chrome
        finally:
            os.killpg(chrome.pid, signal.SIGTERM)
            try:
                chrome.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(chrome.pid, signal.SIGKILL)
                chrome.wait(10)
    assert chrome.poll() is not None


@pytest.mark.one_driver("no driver: reads profile folders and asks a port")
def test_a_chromium_with_a_debugging_port_is_found_and_attachable(home_with_chromium):
    home, chrome = home_with_chromium
    (home / ".config" / "google-chrome").mkdir()  # a browser installed but not running
    deadline = time.monotonic() + 15  # the port may answer a moment after the file is written, on a loaded machine
    while not (found := {b.name: b for b in find_running_browsers(home)})["Chromium"].attachable \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    assert found["Chromium"].attachable, found["Chromium"].reason
    port = int((home / ".config" / "chromium" / "DevToolsActivePort").read_text().split()[0])
    assert found["Chromium"].cdp_url == f"http://127.0.0.1:{port}"
    assert "Chrome/" in found["Chromium"].version
    assert not found["Google Chrome"].attachable and "not running" in found["Google Chrome"].reason

    # The CLI, with that home: the same, as JSON.
    listed = subprocess.run([sys.executable, "-m", "webhand", "browsers", "--json"], capture_output=True, text=True,
                            env={**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT / "src")}, timeout=60)
    assert listed.returncode == 0, listed.stderr
    entries = {e["name"]: e for e in json.loads(listed.stdout)}
    assert entries["Chromium"]["cdp_url"] == f"http://127.0.0.1:{port}"


def _write(path: Path, content: object) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content == "fifo":
        os.mkfifo(path)  # opening it to read would wait for a writer
    elif content == "folder":
        path.mkdir()
    elif content == "link out of home":
        path.symlink_to("/etc/hostname")
    elif content == "stale port":
        path.write_text(f"{_closed_port()}\n/devtools/browser/abc")
    elif content == "a web server's port":
        path.write_text(f"{content_port}\n/devtools/browser/abc")
    else:
        path.write_text(str(content))


content_port = 0  # set by the test to the `site` fixture's port: an HTTP server that is no DevTools


@pytest.mark.one_driver("no driver: reads hostile files")
@pytest.mark.parametrize("content, reason", [
    ("", "not a port number"),
    ("abc\n/devtools/browser/x", "not a port number"),
    ("0\n", "not a port number"),
    ("99999\n", "not a port number"),
    ("-5\n", "not a port number"),
    (" 9222 9223\n", "not a port number"),
    (b"\xff\xfe\x00\x01", "not text"),
    ("9" * 2000, "longer than 512 bytes"),
    ("fifo", "not a regular file"),
    ("folder", "not a regular file"),
    ("link out of home", "leads out of the home folder"),
    ("stale port", "does not answer /json/version"),
    ("a web server's port", "does not answer /json/version"),
])
def test_a_garbage_devtools_active_port_file_is_explained(tmp_path, site, content, reason):
    global content_port
    content_port = site.port
    profile = tmp_path / ".config" / "chromium"
    profile.mkdir(parents=True)
    _write(profile / "DevToolsActivePort", content)
    started = time.monotonic()
    found = examine("Chromium", profile, tmp_path, timeout=1.0)
    assert not found.attachable and reason in found.reason, found.reason
    assert time.monotonic() - started < 5  # generous: a bounded probe, never a wait on a FIFO or a slow port


@pytest.mark.one_driver("no driver: reads profile folders")
def test_a_running_profile_without_a_port_and_a_profile_linked_out_of_home(tmp_path):
    # Running (its SingletonLock names a live process here) with no DevToolsActivePort: what Chrome 136+
    # does on its default profile when asked for --remote-debugging-port.
    chrome_profile = tmp_path / ".config" / "google-chrome"
    chrome_profile.mkdir(parents=True)
    (chrome_profile / "SingletonLock").symlink_to(f"{os.uname().nodename}-{os.getpid()}")
    # A profile folder that is a link out of the home folder is not searched at all.
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "DevToolsActivePort").write_text("9222\n")
    (tmp_path / ".config" / "chromium").symlink_to(elsewhere)
    found = {b.name: b for b in find_running_browsers(tmp_path)}
    assert "Chrome 136" in found["Google Chrome"].reason and not found["Google Chrome"].attachable
    assert "Chromium" not in found
