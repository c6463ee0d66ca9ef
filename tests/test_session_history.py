"""Session history: every call a session runs is recorded once (host.py), with secrets masked,
bounded in memory and spilled to the conversation's folder; browser_session_list shows status."""

from __future__ import annotations

import json
import uuid

import pytest

from helpers import settings_for_tests
from webhand import Webhand

SECRET = "Ld8-hist-secret"


@pytest.fixture(scope="module")
async def small_history(tmp_path_factory, driver):
    """A Webhand keeping 3 calls per session in memory, with a secrets file."""
    folder = tmp_path_factory.mktemp("history-secrets")
    (folder / "secrets.env").write_text(f"TOKEN={SECRET}\n")
    settings = settings_for_tests(tmp_path_factory, secrets_file=str(folder / "secrets.env"), warm_reserve=False,
                                  history_keep=3, driver=driver)
    async with Webhand(settings) as wh:
        yield wh


@pytest.fixture
async def short_tools(small_history):
    context = small_history.context(f"history-{uuid.uuid4().hex[:8]}")
    yield context
    await small_history.end_conversation(context.conversation_id)


async def test_history_records_tool_outcome_duration_and_urls(tools, site):
    await tools.call("browser_navigate", {"url": site.url("actions/form.html")})
    await tools.call("browser_click", {"ref": "e99"})
    reply = await tools.call("browser_session_history", {})
    assert not reply.is_error, reply.text
    first, second = reply.data["entries"]
    assert first["tool"] == "browser_navigate" and first["outcome"] == "ok"
    assert first["url_before"] == "about:blank" and first["url_after"] == site.url("actions/form.html")
    assert first["arguments"] == {"url": site.url("actions/form.html")}
    assert first["duration_ms"] > 0 and first["started_at"] > 1.7e9
    assert second["tool"] == "browser_click" and second["outcome"] == "error"
    assert "e99" in second["message"]
    assert "browser_navigate" in reply.text and "-> error" in reply.text


@pytest.mark.not_on_firefox("the history (history_keep, masking) is above the Driver; the shared-fixture history tests run on Firefox")
async def test_history_masks_secrets_in_arguments(short_tools, site):
    await short_tools.call("browser_navigate", {"url": site.url("login.html")})
    # The model typed the value itself (not the placeholder): the record must not keep it.
    await short_tools.call("browser_type", {"selector": "#user", "text": f"user {SECRET}"})
    reply = await short_tools.call("browser_session_history", {})
    typed = reply.data["entries"][-1]
    assert typed["tool"] == "browser_type"
    assert SECRET not in json.dumps(reply.data) and SECRET not in reply.text
    assert typed["arguments"]["text"] == "user <secret>TOKEN</secret>"


@pytest.mark.not_on_firefox("the history (history_keep, masking) is above the Driver; the shared-fixture history tests run on Firefox")
async def test_older_entries_spill_to_a_file_in_the_conversation_folder(short_tools, site):
    for _ in range(5):
        await short_tools.call("browser_navigate", {"url": site.url("actions/form.html")})
    reply = await short_tools.call("browser_session_history", {"limit": 50})
    assert [e["index"] for e in reply.data["entries"]] == [3, 4, 5] and reply.data["count"] == 5
    spill = short_tools.files.folder / "history"
    files = list(spill.glob("default-*.jsonl"))
    assert len(files) == 1 and (files[0].stat().st_mode & 0o777) == 0o600
    spilled = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert [e["index"] for e in spilled] == [1, 2]
    assert str(files[0]) in reply.text


async def test_refs_are_recorded_with_a_selector_and_role_and_name(tools, site):
    await tools.call("browser_navigate", {"url": site.url("actions/form.html")})
    snapshot = await tools.call("browser_snapshot", {})
    assert 'textbox "Name" [e1]' in snapshot.text
    await tools.call("browser_type", {"ref": "e1", "text": "Ada"})
    reply = await tools.call("browser_session_history", {"limit": 1})
    (ref, target), = reply.data["entries"][0]["targets"].items()
    assert ref == "e1" and {k: target[k] for k in ("role", "name", "selector")} == \
        {"role": "textbox", "name": "Name", "selector": "#name"}
    # The other ways a flow finds it again by (tools/flows/locate.py).
    assert (target["label"], target["attributes"], target["css"], target["frame"]) == \
        ("Name", {"id": "name", "name": "name"}, "#name", [])


async def test_session_list_shows_status_times_actions_url_and_tabs(tools, site):
    await tools.call("browser_navigate", {"url": site.url("actions/form.html")})
    await tools.call("browser_snapshot", {})
    reply = await tools.call("browser_session_list", {})
    (info,) = reply.data["sessions"]
    assert info["status"] == "idle" and info["actions"] == 2 and info["tabs"] == 1
    assert info["url"] == site.url("actions/form.html")
    assert info["created_at"] <= info["last_used_at"]
    assert f"- default: {site.url('actions/form.html')} (idle, temporary profile, 1 tab, 2 actions, created " in reply.text


async def test_history_of_a_session_that_is_not_open_says_which_are(tools):
    reply = await tools.call("browser_session_history", {"name": "nope"})
    assert reply.is_error and "No session named 'nope'" in reply.text and "browser_session_list" in reply.text


@pytest.mark.one_driver("the wording of a reply, above the driver")
async def test_the_history_of_an_unused_session_says_so_in_plain_words(tools):
    await tools.call("browser_session_create", {"name": "s0"})
    reply = await tools.call("browser_session_history", {"name": "s0"})
    assert reply.text.startswith("Session s0 has made no calls yet."), reply.text
    await tools.call("browser_session_destroy", {"name": "s0"})
