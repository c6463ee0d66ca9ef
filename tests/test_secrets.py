"""Secrets: the model types <secret>NAME</secret>, the page gets the value, no reply ever shows it."""

from __future__ import annotations

import json
import uuid

import pytest

from helpers import settings_for_tests
from webhand import Webhand

SECRET = "hunter2-Zq9"


@pytest.fixture(scope="module")
async def with_secrets(tmp_path_factory):
    folder = tmp_path_factory.mktemp("secrets")
    (folder / "secrets.env").write_text(f"# test secrets\nPASSWORD={SECRET}\nOTHER='quoted value'\n")
    settings = settings_for_tests(tmp_path_factory, secrets_file=str(folder / "secrets.env"), warm_reserve=False)
    async with Webhand(settings) as wh:
        yield wh


@pytest.fixture
async def secret_tools(with_secrets):
    context = with_secrets.context(f"secrets-{uuid.uuid4().hex[:8]}")
    yield context
    await with_secrets.end_conversation(context.conversation_id)


async def test_a_secret_is_typed_but_never_appears_in_any_reply(secret_tools, site):
    replies = [await secret_tools.call("browser_navigate", {"url": site.url("login.html")}),
               await secret_tools.call("browser_snapshot", {})]
    # A plain text field, so that the snapshot would show the value if nothing redacted it.
    replies.append(await secret_tools.call("browser_type", {"selector": "#user", "text": "<secret>PASSWORD</secret>"}))
    replies.append(await secret_tools.call("browser_fill_form", {"fields": [
        {"selector": "#pass", "value": "<secret>PASSWORD</secret>"}]}))
    replies.append(await secret_tools.call("browser_snapshot", {}))
    replies.append(await secret_tools.call("browser_eval", {"expression": "document.querySelector('#user').value"}))
    replies.append(await secret_tools.call("browser_click", {"selector": "button"}))  # the page greets the user by name
    replies.append(await secret_tools.call("browser_snapshot", {}))
    for reply in replies:
        assert not reply.is_error, reply.text
        assert SECRET not in reply.text and SECRET not in json.dumps(reply.data)

    assert "<secret>PASSWORD</secret>" in replies[5].text  # the value read back is shown as its placeholder
    typed = await secret_tools.call("browser_eval", {
        "expression": f"[document.querySelector('#user').value, document.querySelector('#pass').value]"
                      f".every(v => v === {SECRET!r})"})
    assert json.loads(typed.text) is True  # the page got the real value in both fields
    assert "Welcome, <secret>PASSWORD</secret>!" in replies[-1].text


async def test_an_unknown_secret_is_refused_with_the_known_names(secret_tools, site):
    await secret_tools.call("browser_navigate", {"url": site.url("login.html")})
    reply = await secret_tools.call("browser_type", {"selector": "#user", "text": "<secret>NOPE</secret>"})
    assert reply.is_error and "no secret named NOPE" in reply.text and "Known secrets: OTHER, PASSWORD" in reply.text


def test_a_secret_too_short_to_mask_safely_is_refused_without_showing_it(tmp_path):
    from webhand.errors import ConfigError
    from webhand.secrets import load

    path = tmp_path / "secrets.env"
    path.write_text("PIN=x9\nTOKEN=long-enough-value\n")
    with pytest.raises(ConfigError) as caught:
        load(path)
    assert "The secret PIN" in str(caught.value) and "shorter than 4" in str(caught.value)
    assert "x9" not in str(caught.value)
