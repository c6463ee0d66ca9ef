"""Connecting to one remote browser: headers reach it, a user's own Chrome can be attached to, and
the settings and `doctor` describe endpoints without ever printing a header's value."""

from __future__ import annotations

import json

import pytest

from helpers import settings_for_tests
from remote_engines import DebuggingChrome, HeaderCheckingProxy, PlaywrightServer
from webhand import Webhand
from webhand.config import load_settings
from webhand.errors import ConfigError
from webhand.surfaces.cli.doctor import run_doctor

TOKEN = "Bearer not-a-real-key-7f3a"


@pytest.fixture
def chrome(tmp_path, site):
    """A user's Chromium with --remote-debugging-port, one tab open on a page that set a cookie."""
    browser = DebuggingChrome(tmp_path / "profile", site.url("set-cookie?remembered=yes"))
    try:
        browser.wait_for_title("Cookie set")
    except BaseException:
        browser.kill()
        raise
    yield browser
    browser.kill()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = PlaywrightServer(tmp_path_factory.mktemp("pw-server"))
    yield started
    started.kill()


@pytest.mark.parametrize("kind", ["playwright", "cdp"])
async def test_headers_reach_the_endpoint(kind, request, tmp_path_factory, site, monkeypatch):
    engine = request.getfixturevalue("server" if kind == "playwright" else "chrome")
    target = engine.url if kind == "playwright" else engine.ws_url
    port = int(target.split(":")[2].split("/")[0])
    proxy = HeaderCheckingProxy(port, TOKEN)
    try:
        monkeypatch.setenv("WEBHAND_TEST_KEY", TOKEN.split()[1])  # ${NAME}: the key stays out of the file
        url = target.replace(f":{port}/", f":{proxy.port}/")
        key = "playwright_url" if kind == "playwright" else "cdp_url"
        settings = settings_for_tests(tmp_path_factory, **{key: url},
                                      remote_headers={"Authorization": "Bearer ${WEBHAND_TEST_KEY}"})
        async with Webhand(settings) as wh:
            reply = await wh.conversation("h").call("browser_navigate", {"url": site.url("login.html")})
        assert not reply.is_error, reply.text
        assert proxy.accepted >= 1 and proxy.refused == 0
    finally:
        proxy.close()


async def test_a_wrong_header_is_refused_with_an_error_that_names_the_endpoint_but_not_the_key(
        tmp_path_factory, server, site):
    port = int(server.url.split(":")[2].split("/")[0])
    proxy = HeaderCheckingProxy(port, TOKEN)
    try:
        url = server.url.replace(f":{port}/", f":{proxy.port}/") + "?token=query-secret"
        settings = settings_for_tests(tmp_path_factory, pool={"endpoints": [
            {"kind": "playwright", "url": url, "headers": {"Authorization": "Bearer wrong-key-x"}, "retries": 1,
             "retry_delay": 0.1, "timeout": 10}], "queue_timeout": 0})
        async with Webhand(settings) as wh:
            reply = await wh.conversation("h").call("browser_navigate", {"url": site.url("login.html")})
        assert reply.is_error
        assert f"127.0.0.1:{proxy.port}" in reply.text and "401" in reply.text
        assert "wrong-key-x" not in reply.text and "query-secret" not in reply.text
        assert proxy.refused == 2  # the first attempt and one retry
    finally:
        proxy.close()


async def test_attaching_to_a_users_chrome_sees_its_open_tab_and_cookie_and_leaves_it_open(
        tmp_path_factory, chrome, site):
    settings = settings_for_tests(tmp_path_factory, cdp_url=chrome.http_url, attach_to_existing_context=True)
    async with Webhand(settings) as wh:
        tools = wh.conversation("mine")
        tabs = await tools.call("browser_tabs", {"action": "list"})
        assert "set-cookie?remembered=yes" in tabs.text, tabs.text
        cookies = await tools.call("browser_cookies", {"action": "list"})
        assert "remembered" in cookies.text and "yes" in cookies.text, cookies.text
        opened = await tools.call("browser_tabs", {"action": "open", "url": site.url("login.html")})
        assert not opened.is_error, opened.text
    assert chrome.alive(), "webhand must never kill a browser it did not start"
    urls = chrome.page_urls()
    assert any("set-cookie" in u for u in urls)  # the user's tab is still open
    assert not any("login.html" in u for u in urls)  # the tab webhand opened is closed


def test_the_pool_is_read_from_the_config_file_and_the_environment(tmp_path):
    (tmp_path / "webhand.toml").write_text('''
[pool]
queue_size = 3
[[pool.endpoints]]
kind = "playwright"
url = "wss://browsers.example/playwright"
headers = { Authorization = "Bearer ${KEY}" }
capacity = 8
labels = ["eu"]
[[pool.endpoints]]
kind = "local"
''')
    settings = load_settings(cwd=tmp_path, env={})
    assert settings.pool is not None and settings.pool.queue_size == 3
    assert [(e.kind, e.capacity, e.labels) for e in settings.pool.endpoints] == \
        [("playwright", 8, ["eu"]), ("local", 5, [])]
    pool = {"endpoints": [{"kind": "cdp", "url": "http://127.0.0.1:9222", "capacity": 2}]}
    from_env = load_settings(cwd=tmp_path / "none", env={"WEBHAND_POOL": json.dumps(pool), "HOME": str(tmp_path)})
    assert from_env.pool is not None and from_env.pool.endpoints[0].capacity == 2


def test_a_bad_endpoint_is_refused_without_echoing_its_headers():
    with pytest.raises(ConfigError) as refused:
        load_settings(env={"WEBHAND_POOL": json.dumps({"endpoints": [
            {"kind": "cdp", "url": "ftp://x", "headers": {"Authorization": "Bearer leaked-key"}}]})})
    assert "needs a url starting with http://" in refused.value.message
    assert "leaked-key" not in str(refused.value)


async def test_doctor_checks_each_endpoint(tmp_path_factory, server, capsys):
    settings = settings_for_tests(tmp_path_factory, pool={"endpoints": [
        {"name": "good", "kind": "playwright", "url": server.url},
        {"name": "gone", "kind": "cdp", "url": "http://127.0.0.1:9", "retries": 0, "timeout": 5}]})
    assert await run_doctor(settings) == 1
    out = capsys.readouterr().out
    assert "ok    endpoint good" in out and "FAIL  endpoint gone" in out


def test_remote_browsers_can_be_given_as_flags(tmp_path, monkeypatch):
    from webhand.surfaces.cli.main import _settings, build_parser

    monkeypatch.chdir(tmp_path)  # no webhand.toml here
    args = build_parser().parse_args(["mcp", "--playwright-url", "wss://browsers.example/pw",
                                      "--remote-header", "Authorization: Bearer ${BROWSER_KEY}"])
    settings = _settings(args)
    assert settings.playwright_url == "wss://browsers.example/pw"
    assert settings.remote_headers == {"Authorization": "Bearer ${BROWSER_KEY}"}  # expanded when connecting
    attached = _settings(build_parser().parse_args(["doctor", "--cdp-url", "http://127.0.0.1:9222",
                                                    "--attach-existing-context"]))
    assert attached.effective_pool().endpoints[0].attach_to_existing_context
