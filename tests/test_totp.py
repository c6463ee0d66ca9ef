"""One-time codes: a secret that is a TOTP seed types the code of the moment; the model sees
neither the seed nor any code, in a reply, the history, an export or a file."""

from __future__ import annotations

import json
import re
import time
import uuid

import pyotp
import pytest

from helpers import settings_for_tests
from webhand import Webhand
from webhand.errors import ConfigError
from webhand.security.one_time_codes import FRESH_MARGIN, OneTimeCodes
from webhand.security.secret_store import load

# A fixed seed for the tests (random_base32's length), shown by the page in groups of four, as sites show it.
SEED = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
PASSWORD = "correct horse"


def codes_near_now() -> set[str]:
    """Every code of SEED valid from two minutes ago to a minute ahead: what the model must never see."""
    generator, now = pyotp.TOTP(SEED), time.time()
    return {generator.at(now + step * 30) for step in range(-4, 3)}


def shows_a_secret(text: str) -> str:
    """The secret ``text`` shows ("" when none): the seed in a spelling sites use, or a code."""
    for spelling in (SEED, SEED.lower(), "JBSW Y3DP EHPK 3PXP"):
        if spelling in text:
            return "the seed"
    # A code is six digits: inside a longer number (a timestamp) it is not a code shown.
    return next((f"the code {code}" for code in codes_near_now() if re.search(rf"(?<!\d){code}(?!\d)", text)), "")


@pytest.fixture(scope="module")
async def with_seed(tmp_path_factory, site, driver):
    folder = tmp_path_factory.mktemp("totp")
    origin = f"http://127.0.0.1:{site.port}"
    (folder / "secrets.env").write_text(
        f"SITE_PASSWORD='{PASSWORD}'\nSITE_PASSWORD.origins={origin}\n"
        # The seed as a site shows it (groups of four), for typing on this site only.
        f"SITE_CODE.totp={' '.join(SEED[i:i + 4] for i in range(0, len(SEED), 4))}\nSITE_CODE.origins={origin}\n"
        f"OTHER_CODE=otpauth://totp/Example:me?secret={pyotp.random_base32()}&issuer=Example\n")
    settings = settings_for_tests(tmp_path_factory, secrets_file=str(folder / "secrets.env"), warm_reserve=False,
                                  driver=driver)
    async with Webhand(settings) as wh:
        yield wh


async def test_a_totp_sign_in_types_the_current_code_and_no_reply_or_record_shows_seed_or_code(with_seed, site):
    tools = with_seed.conversation(f"totp-{uuid.uuid4().hex[:8]}")
    try:
        calls = [("browser_navigate", {"url": site.url(f"totp/signin.html?seed={SEED}")}),
                 ("browser_type", {"selector": "#user", "text": "ada"}),
                 ("browser_type", {"selector": "#password", "text": "<secret>SITE_PASSWORD</secret>", "submit": True}),
                 ("browser_type", {"selector": "#code", "text": "<secret>SITE_CODE</secret>", "submit": True}),
                 ("browser_snapshot", {}),
                 ("browser_eval", {"expression": "document.querySelector('#code').value"}),
                 ("browser_content", {}),
                 ("browser_session_history", {})]
        replies = [await tools.call(name, arguments) for name, arguments in calls]
        for (name, _), reply in zip(calls, replies):
            assert not reply.is_error, (name, reply.text)
            shown = shows_a_secret(reply.text + json.dumps(reply.data, ensure_ascii=False))
            assert not shown, f"{name}'s reply shows {shown}"
        assert "Signed in as ada." in replies[4].text  # the page checked the code typed: it was the current one
        assert "<secret>SITE_CODE</secret>" in replies[5].text  # the code read back is its placeholder
        # The setup panel shows the seed in groups of four: the snapshot shows the placeholder in its place.
        assert "<secret>SITE_CODE</secret>" in replies[4].text
        # What a session writes to disk: the exported history holds the placeholder, never a code.
        session = with_seed.sessions.find(tools.conversation_id)
        written = json.dumps(session.history.all(), ensure_ascii=False)
        assert "<secret>SITE_CODE</secret>" in written and not shows_a_secret(written)
    finally:
        await with_seed.end_conversation(tools.conversation_id)


