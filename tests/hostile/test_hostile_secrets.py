"""The secret-encoding table: a hostile page hands a typed secret back in every usual encoding, on
every channel a model reads; no channel may show it in any of them.

The page (tests/pages/secrets/echo.html) encodes the typed value in JavaScript, so the encodings
come from the browser, not from webhand's own code. Whether a reply leaks is judged by decoding
it (URL, form, HTML, JSON and base64 decodings, up to three layers deep) and looking for the
secret, again independently of webhand's masking.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import unquote, unquote_plus

import pyotp
import pytest

from helpers import settings_for_tests
from webhand import Webhand

# Characters that every encoding treats differently (space, + @ & < > " ' \ / ? and a non-ASCII
# letter); the tail makes its base64 hold both + and /, where the URL-safe alphabet differs.
SECRET = "p@ss w0rd+Zq!9&<\"\\é'/???a>"
PLACEHOLDER = "<secret>PASSWORD</secret>"
ENCODINGS = ["raw", "url_component", "url_lower_hex", "url_form", "url_twice", "html_named", "html_decimal",
             "html_hex", "json", "json_unicode", "base64", "base64_latin1", "base64_url", "base64_unpadded",
             "base64_in_blob_0", "base64_in_blob_1", "base64_in_blob_2"]
CHANNELS = ["click reply", "browser_get_url", "network requests", "snapshot", "browser_text", "browser_eval",
            "console logs", "error message", "storage state file"]


# The leak detector --------------------------------------------------------------------------------
def _json_unescape(text: str) -> str:
    short = {'"': '"', "\\": "\\", "/": "/", "'": "'", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
    return re.sub(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\([\"\\/'bfnrt])",
                  lambda m: chr(int(m.group(1) or m.group(2), 16)) if m.group(3) is None else short[m.group(3)], text)


def _base64_decodings(text: str) -> list[str]:
    found = []
    for run in re.findall(r"[A-Za-z0-9+/_-]{8,}={0,2}", text):
        for alphabet in (None, b"-_"):
            try:
                data = base64.b64decode(run + "=" * (-len(run) % 4), altchars=alphabet)
            except (binascii.Error, ValueError):
                continue
            found += [data.decode("utf-8", "ignore"), data.decode("latin-1")]
    return found


def _decodings(text: str) -> list[str]:
    return [unquote(text), unquote_plus(text), html.unescape(text), _json_unescape(text), *_base64_decodings(text)]


def leaks(text: str, secrets: Iterable[str] = (SECRET,)) -> bool:
    """Whether ``text`` holds one of ``secrets`` under up to three layers of the usual decodings
    (a one-time code, all digits, only where no digit touches it: inside a timestamp it is no code)."""
    views, frontier = {text}, {text}
    for _ in range(3):
        frontier = {decoded for view in frontier for decoded in _decodings(view)} - views
        views |= frontier
    return any(re.search(rf"(?<!\d){re.escape(secret)}(?!\d)" if secret.isdigit() else re.escape(secret), view)
               for view in views for secret in secrets)


def judge(text: str, secrets: Iterable[str] = (SECRET,), placeholder: str = PLACEHOLDER) -> str:
    if leaks(text, secrets):
        return "leaked"
    return "hidden" if placeholder in text else "not shown"  # "not shown": the channel did not carry it


# The table -----------------------------------------------------------------------------------------
async def run_table(tmp_path_factory, site, driver, secrets_file: str, encodings: list[str], placeholder: str,
                    shown: Callable[[], set[str]]) -> dict[tuple[str, str], str]:
    """The table for one secret: typed as ``placeholder`` into the echo page, handed back in each of
    ``encodings``, and each channel judged for any value ``shown()`` gives (read after the channels,
    so a one-time code of the moment is among them)."""
    folder = tmp_path_factory.mktemp("secret-table")
    (folder / "secrets.env").write_text(secrets_file, encoding="utf-8")
    settings = settings_for_tests(tmp_path_factory, secrets_file=str(folder / "secrets.env"), warm_reserve=False,
                                  driver=driver)
    results: dict[tuple[str, str], str] = {}
    async with Webhand(settings) as wh:
        for encoding in encodings:
            tools = wh.conversation(f"secret-table-{uuid.uuid4().hex[:8]}")
            try:
                channels = await _channels(tools, site, encoding, placeholder)
                secrets = shown()
                for channel, text in channels.items():
                    results[(encoding, channel)] = judge(text, secrets, placeholder)
            finally:
                await wh.end_conversation(tools.conversation_id)
    return results


@pytest.fixture(scope="module")
async def table(tmp_path_factory, site, driver) -> dict[tuple[str, str], str]:
    return await run_table(tmp_path_factory, site, driver, f"PASSWORD={SECRET}\n", ENCODINGS, PLACEHOLDER,
                           lambda: {SECRET})


async def _channels(tools, site, encoding: str, placeholder: str = PLACEHOLDER) -> dict[str, str]:
    """What each channel shows after the page handed the secret back in ``encoding``."""
    async def shown(name: str, arguments: dict, *, fails: bool = False) -> str:
        reply = await tools.call(name, arguments)
        assert reply.is_error == fails, reply.text
        return reply.text + "\n" + json.dumps(reply.data, ensure_ascii=False)

    await shown("browser_navigate", {"url": site.url(f"secrets/echo.html?enc={encoding}")})
    await shown("browser_type", {"selector": "#secret", "text": placeholder})
    channels = {"click reply": await shown("browser_click", {"selector": "#show"})}
    channels["browser_get_url"] = await shown("browser_get_url", {})
    channels["network requests"] = await shown("browser_network_requests", {"url_contains": "/echo"})
    channels["snapshot"] = await shown("browser_snapshot", {})
    channels["browser_text"] = await shown("browser_text", {})
    channels["browser_eval"] = await shown("browser_eval", {"expression": "encodeSecret(typed)"})
    channels["console logs"] = await shown("browser_recent_console_logs", {})
    # The refusal lists the select's options, one of which the page set to the encoded secret.
    channels["error message"] = await shown("browser_select_option", {"selector": "#choice", "values": ["nope"]},
                                            fails=True)
    saved = await shown("browser_storage_state", {"action": "save", "path": f"state-{encoding}.json"})
    channels["storage state file"] = Path(re.search(r" to (/\S+\.json) ", saved).group(1)).read_text()
    return channels


@pytest.mark.parametrize("channel", CHANNELS)
def test_no_encoding_of_a_secret_shows_on_this_channel(table, channel):
    outcomes = {encoding: table[(encoding, channel)] for encoding in ENCODINGS}
    assert set(outcomes.values()) == {"hidden"}, outcomes


def test_the_table_counts_tried_hidden_and_leaked(table, capsys):
    counts = Counter(table.values())
    lines = [f"secret-encoding table: {len(table)} tried ({len(ENCODINGS)} encodings x {len(CHANNELS)} channels), "
             f"{counts['hidden']} hidden, {counts['leaked']} leaked, {counts['not shown']} not shown"]
    for encoding in ENCODINGS:
        row = [table[(encoding, channel)] for channel in CHANNELS]
        if set(row) != {"hidden"}:
            lines.append(f"  {encoding}: " + ", ".join(f"{c}={o}" for c, o in zip(CHANNELS, row) if o != "hidden"))
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert counts["hidden"] == len(table), "\n".join(lines)


# The same table for a one-time code (security/one_time_codes.py): the page hands back the code
# typed from a TOTP seed. A code is digits, so the encodings that spell digits differently are enough.
SEED = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
CODE_PLACEHOLDER = "<secret>SIGN_IN_CODE</secret>"
CODE_ENCODINGS = ["raw", "url_twice", "html_decimal", "html_hex", "json_unicode", "base64", "base64_in_blob_0",
                  "base64_in_blob_1", "base64_in_blob_2"]


def codes_near(moment: float) -> set[str]:
    generator = pyotp.TOTP(SEED)
    return {generator.at(moment + step * 30) for step in range(-3, 3)}


@pytest.fixture(scope="module")
async def code_table(tmp_path_factory, site, driver) -> dict[tuple[str, str], str]:
    # The seed is a secret too: no channel may show it, in any encoding.
    return await run_table(tmp_path_factory, site, driver, f"SIGN_IN_CODE.totp={SEED}\n", CODE_ENCODINGS,
                           CODE_PLACEHOLDER, lambda: codes_near(time.time()) | {SEED})


@pytest.mark.parametrize("channel", CHANNELS)
def test_no_encoding_of_a_one_time_code_shows_on_this_channel(code_table, channel):
    outcomes = {encoding: code_table[(encoding, channel)] for encoding in CODE_ENCODINGS}
    assert set(outcomes.values()) == {"hidden"}, outcomes
