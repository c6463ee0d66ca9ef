"""The tools a page offers agents (WebMCP): listed in one line of snapshot and navigate replies, in
full by browser_page_tools, called by browser_call_page_tool, on both Chromium drivers (Chromium
started with --enable-features=WebMCP by the page_tools setting). Pages of our own register tools
both ways (a script's registerTool, a form's toolname), change them after load, and misbehave
(throw, never answer, answer 10 MB, register 10,000 tools, name one like webhand's own). Firefox
has no WebMCP, and a Chromium started without the feature has none either: both say why.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from conftest import DRIVER_MISSING
from helpers import settings_for_tests
from webhand import Webhand
from webhand.config import Settings
from webhand.engine.launch.chrome import PAGE_TOOLS_FLAG, launch_flags, launch_plan, merged_features


def _text(reply) -> str:
    assert not reply.is_error, reply.text
    return reply.text


async def test_a_page_tool_is_listed_called_and_its_changes_reported(tools, site):
    opened = _text(await tools.call("browser_navigate", {"url": site.url("page_tools/flights.html")}))
    assert "Page tools: book, search_flights, subscribe (the page's own;" in opened, opened
    listed = _text(await tools.call("browser_page_tools", {}))
    assert "- search_flights (the page's script, read-only, by the page's word): Search flights between two cities" in listed
    assert '"required":["from","to"]' in listed, listed
    assert "- subscribe (a form, filled and submitted as a person would): Subscribe an email" in listed, listed
    whole = _text(await tools.call("browser_page_tools", {"name": "search_flights"}))
    assert "Input schema: {" in whole and '"max_price"' in whole, whole
    snapshot = _text(await tools.call("browser_snapshot", {}))
    assert "Page tools: book, search_flights, subscribe" in snapshot and "No search yet." in snapshot, snapshot
    called = await tools.call("browser_call_page_tool", {"name": "search_flights",
                                                         "arguments": {"from": "Paris", "to": "Rome"}})
    text = _text(called)
    assert text.startswith("Called the page's tool search_flights. Its answer (page text): "), text
    assert '"id":"AZ7"' in text and '"id":"LH3"' not in text, text
    # Its changes, as any action's: the page's own view of the search, against the last snapshot.
    assert "+ 2 flights from Paris to Rome" in text and "- No search yet." in text, text
    assert called.data["status"] == "completed" and called.data["answer"]["content"][0]["type"] == "text"
    booked = _text(await tools.call("browser_call_page_tool", {"name": "book", "arguments": {"flight": "AZ7"}}))
    assert "Its answer (page text): Booked AZ7; confirmation BK-AZ7" in booked and "+ Booked AZ7" in booked, booked


async def test_arguments_are_checked_against_the_schema_before_the_page_sees_them(tools, site):
    await tools.call("browser_navigate", {"url": site.url("page_tools/flights.html")})
    missing = await tools.call("browser_call_page_tool", {"name": "search_flights", "arguments": {"from": "Paris"}})
    assert missing.is_error and "do not fit the input schema of the page's tool search_flights: 'to' is a required property" \
        in missing.text, missing.text
    wrong = await tools.call("browser_call_page_tool", {"name": "search_flights",
                                                        "arguments": {"from": "Paris", "to": "Rome", "max_price": -5}})
    assert wrong.is_error and "max_price: -5 is less than the minimum of 0" in wrong.text, wrong.text
    unknown = await tools.call("browser_call_page_tool", {"name": "cancel_everything"})
    assert unknown.is_error and "The page offers no tool named cancel_everything" in unknown.text, unknown.text
    assert "Its tools: book, search_flights, subscribe" in unknown.text, unknown.text
    # The page never ran the refused calls.
    assert "No search yet." in _text(await tools.call("browser_snapshot", {}))


async def test_a_form_tool_is_filled_and_submitted_through_the_settle(tools, site):
    await tools.call("browser_navigate", {"url": site.url("page_tools/flights.html")})
    await tools.call("browser_snapshot", {})
    # The browser's own validation holds: the schema takes any string, the form an email only.
    invalid = await tools.call("browser_call_page_tool", {"name": "subscribe", "arguments": {"email": "not an email"}})
    assert invalid.is_error and "The form was filled but not submitted: its fields are not valid: email:" in invalid.text, \
        invalid.text
    done = _text(await tools.call("browser_call_page_tool", {"name": "subscribe",
                                                             "arguments": {"email": "ann@example.com", "frequency": "monthly"}}))
    assert done.startswith("Filled and submitted the form subscribe; the submission loaded a new document."), done
    assert "Navigated to " + site.url("page_tools/subscribed.html?email=ann%40example.com&frequency=monthly") in done, done
    assert "Subscribed ann@example.com" in done, done
    # The new document's tools replace the old one's: it has none.
    assert (await tools.call("browser_page_tools", {})).text.startswith("The page offers no tools of its own")


async def test_a_form_the_page_answers_and_one_that_submits_itself(tools, site):
    opened = _text(await tools.call("browser_navigate", {"url": site.url("page_tools/page_form.html")}))
    assert "Page tools: add_note, site_search" in opened, opened
    await tools.call("browser_snapshot", {})
    added = _text(await tools.call("browser_call_page_tool", {"name": "add_note", "arguments": {"text": "buy milk"}}))
    assert added.startswith("Filled and submitted the form add_note. Its answer (page text): Added note: buy milk"), added
    assert "\nbuy milk" in added.split("\n", 1)[1], added  # in the page's changes (here its whole new snapshot)
    searched = _text(await tools.call("browser_call_page_tool", {"name": "site_search", "arguments": {"email": "q"}}))
    assert "Navigated to " + site.url("page_tools/subscribed.html?email=q") in searched, searched


async def test_tools_added_and_removed_after_load_are_listed_as_they_are_now(tools, site):
    opened = _text(await tools.call("browser_navigate", {"url": site.url("page_tools/changing.html")}))
    assert "Page tools: greet (" in opened, opened
    await tools.call("browser_click", {"selector": "#add"})
    assert "Page tools: greet, late_tool (" in _text(await tools.call("browser_snapshot", {}))
    late = _text(await tools.call("browser_call_page_tool", {"name": "late_tool"}))
    assert "Its answer (page text): late answer" in late, late
    await tools.call("browser_click", {"selector": "#remove"})
    listed = _text(await tools.call("browser_page_tools", {}))
    assert "- late_tool" in listed and "greet" not in listed, listed
    gone = await tools.call("browser_call_page_tool", {"name": "greet", "arguments": {"who": "Ann"}})
    assert gone.is_error and "The page offers no tool named greet" in gone.text, gone.text
    # A new document ends the old one's tools, though the browser never reports them removed.
    await tools.call("browser_navigate", {"url": site.url("page_tools/subscribed.html")})
    assert "Page tools" not in _text(await tools.call("browser_snapshot", {}))
    await tools.call("browser_navigate", {"url": site.url("page_tools/changing.html")})
    assert "- greet (the page's script): Say hello" in _text(await tools.call("browser_page_tools", {}))


async def test_misbehaving_tools_end_as_errors_naming_them_and_the_page_stays_usable(tools, site):
    opened = _text(await tools.call("browser_navigate", {"url": site.url("page_tools/misbehaving.html")}))
    assert "Page tools: bad_schema, fine, never_answers, ten_megabytes, throws (1 named like webhand's own tools, " \
           "not callable)" in opened, opened
    thrown = await tools.call("browser_call_page_tool", {"name": "throws"})
    assert thrown.is_error and "The page's tool throws failed: Error: kaboom from the page" in thrown.text, thrown.text
    silent = await tools.call("browser_call_page_tool", {"name": "never_answers", "timeout": "2s"})
    assert silent.is_error and "The page's tool 'never_answers' did not answer within 2 s; the call was cancelled" \
        in silent.text, silent.text
    assert "Its answer (page text): fine answer" in _text(await tools.call("browser_call_page_tool", {"name": "fine"}))
    # A name of webhand's own is listed as such and never called.
    listed = _text(await tools.call("browser_page_tools", {}))
    assert "- browser_navigate: not callable: it is named like one of webhand's own tools" in listed, listed
    assert "Pretends to be webhand" not in listed, listed
    shadow = await tools.call("browser_call_page_tool", {"name": "browser_navigate", "arguments": {"url": "x"}})
    assert shadow.is_error and "is named like one of webhand's own tools, so it is never called" in shadow.text
    bad = await tools.call("browser_call_page_tool", {"name": "bad_schema"})
    assert bad.is_error and "The page's input schema for bad_schema is not valid JSON Schema" in bad.text, bad.text
    said = _text(await tools.call("browser_snapshot", {}))
    assert "fine ran" in said and "browser_navigate ran" not in said and "bad_schema ran" not in said, said


async def test_a_10_mb_answer_goes_to_a_file_and_the_reply_stays_bounded(tools, site, webhand):
    await tools.call("browser_navigate", {"url": site.url("page_tools/misbehaving.html")})
    reply = await tools.call("browser_call_page_tool", {"name": "ten_megabytes"})
    text = _text(reply)
    limit = webhand.settings.text_max_chars
    assert len(text) < limit, len(text)
    saved = re.search(r"Its answer is ([\d,]+) characters, more than the [\d,]+-character limit \(text_max_chars\): "
                      r"saved to (\S+\.txt)\. It begins: start of the answer\\nxxx", text)
    assert saved, text[:600]
    assert Path(saved.group(2)).read_text().startswith("start of the answer\n" + "x" * 1000)
    assert int(saved.group(1).replace(",", "")) == len("start of the answer\n") + 10 * 1024 * 1024
    assert "answer" not in (reply.data or {}), "the structured result carries no 10 MB answer"


async def test_ten_thousand_tools_are_bounded_in_every_reply(tools, site, webhand):
    opened = _text(await tools.call("browser_navigate", {"url": site.url("page_tools/many.html")}))
    line = next(line for line in opened.splitlines() if line.startswith("Page tools:"))
    assert line.startswith("Page tools: tool_0, tool_1, tool_10, tool_100,") and ", and 9,988 more (" in line and len(line) < 400, line
    listed = await tools.call("browser_page_tools", {})
    text = _text(listed)
    assert len(text) < 2_000, len(text)
    saved = re.search(r"The page offers 10,000 tools of its own \(WebMCP\); their list is [\d,]+ characters, more than "
                      r"the [\d,]+-character limit \(text_max_chars\): saved to (\S+\.txt)", text)
    assert saved, text
    kept = Path(saved.group(1)).read_text()
    assert "- tool_0 (the page's script): Tool number 0 ddd" in kept
    assert "and 8,000 more the page registered past webhand's limit of 2,000" in kept, kept[-300:]
    assert len(listed.data["tools"]) == 200 and listed.data["count"] == 10_000
    assert "Its answer (page text): answer 1999" in _text(await tools.call("browser_call_page_tool", {"name": "tool_1999"}))
    past = await tools.call("browser_call_page_tool", {"name": "tool_9999"})
    assert past.is_error and "The page offers no tool named tool_9999" in past.text


@pytest.mark.not_on_firefox("Firefox has no page tools to leave out (test_firefox_says_why_it_has_no_page_tools)")
async def test_the_line_is_left_out_where_the_model_cannot_call_page_tools(tmp_path_factory, driver, site):
    """Served without the page_tools group, a reply does not name tools the model has no way to call."""
    settings = settings_for_tests(tmp_path_factory, warm_reserve=False, driver=driver)
    async with Webhand(settings, capabilities=["core"]) as webhand:
        tools = webhand.conversation(f"core-only-{uuid.uuid4().hex[:8]}")
        opened = _text(await tools.call("browser_navigate", {"url": site.url("page_tools/flights.html")}))
        snapshot = _text(await tools.call("browser_snapshot", {}))
        assert "Page tools" not in opened and "Page tools" not in snapshot, (opened, snapshot)
        assert "No search yet." in snapshot, snapshot  # the page itself was read


@pytest.mark.not_on_firefox("it starts a Chromium of its own without the WebMCP feature; Firefox's refusal is "
                            "test_firefox_says_why_it_has_no_page_tools")
async def test_a_chromium_started_without_the_feature_says_so(tmp_path_factory, driver, site):
    settings = settings_for_tests(tmp_path_factory, page_tools=False, warm_reserve=False, driver=driver)
    async with Webhand(settings) as webhand:
        tools = webhand.conversation(f"no-webmcp-{uuid.uuid4().hex[:8]}")
        opened = _text(await tools.call("browser_navigate", {"url": site.url("page_tools/flights.html")}))
        assert "Page tools" not in opened, opened
        for name, arguments in [("browser_page_tools", {}), ("browser_call_page_tool", {"name": "book"})]:
            reply = await tools.call(name, arguments)
            assert reply.is_error and "its Chromium was started without the WebMCP feature" in reply.text, reply.text
            assert "Set page_tools = true" in reply.text and "use the page's own controls" in reply.text, reply.text


async def test_firefox_says_why_it_has_no_page_tools(shared_webhands, site):
    if DRIVER_MISSING.get("firefox"):
        pytest.skip(DRIVER_MISSING["firefox"])
    webhand = await shared_webhands.of("firefox")
    tools = webhand.conversation(f"firefox-{uuid.uuid4().hex[:8]}")
    try:
        opened = _text(await tools.call("browser_navigate", {"url": site.url("page_tools/flights.html")}))
        assert "Page tools" not in opened, opened
        for name, arguments in [("browser_page_tools", {}), ("browser_call_page_tool", {"name": "book"})]:
            reply = await tools.call(name, arguments)
            assert reply.is_error and "The page's own tools (WebMCP) is not available on Firefox: it has no WebMCP" \
                in reply.text, reply.text
            assert "Use the page's own controls" in reply.text, reply.text
    finally:
        await webhand.end_conversation(tools.conversation_id)


def test_the_setting_starts_chromium_with_the_feature_merged_with_the_users_own_feature_lists():
    on = launch_plan(Settings.from_sources({"extra_args": ["--enable-features=Foo"]}, env={}), policy_active=False)
    assert on["extra_args"] == ["--enable-features=Foo", PAGE_TOOLS_FLAG]
    assert PAGE_TOOLS_FLAG not in launch_plan(Settings.from_sources({"page_tools": False}, env={}),
                                              policy_active=False)["extra_args"]
    flags = launch_flags("/tmp/profile", headless=True, width=800, height=600,
                         extra=["--enable-features=Foo", "--enable-features=WebMCP", "--disable-features=Bar"])
    enabled = [flag for flag in flags if flag.startswith("--enable-features=")]
    disabled = [flag for flag in flags if flag.startswith("--disable-features=")]
    assert enabled == ["--enable-features=Foo,WebMCP"], enabled
    assert len(disabled) == 1 and disabled[0].endswith(",Bar"), disabled
    assert merged_features(["--x", "--enable-features=A,B", "--y", "--enable-features=B,C"]) == \
        ["--x", "--enable-features=A,B,C", "--y"]
