"""After an action, the reply tells what changed on the page since the last snapshot."""

from __future__ import annotations

import re

import pytest

from helpers import ok
from webhand import Webhand
from webhand.page.diff import diff_snapshots
from webhand.page.snapshot import Snapshot


def ref(snapshot: str, line: str) -> str:
    found = re.search(re.escape(line) + r" \[((?:f\d+)?e\d+)\]", snapshot)
    assert found, f"{line!r} not in snapshot:\n{snapshot}"
    return found.group(1)


async def test_a_click_replies_with_only_the_lines_that_changed(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/login.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    typed = await tools.call("browser_type", {"ref": ref(shot, 'textbox "Email"'), "text": "ada@example.com"})
    assert re.search(r'^~ textbox "Email" \[e\d+\]: value="" → "ada@example.com"$', typed.text, re.M), typed.text

    clicked = await tools.call("browser_click", {"ref": ref(shot, 'button "Sign in"')})
    assert "(1 added, 0 removed, 0 changed)" in clicked.text, clicked.text
    assert '+ status: Welcome, ada@example.com!' in clicked.text
    assert 'link "Home"' not in clicked.text  # not the whole page again

    again = await tools.call("browser_click", {"ref": ref(shot, 'button "Sign in"')})
    assert "No change seen after the click, and nothing it started is still pending." in again.text


async def test_a_click_that_changes_a_state_shows_the_changed_line_with_its_ref(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/repeated.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    third = re.findall(r'button "Add to cart" \[(e\d+)\]', shot)[2]
    clicked = await tools.call("browser_click", {"ref": third})
    # The button the click focused is not news: the click put the focus there.
    assert re.findall(r"^~ .*$", clicked.text, re.M) == [f'~ button "Add to cart" [{third}]: not pressed → pressed']


async def test_a_click_that_navigates_replies_with_the_new_page(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/other.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    clicked = await tools.call("browser_click", {"ref": ref(shot, 'link "Back"')})
    assert "Navigated to" in clicked.text
    assert "A new page (old refs no longer work); its snapshot:" in clicked.text
    assert "# Sign in to your account" in clicked.text
    assert "- " not in clicked.text.split("its snapshot:")[1]  # no diff against the old document


async def test_no_diff_before_the_first_snapshot(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/repeated.html")})
    clicked = await tools.call("browser_click", {"selector": "button"})
    assert not clicked.is_error and "snapshot" not in clicked.text


@pytest.fixture
def full_replies(webhand, tools, monkeypatch):
    """A conversation of the shared Webhand with ``snapshot_diff = "full"`` (read at each action's
    reply, so set for this test alone: no Webhand of its own to launch)."""
    monkeypatch.setattr(webhand.settings, "snapshot_diff", "full")
    return tools


async def test_with_snapshot_diff_full_an_action_replies_with_the_whole_snapshot(full_replies, site):
    tools = full_replies
    await tools.call("browser_navigate", {"url": site.url("snapshot/repeated.html")})
    clicked = await tools.call("browser_click", {"selector": "button"})
    assert "Snapshot of the page now:" in clicked.text
    assert "# Products" in clicked.text and "## Product 6" in clicked.text
    assert len(re.findall(r'button "Add to cart" \[e\d+\] .*pressed', clicked.text, re.M)) == 1


def snapshot(text: str, **facts: object) -> Snapshot:
    return Snapshot(text, 0, 0, "http://127.0.0.1/", "", **facts)


def test_diff_matches_ref_lines_by_ref_and_other_lines_by_text():
    old = snapshot('# Cart\nbutton "Add" [e1]\ncheckbox "Gift" [e2]\nlink "Old" [e3] url=/old\n## Totals')
    new = snapshot('# Cart\nbutton "Add" [e1] focused\ncheckbox "Gift" [e2] checked\n## Totals\nalert "Saved"\n'
                   'button "Undo" [e9]', focus_followed_press=True)
    changes = diff_snapshots(old, new)
    assert changes.added == ['alert "Saved"', 'button "Undo" [e9]']
    assert changes.removed == ['link "Old" [e3] url=/old']
    assert changes.changed == ['checkbox "Gift" [e2]: unchecked → checked']  # the click's own focus is not news


def test_a_change_line_says_each_state_gained_and_lost_and_the_old_name_and_value():
    old = snapshot('checkbox "I agree" [e1] disabled\nbutton "Unlock" [e2]\ntextbox "City" [e3] value="Paris"\n'
                   'textbox "Code" [e4] placeholder="1234"\nbutton "Menu" [e5] expanded\ndialog "Confirm"\n'
                   'slider "Volume" [e6] value=5 (0..10)\nbutton "Buy" [e7]')
    new = snapshot('checkbox "I agree" [e1] checked\nbutton "Unlocked" [e2] pressed\ntextbox "City" [e3]\n'
                   'textbox "Code" [e4] value="99"\nbutton "Menu" [e5]\ndialog "Confirm" [focused]\n'
                   'slider "Volume" [e6] value=7 (0..10)\nbutton "Buy" [e8]')
    assert diff_snapshots(old, new).changed == [
        'checkbox "I agree" [e1]: disabled → enabled, unchecked → checked',
        'button "Unlocked" [e2] (was "Unlock"): not pressed → pressed',
        'textbox "City" [e3]: value="Paris" → ""',
        'textbox "Code" [e4]: value="" → "99"',  # the placeholder left with the empty value: not said
        'button "Menu" [e5]: expanded → collapsed',
        'dialog "Confirm": focused',
        'slider "Volume" [e6]: value=5 (0..10) → 7 (0..10)',
        'button "Buy" [e8] (was e7)',  # the page replaced it by a look-alike: a new ref
    ]
    assert not diff_snapshots(old, new).added and not diff_snapshots(old, new).removed


def test_a_line_a_page_could_shape_is_compared_as_text():
    # Text in brackets that is no state, and a control line whose states do not parse.
    old = snapshot('note "x" [urgent]\nslider "Volume" [e6] value=5 (0 .. 10)')
    new = snapshot('note "x" [done]\nslider "Volume" [e6] value=6 (0 .. 10)')
    changes = diff_snapshots(old, new)
    assert changes.added == ['note "x" [done]'] and changes.removed == ['note "x" [urgent]']
    assert changes.changed == ['slider "Volume" [e6] value=6 (0 .. 10) (was: slider "Volume" [e6] value=5 (0 .. 10))']


# browser_type ends its wait early when typing changed nothing but the field (dom_unchanged_ms);
# these pin what its reply must still show, however the page schedules its reaction.
@pytest.mark.parametrize(("field", "shown"), [
    ("Frame", "frame: preview of ada"),  # drawn in the next animation frame
    ("Timer", "timer: saw ada"),  # drawn from a zero-delay timer
    ("Chain", "chain: ada is free"),  # "checking" at once, the verdict 24 ms later
    ("Remote", "remote: ada is valid"),  # a request the input started, answered 300 ms later
])
async def test_typing_replies_with_how_the_page_reacted(tools, site, field, shown):
    await tools.call("browser_navigate", {"url": site.url("actions/reactions.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    typed = await tools.call("browser_type", {"ref": ref(shot, f'textbox "{field}"'), "text": "ada"})
    assert f"+ status: {shown}" in typed.text, typed.text


async def test_typing_works_on_a_page_that_took_the_name_of_the_typing_watch(tools, site):
    await tools.call("browser_navigate", {"url": site.url("actions/squatter.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    typed = await tools.call("browser_type", {"ref": ref(shot, 'textbox "Name"'), "text": "ada"})
    assert not typed.is_error, typed.text
    assert "status: hello ada" in typed.text, typed.text


# Change lines that carry the difference (issue 30, item 4) ----------------------------------------
def change_lines(reply: str) -> list[str]:
    return re.findall(r"^[-+~] .*$", reply, re.M)


async def test_a_change_line_says_what_was_disabled_and_what_a_control_was_called(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/agreement.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    agree, unlock = ref(shot, 'checkbox "I agree"'), ref(shot, 'button "Unlock agreement"')
    clicked = await tools.call("browser_click", {"ref": unlock})
    assert change_lines(clicked.text) == [f'~ checkbox "I agree" [{agree}]: disabled → enabled',
                                          f'~ button "Agreement unlocked" [{unlock}] (was "Unlock agreement")'], \
        clicked.text


async def test_a_dialog_that_only_gained_focus_is_one_change_line(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/agreement.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    clicked = await tools.call("browser_click", {"ref": ref(shot, 'button "Review booking"')})
    assert change_lines(clicked.text) == ['~ dialog "Confirm booking": focused'], clicked.text


async def test_focus_moved_by_a_key_is_said_and_focus_a_click_gave_its_element_is_not(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/agreement.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    unlock = ref(shot, 'button "Unlock agreement"')
    pressed = await tools.call("browser_press_key", {"key": "Tab"})  # the disabled checkbox is skipped
    assert change_lines(pressed.text) == [f'~ button "Unlock agreement" [{unlock}]: focused'], pressed.text
    clicked = await tools.call("browser_click", {"ref": ref(shot, 'button "Book now"')})  # it does nothing
    assert "No change seen after the click" in clicked.text and "focused" not in clicked.text, clicked.text


async def test_a_field_whose_value_changed_shows_its_old_value_and_a_password_stays_hidden(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/values.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    city, password = ref(shot, 'textbox "City"'), ref(shot, 'textbox "Password"')
    typed = await tools.call("browser_type", {"ref": city, "text": "Lyon"})
    assert change_lines(typed.text) == [f'~ textbox "City" [{city}]: value="Paris" → "Lyon"'], typed.text
    typed = await tools.call("browser_type", {"ref": password, "text": "hunter22"})
    assert change_lines(typed.text) == [f'~ textbox "Password" [{password}]: value="" → <hidden>'], typed.text
    assert "hunter22" not in typed.text.split("\n", 1)[1]  # only the echo of what was typed says it


@pytest.fixture
async def secret_tools(tmp_path_factory, site, driver):
    from helpers import settings_for_tests

    folder = tmp_path_factory.mktemp("secrets")
    (folder / "secrets.env").write_text(f"PASSWORD=Zq9-orchid\nPASSWORD.origins=http://127.0.0.1:{site.port}\n")
    settings = settings_for_tests(tmp_path_factory, secrets_file=str(folder / "secrets.env"), warm_reserve=False,
                                  driver=driver)
    async with Webhand(settings) as webhand:
        yield webhand.conversation("diff-secrets")


@pytest.mark.not_on_firefox("the secrets file is a setting above the Driver (a Webhand of its own, a Firefox start); typing and the diff on Firefox are the shared-fixture tests")
async def test_a_secret_a_field_held_stays_masked_in_its_old_value(secret_tools, site):
    tools = secret_tools
    await tools.call("browser_navigate", {"url": site.url("snapshot/values.html")})
    city = ref((await tools.call("browser_snapshot", {})).text, 'textbox "City"')
    first = await tools.call("browser_type", {"ref": city, "text": "<secret>PASSWORD</secret>"})
    assert f'~ textbox "City" [{city}]: value="Paris" → "<secret>PASSWORD</secret>"' in first.text, first.text
    second = await tools.call("browser_type", {"ref": city, "text": "Lyon"})
    assert f'~ textbox "City" [{city}]: value="<secret>PASSWORD</secret>" → "Lyon"' in second.text, second.text
    assert "Zq9-orchid" not in first.text + second.text


# "A new page" only when a new document loaded (issue 30, item 5) ---------------------------------
async def test_an_app_that_re_renders_in_place_is_a_list_of_changes_not_a_new_page(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/app.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    quantity, place = ref(shot, 'textbox "Quantity"'), ref(shot, 'button "Place order"')
    clicked = await tools.call("browser_click", {"ref": place})
    assert "new page" not in clicked.text, clicked.text
    assert "+ Order placed: 8 x Orchid" in clicked.text, clicked.text
    # Every element was replaced: each control's line gives its new ref and the one that no longer works.
    assert re.search(rf'^~ textbox "Quantity" \[e\d+\] \(was {quantity}\)$', clicked.text, re.M), clicked.text
    assert re.search(rf'^~ button "Place order" \[e\d+\] \(was {place}\)$', clicked.text, re.M), clicked.text

    # A link to the same URL loads a new document: that is a new page.
    again = await tools.call("browser_click", {"ref": ref(clicked.text, 'link "Start over"')})
    assert "A new page (old refs no longer work); its snapshot:" in again.text, again.text
    assert "Order placed" not in again.text
    reloaded = await tools.call("browser_reload", {})
    assert "A new page (old refs no longer work); its snapshot:" in reloaded.text, reloaded.text


# Big pages degrade, they don't vanish (issue 30, item 6) ------------------------------------------
def in_order(reply: str, pieces: list[str]) -> bool:
    at = -1
    for piece in pieces:
        at = reply.find(piece, at + 1)
        if at < 0:
            return False
    return True


async def test_a_snapshot_past_the_limit_keeps_the_headings_and_controls_in_page_order(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/outline.html?sections=80")})
    reply = (await tools.call("browser_snapshot", {})).text
    assert re.search(r"saved to (\S+?\.txt)\. Above are its headings and controls\. Call browser_find", reply), reply
    assert in_order(reply, [piece for i in range(1, 81)
                            for piece in (f"## Section {i}\n", f'textbox "Note {i}" [e', f'link "Next after {i}" [e')])
    assert "quick brown fox" not in reply  # the paragraphs are in the file only
    assert "quick brown fox" in open(re.search(r"saved to (\S+?\.txt)", reply).group(1)).read()


async def test_the_python_docs_functions_page_keeps_its_search_box_and_next_link(tools, corpus_site):
    from corpus_site import missing_reason

    if missing_reason("pydoc"):
        pytest.skip(missing_reason("pydoc"))
    await tools.call("browser_navigate", {"url": corpus_site.pydoc("library/functions.html")})
    reply = (await tools.call("browser_snapshot", {})).text
    assert "saved to" in reply and "browser_find" in reply, reply
    assert re.search(r'^# Built-in Functions', reply, re.M), reply
    assert re.search(r'^ *(?:searchbox|textbox) "[^"]*" \[e\d+\]', reply, re.M), reply
    assert re.search(r'^ *link "next" \[e\d+\]', reply, re.M), reply


@pytest.fixture
def small_limit(webhand, tools, monkeypatch):
    """A conversation of the shared Webhand with a 3,000-character snapshot limit (read at each
    reply, so set for this test alone: no Webhand of its own to launch)."""
    monkeypatch.setattr(webhand.settings, "snapshot_max_chars", 3000)
    return tools


async def test_past_the_limit_the_headings_and_controls_are_cut_at_the_limit_in_an_action_reply_too(small_limit, site):
    tools = small_limit
    await tools.call("browser_navigate", {"url": site.url("snapshot/outline.html?sections=80")})
    reply = (await tools.call("browser_snapshot", {})).text
    shown = re.search(r"Above are its headings and controls up to the limit \((\d+) of 241 lines; "
                      r"the rest are in the file\)", reply)
    assert shown and len(reply) < 3000 + 200, reply
    assert in_order(reply, ["## Section 1\n", 'textbox "Note 1" [e', 'link "Next after 1" [e', "## Section 2\n"])
    assert int(shown.group(1)) == len(re.findall(r"^(?:#+ |textbox |link )", reply, re.M))

    clicked = await tools.call("browser_click", {"ref": ref(reply, 'link "Next after 1"')})
    assert "A new page (old refs no longer work); its snapshot:" in clicked.text, clicked.text
    assert in_order(clicked.text, ["## Section 1\n", 'textbox "Note 1" [e', "saved to", "browser_find"]), clicked.text


async def test_a_click_that_changed_nothing_says_so_on_a_page_shorter_than_the_sentence(tools, site):
    """The whole snapshot was sent under "The page changed; its snapshot now:" when it was shorter
    than the no-change sentence, though nothing had changed."""
    await tools.call("browser_navigate", {"url": site.url("actions/tiny.html")})
    assert 'button "Nothing" [e1]' in ok(await tools.call("browser_snapshot", {}))
    clicked = ok(await tools.call("browser_click", {"ref": "e1"}))
    assert "No change seen" in clicked and "changed" not in clicked.replace("No change", "")


# What the snapshot and its change lines show (issue 38) -------------------------------------------
def centre(line: str) -> tuple[tuple[int, int], tuple[int, int]]:
    found = re.search(r"moved from (\d+),(\d+) to (\d+),(\d+)$", line)
    assert found, line
    x0, y0, x1, y1 = map(int, found.groups())
    return (x0, y0), (x1, y1)


async def test_an_svg_flow_editor_s_steps_are_selected_opened_renamed_added_dragged_and_removed(tools, site):
    """Issue 38, items 2 and 3: a step drawn in SVG is selected by its ref, opened with Enter, and
    every change inside the drawing (a step added, renamed, moved, removed) is a change line."""
    await tools.call("browser_navigate", {"url": site.url("snapshot/flow.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    heartbeat, log, canvas = ref(shot, 'clickable "heartbeat"'), ref(shot, 'clickable "log"'), ref(shot, 'clickable "Flow canvas"')

    selected = await tools.call("browser_click", {"ref": heartbeat})
    assert change_lines(selected.text) == ["+ status: Selected heartbeat"], selected.text
    opened = await tools.call("browser_press_key", {"key": "Enter"})
    assert '+ dialog "Edit step"' in opened.text and 'value="heartbeat"' in opened.text, opened.text
    label = ref(opened.text, 'textbox "Label"')
    await tools.call("browser_type", {"ref": label, "text": "pulse", "clear": True})
    saved = await tools.call("browser_click", {"ref": ref(opened.text, 'button "Save"')})
    assert f'~ clickable "pulse" [{heartbeat}] (was "heartbeat")' in change_lines(saved.text), saved.text
    assert '- dialog "Edit step"' in saved.text, saved.text

    added = await tools.call("browser_click", {"ref": canvas})  # a click on the canvas places a step there
    assert re.search(r'^\+ clickable "step 3" \[e\d+\]$', added.text, re.M), added.text

    dragged = await tools.call("browser_drag", {"ref": heartbeat, "to_ref": log})
    moves = [line for line in change_lines(dragged.text) if "moved" in line]
    assert len(moves) == 1 and moves[0].startswith(f'~ clickable "pulse" [{heartbeat}]: moved from '), dragged.text
    before, after = centre(moves[0])
    assert abs(before[0] - 90) <= 3 and abs(after[0] - 390) <= 3 and abs(after[1] - before[1]) <= 3, moves[0]

    removed = await tools.call("browser_press_key", {"key": "Delete"})
    assert change_lines(removed.text) == [f'- clickable "pulse" [{heartbeat}]'], removed.text


async def test_identical_change_lines_say_where_they_are_and_a_zero_size_option_has_no_ref(tools, site):
    """Issue 38, items 8 and 10: a choice shown twice is two lines that say where each is; typing
    that clears one says which; an option nobody can see or hit is offered to nobody."""
    await tools.call("browser_navigate", {"url": site.url("snapshot/typeahead.html")})
    shot = (await tools.call("browser_snapshot", {})).text
    assert re.search(r'^ option "prod" \[e\d+\]$', shot, re.M) and "staging-old" not in shot, shot
    assert "Advanced options" not in shot and "Retry policy" not in shot, shot  # inside a folded panel
    assert re.search(r'^button "Deploy now" \[e\d+\]$', shot, re.M), shot  # fixed: it escapes the fold
    field = ref(shot, 'combobox "Environment"')
    chosen = await tools.call("browser_click", {"ref": ref(shot, 'option "stage"')})
    assert change_lines(chosen.text) == [f'+ stage (after combobox "Environment" [{field}])',
                                         '+ stage (in group "Chosen")'], chosen.text
    typed = await tools.call("browser_type", {"ref": field, "text": "pr"})
    assert f'- stage (after combobox "Environment" [{field}])' in change_lines(typed.text), typed.text
    assert "in group" not in typed.text, typed.text


def test_lines_alike_in_one_place_are_told_apart_by_their_order():
    old = snapshot('list "Tags"\n stage\nbutton "Add" [e1]')
    new = snapshot('list "Tags"\n stage\n stage\n stage\nbutton "Add" [e1]')
    assert diff_snapshots(old, new).added == ['stage (in list "Tags") (2nd of 3)', 'stage (in list "Tags") (3rd of 3)']
    assert diff_snapshots(new, old).removed == ['stage (in list "Tags") (2nd of 3)', 'stage (in list "Tags") (3rd of 3)']


async def test_a_mode_one_snapshot_asked_for_applies_to_that_call_only(tools, site, webhand, monkeypatch):
    """Issue 38, item 12: after `mode=interactive` the next replies show the page's text again; a
    lasting interactive mode is the snapshot_mode setting, and each reply then says text is left out."""
    await tools.call("browser_navigate", {"url": site.url("snapshot/app.html")})
    interactive = (await tools.call("browser_snapshot", {"mode": "interactive"})).text
    assert "Interactive mode: the page's text is left out" in interactive, interactive
    place = ref(interactive, 'button "Place order"')
    clicked = await tools.call("browser_click", {"ref": place})
    assert "+ Order placed: 8 x Orchid" in clicked.text and "Interactive mode" not in clicked.text, clicked.text

    monkeypatch.setattr(webhand.settings, "snapshot_mode", "interactive")
    again = await tools.call("browser_click", {"ref": ref(clicked.text, 'button "Place order"')})
    assert "Order placed" not in again.text.split("\n", 1)[1], again.text
    assert again.text.rstrip().endswith('browser_snapshot with mode="page" shows it.'), again.text
