"""The extension-bridge table: what a hostile model (or a page leading it) tries through the tab a
person shared from their own Chrome, to step out of that tab.

The person's Chromium runs the shipped extension (tests/bridge_browser.py): one tab on 127.0.0.1 is
shared, another tab, of another site (localhost), is signed in to a "mail" whose cookie no one
shared. Each row is one attempt, through the tools or as raw DevTools commands on the relay's
client (what any part of webhand's driver could send); a row passes when the attempt is refused
(or, for reads, returns nothing of the unshared site), the shared tab is still on its page, and the
unshared tab was never touched.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bridge_browser import UNSHARED_COOKIE, first_reply, persons_browser
from webhand.host import Webhand
from webhand.security.pairing import EXTENSION_ORIGIN


@dataclass
class Bridge:
    context: Any   # the tools, as a conversation calls them
    client: Any    # the relay's client: raw DevTools commands as webhand's driver sends them
    link: Any      # the extension's connection
    session: str   # the shared tab's session on the client
    tab_id: int
    site: Any


@dataclass
class Row:
    name: str
    attempt: Callable[[Bridge], Awaitable[tuple[bool, str]]]  # (refused, what came back)
    refused: bool = True  # False: a read that answers, with nothing of the unshared site
    shows: str = ""  # what a read must still show of the shared site


def navigate(url: str) -> Callable[[Bridge], Awaitable[tuple[bool, str]]]:
    async def attempt(bridge: Bridge) -> tuple[bool, str]:
        reply = await bridge.context.call("browser_navigate", {"url": url})
        return reply.is_error, reply.text
    return attempt


def tool(tool_name: str, **arguments: Any) -> Callable[[Bridge], Awaitable[tuple[bool, str]]]:
    async def attempt(bridge: Bridge) -> tuple[bool, str]:
        reply = await bridge.context.call(tool_name, arguments)
        text = reply.text
        saved = re.search(r" to (/\S+\.json) ", text)
        if saved:  # what was written is what counts
            text += Path(saved.group(1)).read_text()
        return reply.is_error, text
    return attempt


def raw(method: str, params: dict[str, Any] | None = None, *, browser_wide: bool = False):
    async def attempt(bridge: Bridge) -> tuple[bool, str]:
        try:
            answer = await bridge.client.send_raw(method, params or {}, None if browser_wide else bridge.session)
        except Exception as error:  # noqa: BLE001 - the refusal is the row's outcome, whatever its type
            return True, f"{type(error).__name__}: {error}"
        return False, str(answer)
    return attempt


def past_the_relay(method: str, params: dict[str, Any]):
    """Straight to the extension, as if the relay had let it through: the extension checks too."""
    async def attempt(bridge: Bridge) -> tuple[bool, str]:
        try:
            answer = await bridge.link.request({"type": "command", "tabId": bridge.tab_id, "sessionId": None,
                                                "method": method, "params": params}, 10)
        except RuntimeError as error:
            return True, str(error)
        return False, str(answer)
    return attempt


ROWS = [
    Row("file: URL", navigate("file:///etc/passwd")),
    Row("chrome: page", navigate("chrome://version")),
    Row("chrome: settings", navigate("chrome://settings/passwords")),
    Row("the extension's own popup", navigate(f"{EXTENSION_ORIGIN}/popup.html")),
    Row("another extension's page", navigate("chrome-extension://aaaabbbbccccddddeeeeffffgggghhhh/x.html")),
    Row("devtools: page", navigate("devtools://devtools/bundled/inspector.html")),
    Row("view-source:", navigate("view-source:http://127.0.0.1/")),
    Row("data: HTML", navigate("data:text/html,<script>document.title='ran'</script>")),
    Row("raw Page.navigate to a file", raw("Page.navigate", {"url": "file:///etc/passwd"})),
    Row("raw Page.navigate to the extension", raw("Page.navigate", {"url": f"{EXTENSION_ORIGIN}/popup.html"})),
    Row("Page.navigate past the relay", past_the_relay("Page.navigate", {"url": "chrome://version"})),
    Row("list cookies", tool("browser_cookies"), refused=False, shows="bridge_cookie"),
    Row("cookies of the unshared site", tool("browser_cookies", domain="localhost"), refused=False),
    Row("cookie by name", tool("browser_cookies", action="get", name="mail_session"), refused=False),
    Row("storage state", tool("browser_storage_state", action="save", path="state.json"), refused=False, shows="bridge_cookie"),
    Row("raw Network.getAllCookies", raw("Network.getAllCookies"), refused=False, shows="bridge_cookie"),
    Row("raw Storage.getCookies", raw("Storage.getCookies"), refused=False),
    Row("raw Network.getCookies of the unshared site",
        raw("Network.getCookies", {"urls": ["http://localhost/"]}), refused=False),
    Row("set a cookie on the unshared site", tool("browser_cookies", action="set", name="mail_session", value="x",
                                                 domain="localhost")),
    Row("raw Network.setCookies on the unshared site",
        raw("Network.setCookies", {"cookies": [{"name": "n", "value": "v", "domain": "localhost", "path": "/"}]})),
    Row("raw Network.deleteCookies of the unshared site",
        raw("Network.deleteCookies", {"name": "mail_session", "domain": "localhost"})),
    Row("raw Network.deleteCookies by name only", raw("Network.deleteCookies", {"name": "mail_session"})),
    Row("raw Storage.clearCookies", raw("Storage.clearCookies")),
    Row("raw Network.clearBrowserCookies", raw("Network.clearBrowserCookies")),
    Row("raw Target.createTarget in the tab", raw("Target.createTarget", {"url": "http://localhost/"})),
    Row("raw Target.getTargets in the tab", raw("Target.getTargets")),
    Row("raw Page.setDownloadBehavior", raw("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": "/"})),
    Row("raw Browser.setDownloadBehavior", raw("Browser.setDownloadBehavior", {"behavior": "allow"}, browser_wide=True)),
    Row("raw Target.createTarget, browser-wide", raw("Target.createTarget", {"url": "about:blank"}, browser_wide=True)),
]


@pytest.fixture(scope="module")
async def bridge(tmp_path_factory, site):
    with persons_browser(tmp_path_factory.mktemp("hostile-bridge"), site) as person:
        async with Webhand(person.settings) as webhand:
            context = webhand.conversation("hostile-bridge")
            await first_reply(context, "browser_snapshot", {})
            link = webhand.sessions.driver.relay.link
            client = next(iter(link.clients))
            tab_id = next(iter(link.shared))
            yield Bridge(context, client, link, f"tab-{tab_id}", tab_id, site)


@pytest.mark.one_driver("the extension bridge is a raw-CDP connection to the person's own Chromium")
@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
async def test_the_shared_tab_is_the_boundary(bridge, row):
    refused, said = await row.attempt(bridge)
    assert refused == row.refused, said
    assert UNSHARED_COOKIE not in said
    assert row.shows in said, said  # the shared site's cookies still come back
    # The shared tab is where it was, on its web page; the unshared tab was never touched.
    where = await bridge.client.send_raw("Runtime.evaluate", {"expression": "location.href", "returnByValue": True},
                                         bridge.session)
    assert "bridge_shared" in where["result"]["value"], where
    assert "bridge_shared" in bridge.link.shared[bridge.tab_id]["url"]
    assert not bridge.site.received_paths("tab=private&what=")