async def test_a_code_is_typed_only_on_the_origins_its_seed_was_given(with_seed, site, other_site):
    tools = with_seed.conversation(f"totp-{uuid.uuid4().hex[:8]}")
    try:
        await tools.call("browser_navigate", {"url": other_site.url(f"totp/signin.html?seed={SEED}")})
        reply = await tools.call("browser_type", {"selector": "#code", "text": "<secret>SITE_CODE</secret>"})
        assert reply.is_error and "may only be typed on" in reply.text and "Nothing was typed" in reply.text
        assert not shows_a_secret(reply.text)
    finally:
        await with_seed.end_conversation(tools.conversation_id)


# The seed in the secrets file: its forms, and the ones refused ---------------------------------------
def test_an_otpauth_uri_or_a_totp_line_is_a_seed_and_a_plain_value_is_not(tmp_path):
    path = tmp_path / "secrets.env"
    path.write_text(f"A=otpauth://totp/Site:me?secret={SEED}&issuer=Site\nB.totp={SEED.lower()}\n"
                    f"C='{' '.join(SEED[i:i + 4] for i in range(0, 32, 4))}'\nC.totp=JBSW-Y3DP-EHPK-3PXP-JBSW-Y3DP-EHPK-3PXP\n"
                    "PLAIN=a-password\n")
    book = load(path)
    assert {name for name, secret in book.secrets.items() if secret.codes is not None} == {"A", "B", "C"}
    expected = pyotp.TOTP(SEED).now()
    masked = book.mask(f"code {expected}, seed {SEED}, {SEED.lower()}, shown JBSW Y3DP EHPK 3PXP JBSW Y3DP EHPK 3PXP")
    assert expected not in masked and SEED not in masked and SEED.lower() not in masked and "JBSW Y3DP" not in masked


@pytest.mark.parametrize("line, says", [
    ("CODE=otpauth://hotp/Site:me?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&counter=3", "counter-based (HOTP)"),
    ("CODE.totp=not base32 at all!", "not a TOTP seed"),
    ("CODE.totp=JBSWY3DP", "not a TOTP seed"),  # 40 bits: too short a seed to be one
    ("CODE=otpauth://totp/Site:me?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=MD5", "not a TOTP seed"),
    ("CODE.seed=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", "does not start with a secret name"),
])
def test_a_seed_that_cannot_be_used_is_refused_naming_the_line_never_its_value(tmp_path, line, says):
    path = tmp_path / "secrets.env"
    path.write_text(f"# seeds\n{line}\n")
    with pytest.raises(ConfigError) as caught:
        load(path)
    message = str(caught.value)
    assert says in message and "Line 2" in message
    assert "JBSWY3DP" not in message and "not base32 at all" not in message


def test_a_code_about_to_expire_is_not_typed_the_next_one_is():
    codes = OneTimeCodes(SEED)
    step_start = 1_700_000_010 - (1_700_000_010 % 30)
    assert codes.seconds_until_fresh(step_start + 5) == 0.0
    assert codes.seconds_until_fresh(step_start + 30 - FRESH_MARGIN + 0.5) == pytest.approx(FRESH_MARGIN - 0.5)


def test_every_code_typed_stays_masked_after_its_step_is_over():
    codes = OneTimeCodes(SEED)
    long_ago = time.time() - 3600
    typed = codes.code_to_type(long_ago)
    assert typed in codes.spellings()  # an hour later, a field still holding it is masked


def test_a_code_inside_a_longer_number_is_left_as_it_is():
    book_path_text = f"CODE.totp={SEED}\n"
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "secrets.env"
        path.write_text(book_path_text)
        code = pyotp.TOTP(SEED).now()
        masked = load(path).mask(f"started_at 17{code}12.5, typed {code}.")
    assert masked == f"started_at 17{code}12.5, typed <secret>CODE</secret>."
