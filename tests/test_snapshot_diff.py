"""After an action, the reply tells what changed on the page since the last snapshot."""

from __future__ import annotations

import re

import pytest

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
    assert re.search(r'^~ textbox "Email" \[e\d+\] required value="ada@example.com"$', typed.text, re.M), typed.text

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
    assert re.findall(r"^~ .*$", clicked.text, re.M) == [f'~ button "Add to cart" [{third}] pressed']


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
async def full_replies(tmp_path_factory, driver):
    from helpers import settings_for_tests

    async with Webhand(settings_for_tests(tmp_path_factory, snapshot_diff="full", warm_reserve=False, driver=driver)) as webhand:
        context = webhand.context("diff-full")
        yield context


async def test_with_snapshot_diff_full_an_action_replies_with_the_whole_snapshot(full_replies, site):
    tools = full_replies
    await tools.call("browser_navigate", {"url": site.url("snapshot/repeated.html")})
    clicked = await tools.call("browser_click", {"selector": "button"})
    assert "Snapshot of the page now:" in clicked.text
    assert "# Products" in clicked.text and "## Product 6" in clicked.text
    assert len(re.findall(r'button "Add to cart" \[e\d+\] .*pressed', clicked.text, re.M)) == 1


def snapshot(text: str) -> Snapshot:
    return Snapshot(text, 0, 0, "http://127.0.0.1/", "")


def test_diff_matches_ref_lines_by_ref_and_other_lines_by_text():
    old = snapshot('# Cart\nbutton "Add" [e1]\ncheckbox "Gift" [e2]\nlink "Old" [e3] url=/old\n## Totals')
    new = snapshot('# Cart\nbutton "Add" [e1] focused\ncheckbox "Gift" [e2] checked\n## Totals\nalert "Saved"\nbutton "Undo" [e9]')
    changes = diff_snapshots(old, new)
    assert changes.added == ['alert "Saved"', 'button "Undo" [e9]']
    assert changes.removed == ['link "Old" [e3] url=/old']
    assert changes.changed == ['checkbox "Gift" [e2] checked']  # focus alone is not news


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
