"""Secrets: the model types <secret>NAME</secret>, the page gets the value, no reply ever shows it."""

from __future__ import annotations

import io
import json
import re
import uuid

import pytest
from PIL import Image, ImageChops

from helpers import ref_of, settings_for_tests
from webhand import Webhand

SECRET = "hunter2-Zq9"


def origin(site) -> str:
    return f"http://127.0.0.1:{site.port}"


@pytest.fixture(scope="module")
async def with_secrets(tmp_path_factory, site, driver):
    folder = tmp_path_factory.mktemp("secrets")
    # PASSWORD may be typed on `site` only; OTHER anywhere.
    (folder / "secrets.env").write_text(f"# test secrets\nPASSWORD={SECRET}\nPASSWORD.origins={origin(site)}\n"
                                        "OTHER='quoted value'\n")
    settings = settings_for_tests(tmp_path_factory, secrets_file=str(folder / "secrets.env"), warm_reserve=False,
                                  driver=driver)
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


# The fields of pages/secrets/pixels.html and their boxes (CSS pixels; the viewport is at DPR 1).
PIXEL_FIELDS = {"#plain": (40, 40, 440, 76), "#flip": (40, 120, 440, 156), "#area": (40, 200, 440, 260)}


async def _field_pixels(tools, site, selector: str, text: str) -> tuple[Image.Image, str]:
    """``text`` typed into the field on a fresh page, the field blurred: its box on a screenshot,
    and the screenshot's reply."""
    for call, arguments in (("browser_navigate", {"url": site.url("secrets/pixels.html")}),
                            ("browser_resize", {"width": 800, "height": 400}),
                            ("browser_type", {"selector": selector, "text": text}),
                            ("browser_eval", {"expression": "document.activeElement.blur()"})):
        reply = await tools.call(call, arguments)
        assert not reply.is_error, reply.text
    shot = await tools.call("browser_take_screenshot", {})
    assert not shot.is_error, shot.text
    return Image.open(io.BytesIO(shot.images[0].data)).convert("RGB").crop(PIXEL_FIELDS[selector]), shot.text


async def test_a_typed_secret_is_drawn_as_dots_in_screenshots(secret_tools, site):
    # The page is the attacker in one row: its password field turns into a text field once typed in.
    for selector in PIXEL_FIELDS:
        clear, _ = await _field_pixels(secret_tools, site, selector, SECRET)
        masked, said = await _field_pixels(secret_tools, site, selector, "<secret>PASSWORD</secret>")
        changed = ImageChops.difference(clear, masked).convert("L").point(lambda v: 255 if v > 40 else 0)
        share = changed.histogram()[255] / (masked.width * masked.height)
        assert share > 0.01, (selector, share)  # the letters' pixels are not on the picture
        assert "1 field holding a secret was masked" in said, said
        typed = await secret_tools.call("browser_eval", {"expression": f"document.querySelector({selector!r}).value"})
        assert "<secret>PASSWORD</secret>" in typed.text  # the page holds the real value
    # Replaced by text in clear, the field shows it again, and the screenshot masks nothing.
    reply = await secret_tools.call("browser_type", {"selector": "#area", "text": "in clear"})
    assert not reply.is_error, reply.text
    shot = await secret_tools.call("browser_take_screenshot", {})
    assert "masked" not in shot.text, shot.text


async def test_an_unknown_secret_is_refused_with_the_known_names(secret_tools, site):
    await secret_tools.call("browser_navigate", {"url": site.url("login.html")})
    reply = await secret_tools.call("browser_type", {"selector": "#user", "text": "<secret>NOPE</secret>"})
    assert reply.is_error and "no secret named NOPE" in reply.text and "Known secrets: OTHER, PASSWORD" in reply.text


def test_a_secret_too_short_to_mask_safely_is_refused_without_showing_it(tmp_path):
    from webhand.errors import ConfigError
    from webhand.security.secret_store import load

    path = tmp_path / "secrets.env"
    path.write_text("PIN=x9\nTOKEN=long-enough-value\n")
    with pytest.raises(ConfigError) as caught:
        load(path)
    assert "The secret PIN" in str(caught.value) and "shorter than 4" in str(caught.value)
    assert "x9" not in str(caught.value)


async def test_a_secret_is_refused_on_an_origin_it_was_not_given_naming_the_allowed_ones(secret_tools, site,
                                                                                          other_site):
    await secret_tools.call("browser_navigate", {"url": other_site.url("login.html")})
    reply = await secret_tools.call("browser_type", {"selector": "#pass", "text": "<secret>PASSWORD</secret>"})
    assert reply.is_error and reply.data["error"] == "PolicyRefused"
    assert f"may only be typed on {origin(site)}; this field is on {origin(other_site)}" in reply.text
    typed = await secret_tools.call("browser_eval", {"expression": "document.querySelector('#pass').value"})
    assert typed.text == '""'  # nothing reached the page
    anywhere = await secret_tools.call("browser_type", {"selector": "#user", "text": "<secret>OTHER</secret>"})
    assert not anywhere.is_error, anywhere.text  # a secret without origins may be typed anywhere


async def test_a_secret_is_refused_in_a_frame_of_another_origin_inside_an_allowed_page(secret_tools, site, other_site):
    await secret_tools.call("browser_navigate", {"url": site.url(f"secrets/framed_login.html?other={other_site.port}")})
    await secret_tools.call("browser_wait_for", {"text": "Password"})
    shot = (await secret_tools.call("browser_snapshot", {})).text
    framed = re.search(r'textbox "Password" \[(f\d+e\d+)\]', shot).group(1)
    own = ref_of(shot, 'textbox "Own field"')
    reply = await secret_tools.call("browser_fill_form", {"fields": [
        {"ref": own, "value": "<secret>PASSWORD</secret>"}, {"ref": framed, "value": "<secret>PASSWORD</secret>"}]})
    assert reply.is_error and f"this field is on {origin(other_site)}" in reply.text
    assert "Field 2 of 2" in reply.text and "1. Typed" in reply.text  # the page's own field took it


def test_an_origins_line_that_is_not_an_origin_is_refused_naming_the_entry(tmp_path):
    from webhand.errors import ConfigError
    from webhand.security.secret_store import load

    path = tmp_path / "secrets.env"
    path.write_text("TOKEN=long-enough-value\nTOKEN.origins=https://ok.example github.com/login\n")
    with pytest.raises(ConfigError, match="TOKEN.origins .* has 'github.com/login', which is not an origin"):
        load(path)
    path.write_text("TOKEN.origins=https://ok.example\n")
    with pytest.raises(ConfigError, match="gives origins for TOKEN, but no value"):
        load(path)


def test_origin_rules_need_the_scheme_and_port_and_cover_subdomains_only_with_a_wildcard():
    from webhand.security.secret_store import SecretOrigin

    exact, wildcard = SecretOrigin.parse("https://Example.COM."), SecretOrigin.parse("https://*.example.com")
    assert exact.matches("https://example.com") and exact.matches("https://example.com:443")
    assert not exact.matches("http://example.com") and not exact.matches("https://example.com:8443")
    assert not exact.matches("https://login.example.com") and not exact.matches("null")
    assert wildcard.matches("https://login.example.com") and wildcard.matches("https://example.com")
    assert not wildcard.matches("https://evil-example.com") and not wildcard.matches("https://example.com.evil.test")
    assert SecretOrigin.parse("https://bücher.example").matches("https://xn--bcher-kva.example")


async def test_a_reply_is_withheld_when_the_secrets_file_can_no_longer_be_read(tmp_path_factory, site):
    folder = tmp_path_factory.mktemp("vanishing-secrets")
    (folder / "secrets.env").write_text(f"PASSWORD={SECRET}\n")
    settings = settings_for_tests(tmp_path_factory, secrets_file=str(folder / "secrets.env"), warm_reserve=False)
    async with Webhand(settings) as wh:
        tools = wh.conversation("vanishing-secrets")
        assert not (await tools.call("browser_navigate", {"url": site.url("login.html")})).is_error
        (folder / "secrets.env").unlink()  # the page's text can no longer be checked for secrets
        reply = await tools.call("browser_snapshot", {})
        assert reply.is_error and reply.data["error"] == "ConfigError" and "cannot be read" in reply.text
        assert "Sign in" not in reply.text


def test_a_secret_that_starts_with_a_space_is_masked_when_form_encoded(tmp_path):
    from webhand.security.secret_store import load

    path = tmp_path / "secrets.env"
    path.write_text("PHRASE=' open sesame'\n")
    assert load(path).mask("q=+open+sesame&x=1") == "q=<secret>PHRASE</secret>&x=1"


async def test_a_flow_keeps_a_typed_secret_by_name_and_types_its_value_when_it_runs(secret_tools, site, data_home):
    from webhand.tools.flows.store import flow_path

    await secret_tools.call("browser_navigate", {"url": site.url("login.html")})
    shot = (await secret_tools.call("browser_snapshot", {})).text
    await secret_tools.call("browser_type", {"ref": ref_of(shot, 'textbox "User name"'), "text": "ada"})
    await secret_tools.call("browser_type", {"ref": ref_of(shot, 'textbox "Password"'), "text": "<secret>PASSWORD</secret>"})
    saved = await secret_tools.call("browser_save_flow", {"name": "login", "params": {"user": "ada"}})
    assert not saved.is_error, saved.text
    text = flow_path("login").read_text()
    assert SECRET not in text and "<secret>PASSWORD</secret>" in text
    ran = await secret_tools.call("browser_run_flow", {"name": "login", "params": {"user": "grace"}})
    assert "Ran the flow 'login': 3 of 3 steps." in ran.text and SECRET not in ran.text, ran.text
    typed = await secret_tools.call("browser_eval", {
        "expression": f"[document.querySelector('#user').value, document.querySelector('#pass').value === {SECRET!r}]"})
    assert '"grace"' in typed.text and "true" in typed.text, typed.text
