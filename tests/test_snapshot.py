"""browser_snapshot: what a model sees of a page, and refs that hit exactly what they name."""

from __future__ import annotations

import re

import pytest

from helpers import open_page


def ref(snapshot: str, line: str) -> str:
    """The ref on the first snapshot line that contains ``line`` (e.g. 'button "Sign in"')."""
    for text in snapshot.splitlines():
        if line in text:
            found = re.search(r"\[((?:f\d+)?e\d+)\]", text)
            assert found, f"no ref on line {text!r}"
            return found.group(1)
    raise AssertionError(f"{line!r} not in snapshot:\n{snapshot}")


async def test_login_form_shows_fields_states_and_links_but_never_the_password(tools, site):
    shot = await open_page(tools, site.url("snapshot/login.html"))
    assert "# Sign in to your account" in shot
    assert re.search(r'textbox "Email" \[e\d+\] required placeholder="you@example.com"', shot)
    assert re.search(r'textbox "Password" \[e\d+\] required value=<hidden>', shot)
    assert "hunter2" not in shot
    assert re.search(r'checkbox "Remember me" \[e\d+\] checked', shot)
    assert re.search(r'link "Forgot password\?" \[e\d+\] url=/forgot\?from=login', shot)
    assert "url=https://example.com/privacy" in shot
    assert "We never share your email." in shot  # the page's text is part of the default snapshot
    assert "\nEmail\n" not in shot  # a label's text is its control's name: said once, on the control
    interactive = (await tools.call("browser_snapshot", {"mode": "interactive"})).text
    assert "We never share" not in interactive and 'textbox "Email"' in interactive

    await tools.call("browser_type", {"ref": ref(shot, 'textbox "Email"'), "text": "ada@example.com"})
    await tools.call("browser_click", {"ref": ref(shot, 'button "Sign in"')})
    after = (await tools.call("browser_snapshot", {})).text
    assert 'status: Welcome, ada@example.com!' in after
    assert 'value="ada@example.com"' in after


async def test_full_mode_adds_landmarks_and_text(tools, site):
    await open_page(tools, site.url("snapshot/login.html"))
    full = (await tools.call("browser_snapshot", {"mode": "full"})).text
    assert "navigation \"Main\"" in full and "\nmain\n" in full
    assert "paragraph: We never share your email." in full
    assert "hunter2" not in full


async def test_each_repeated_button_has_its_own_ref_and_clicking_the_third_changes_only_it(tools, site):
    shot = await open_page(tools, site.url("snapshot/repeated.html"))
    refs = re.findall(r'button "Add to cart" \[(e\d+)\]', shot)
    assert len(refs) == 6 and len(set(refs)) == 6

    clicked = await tools.call("browser_click", {"ref": refs[2]})
    assert not clicked.is_error, clicked.text
    full = (await tools.call("browser_snapshot", {"mode": "full"})).text
    assert re.findall(r'button "Add to cart" \[(e\d+)\] pressed', full) == [refs[2]]
    states = re.findall(r"paragraph: (In cart|Not in cart)", full)
    assert states == ["Not in cart", "Not in cart", "In cart", "Not in cart", "Not in cart", "Not in cart"]


async def test_stale_ref_after_rerender_fails_clearly_and_untouched_refs_stay(tools, site):
    shot = await open_page(tools, site.url("snapshot/rerender.html"))
    old_item = ref(shot, 'button "Done: Walk dog"')
    refresh = ref(shot, 'button "Refresh list"')

    await tools.call("browser_click", {"ref": refresh})
    again = (await tools.call("browser_snapshot", {})).text
    assert ref(again, 'button "Refresh list"') == refresh  # same element, same ref
    assert ref(again, 'button "Done: Walk dog"') != old_item  # a new element, a new ref

    stale = await tools.call("browser_click", {"ref": old_item})
    assert stale.is_error
    assert stale.data["error"] == "RefNotFound"
    assert f"Ref {old_item} is stale" in stale.text and "browser_snapshot" in stale.text
    assert "Finished" not in (await tools.call("browser_snapshot", {})).text  # nothing else was clicked


async def test_refs_of_untouched_elements_are_stable_across_snapshots(tools, site):
    first = await open_page(tools, site.url("snapshot/controls.html"))
    second = (await tools.call("browser_snapshot", {})).text
    assert first == second
    full = (await tools.call("browser_snapshot", {"mode": "full"})).text
    assert ref(full, 'checkbox "Newsletter"') == ref(first, 'checkbox "Newsletter"')


async def test_frames_same_and_cross_origin_are_nested_and_clickable_by_ref(tools, site, other_site):
    shot = await open_page(tools, site.url(f"snapshot/frames.html?other={other_site.port}"))
    assert 'iframe "Same origin frame"' in shot and ' iframe "Cross origin frame"' in shot
    search = ref(shot, 'textbox "Frame search"')
    pay = ref(shot, 'button "Pay"')
    assert re.fullmatch(r"f\d+e\d+", search) and re.fullmatch(r"f\d+e\d+", pay)
    assert search.split("e")[0] != pay.split("e")[0]  # two different frames
    assert re.search(r'^  button "Pay" \[', shot, re.M)  # indented under both iframes

    clicked = await tools.call("browser_click", {"ref": pay})
    assert not clicked.is_error, clicked.text
    typed = await tools.call("browser_type", {"ref": search, "text": "lamps"})
    assert not typed.is_error, typed.text
    after = (await tools.call("browser_snapshot", {})).text
    assert f'status: Pay clicked in {other_site.port}' in after
    assert 'textbox "Frame search"' in after and 'value="lamps"' in after


async def test_open_shadow_dom_is_seen_and_acted_on(tools, site):
    shot = await open_page(tools, site.url("snapshot/shadow.html"))
    assert "## Ada Lovelace" in shot and "### Slotted title" in shot
    assert re.search(r'link "Deep profile link" \[e\d+\] url=/profile/ada', shot)
    await tools.call("browser_type", {"ref": ref(shot, 'textbox "Nickname"'), "text": "Countess"})
    await tools.call("browser_click", {"ref": ref(shot, 'button "Follow"')})
    after = (await tools.call("browser_snapshot", {})).text
    assert 'status: Followed Ada' in after and 'value="Countess"' in after


async def test_select_checkbox_slider_and_comboboxes_show_their_values(tools, site):
    shot = await open_page(tools, site.url("snapshot/controls.html"))
    assert re.search(r'combobox "Country" \[e\d+\] value="Germany"', shot)
    assert re.search(r'checkbox "Newsletter" \[e\d+\]$', shot, re.M)
    assert re.search(r'slider "Volume" \[e\d+\] value=3 \(0\.\.10\)', shot)
    assert re.search(r'slider "Brightness" \[e\d+\] value=70', shot)
    assert re.search(r'combobox "Fruit" \[e\d+\]', shot)
    assert re.search(r'combobox "City" \[e\d+\] value="Paris"', shot)
    assert 'group "Shipping"' in shot and re.search(r'^ radio "Standard" \[e\d+\] checked', shot, re.M)
    assert re.search(r'switch "Dark mode" \[e\d+\] checked', shot)
    assert re.search(r'button "Save" \[e\d+\] disabled', shot)
    assert re.search(r'spinbutton "Age" \[e\d+\] invalid', shot)
    assert re.search(r'clickable "Filter: red" \[e\d+\]', shot)  # pointer cursor, no role
    assert re.search(r'clickable "Clickable div" \[e\d+\]', shot)  # onclick, no role
    assert re.search(r'checkbox "Accept terms" \[e\d+\]', shot)
    assert 'clickable "Accept terms"' not in shot  # the label's pointer cursor is inherited, not a control

    await tools.call("browser_click", {"ref": ref(shot, 'checkbox "Newsletter"')})
    await tools.call("browser_click", {"ref": ref(shot, 'clickable "Filter: red"')})
    after = (await tools.call("browser_snapshot", {})).text
    assert re.search(r'checkbox "Newsletter" \[e\d+\] checked', after)
    assert 'status: chip clicked' in after


async def test_hidden_elements_are_left_out_and_off_screen_ones_are_reachable(tools, site):
    shot = await open_page(tools, site.url("snapshot/hidden.html"))
    assert 'button "Visible button"' in shot
    for hidden in ("Display none", "Visibility hidden", "Hidden attribute", "Aria hidden", "Link in hidden parent",
                   "Inside closed details"):
        assert hidden not in shot
    full = (await tools.call("browser_snapshot", {"mode": "full"})).text
    assert "Visibility hidden" not in full and "Inside closed details" not in full
    clicked = await tools.call("browser_click", {"ref": ref(shot, 'button "Far below button"')})
    assert not clicked.is_error, clicked.text
    assert 'status: Far clicked' in (await tools.call("browser_snapshot", {})).text


async def test_a_page_of_ten_thousand_elements_is_cut_at_max_refs_with_a_notice(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/big.html?n=10000")})
    reply = await tools.call("browser_snapshot", {})
    assert not reply.is_error, reply.text
    # All 2,500 rows of text are kept, so the outline goes to a file; controls past the cap lose their refs.
    saved = open(re.search(r"saved to (\S+?\.txt)", reply.text).group(1)).read()
    assert len(re.findall(r"\[e\d+\]", saved)) == 200 and "Row 2499 Item 2499 Open 2499" in saved
    assert "4800 more elements with refs were left out (max_refs=200)" in reply.text
    assert "browser_find" in reply.text and "scope" in reply.text

    scoped = await tools.call("browser_snapshot", {"scope": ".row:nth-child(2000)"})
    assert re.search(r'link "Item 1999" \[e\d+\]', scoped.text) and 'button "Open 1999"' in scoped.text


async def test_a_snapshot_larger_than_the_limit_goes_to_a_file(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/big.html?n=10000")})
    reply = await tools.call("browser_snapshot", {"max_refs": 5000})
    assert "saved to" in reply.text and "scope" in reply.text
    path = re.search(r"saved to (\S+?\.txt)", reply.text).group(1)
    assert 'button "Open 2499"' in open(path).read()


async def test_navigation_invalidates_old_refs(tools, site):
    shot = await open_page(tools, site.url("snapshot/login.html"))
    sign_in = ref(shot, 'button "Sign in"')
    other = await open_page(tools, site.url("snapshot/other.html"))
    assert ref(other, 'button "Sign in"') != sign_in  # a new document never reuses a ref
    reply = await tools.call("browser_click", {"ref": sign_in})
    assert reply.is_error
    assert reply.data["error"] == "RefNotFound"
    assert f"Ref {sign_in} is not on the current page" in reply.text and "browser_snapshot" in reply.text


@pytest.mark.parametrize("scope", ["#nope", "e999999"])
async def test_a_scope_that_matches_nothing_says_so(tools, site, scope):
    await open_page(tools, site.url("snapshot/login.html"))
    reply = await tools.call("browser_snapshot", {"scope": scope})
    assert reply.is_error and "matches no element" in reply.text and "browser_snapshot" in reply.text


async def test_depth_limits_nesting_in_full_mode(tools, site, other_site):
    await open_page(tools, site.url(f"snapshot/frames.html?other={other_site.port}"))
    shallow = (await tools.call("browser_snapshot", {"mode": "full", "depth": 1})).text
    assert 'button "Outer button"' in shallow and "Cross-origin frame" not in shallow
    deep = (await tools.call("browser_snapshot", {"mode": "full"})).text
    assert "## Cross-origin frame" in deep


async def test_scope_shows_only_that_part_including_its_frames(tools, site, other_site):
    await open_page(tools, site.url(f"snapshot/frames.html?other={other_site.port}"))
    part = (await tools.call("browser_snapshot", {"scope": "#same"})).text
    assert 'textbox "Frame search"' in part and 'button "Pay"' in part
    assert 'button "Outer button"' not in part and "# Outer page" not in part


async def test_a_link_to_nowhere_shows_as_hash_not_as_the_page_url(tools):
    await tools.call("browser_navigate", {"url": "data:text/html,<a href='%23'>Menu</a> <a href='%23top'>Top</a>"})
    shot = (await tools.call("browser_snapshot", {})).text
    assert re.search(r'link "Menu" \[e\d+\] url=#$', shot, re.M)
    assert re.search(r'link "Top" \[e\d+\] url=#top$', shot, re.M)


async def test_the_default_snapshot_keeps_the_text_a_task_needs_folded_into_whole_lines(tools, site):
    shot = await open_page(tools, site.url("snapshot/prose.html"))
    # Inline pieces of one block read as one sentence, as a person sees it.
    assert "\nBook the cheapest one-way flight from: Salem, OR to: Dothan.\n" in shot
    # An unnamed control carries the label text beside it; that text is not said twice.
    assert re.search(r'^textbox \[e\d+\] hint="Username"$', shot, re.M)
    assert re.search(r'^textbox \[e\d+\] value=<hidden> hint="Password"$|^textbox \[e\d+\] hint="Password"$', shot, re.M)
    assert re.search(r'^checkbox \[e\d+\] hint="Keep me signed in"$', shot, re.M)
    assert "\nUsername\n" not in shot and "\nPassword\n" not in shot
    # Cells of a row share a line.
    assert re.search(r"^Name \| Price$", shot, re.M) and re.search(r"^Lamp \| \$5$", shot, re.M)
    # Separators between links carry nothing.
    assert not re.search(r"^[·|]$", shot, re.M)
    # Nothing from hidden, template, noscript or style text.
    for invisible in ("Hidden words", "Template words", "Noscript words", "logo_cls", "fill:"):
        assert invisible not in shot


async def test_names_are_chromiums_own_generated_content_and_svg_titles_included(tools, site):
    shot = await open_page(tools, site.url("snapshot/prose.html"))
    assert re.search(r'^doc-noteref "\[1\]" \[e\d+\]', shot, re.M)  # CSS ::before/::after count, like Chromium
    assert re.search(r'^link "Logo Skip to operations" \[e\d+\]', shot, re.M)  # no <style> text in the name


async def test_a_clickable_wrapper_around_one_control_folds_into_that_control(tools, site):
    shot = await open_page(tools, site.url("snapshot/prose.html"))
    assert re.search(r'^button "Open card" \[e\d+\]$', shot, re.M)
    assert "clickable" not in shot


async def test_page_text_that_looks_like_a_ref_is_defused(tools, site):
    shot = await open_page(tools, site.url("snapshot/prose.html"))
    assert "Text that looks like a ref: (e1) must not point anywhere." in shot
    assert "[e1] must" not in shot


async def test_an_svg_diagram_s_nodes_are_controls_named_by_their_labels_and_found(tools, site):
    """A flow editor draws each step as an SVG group with script-added pointer handlers and a
    <text> label (issue 38, item 2): each step is a control of its own, inside the clickable canvas."""
    shot = await open_page(tools, site.url("snapshot/flow.html"))
    assert re.search(r'^clickable "Flow canvas" \[e\d+\]$', shot, re.M), shot
    assert re.search(r'^ clickable "heartbeat" \[e\d+\]$', shot, re.M), shot
    assert re.search(r'^ clickable "log" \[e\d+\]$', shot, re.M), shot
    assert re.search(r"^ then$", shot, re.M), shot  # an edge's label is text: an edge draws a line, not an area
    assert "heartbeatlog" not in shot and 'clickable "then"' not in shot and 'clickable "0"' not in shot
    assert 'clickable "Saved"' not in shot  # a titled group of an icon is no node
    found = await tools.call("browser_find", {"query": "heartbeat"})
    assert re.search(r'^clickable "heartbeat" \[e\d+\]$', found.text, re.M), found.text


async def test_a_grid_s_rows_keep_their_cells_in_every_mode_and_after_a_re_render(tools, site):
    """A virtualised grid splits each row across two containers tied by aria-rowindex and re-renders
    its rows out of order (issue 38, item 9): every checkbox stays under the row of its run's name."""
    def rows(snapshot: str, named: str = "") -> list[tuple[str, str]]:
        """(checkbox ref, run name) per row, in the snapshot's order."""
        return re.findall(rf'^row{named}\n gridcell "Select row" \[e\d+\]\n  checkbox "Select row" \[(e\d+)\]'
                          r'[^\n]*\n gridcell "([\w-]+)" \[e\d+\]', snapshot, re.M)

    shot = await open_page(tools, site.url("snapshot/grid.html"))
    assert re.search(r"^row: Run \| Status$", shot, re.M), shot
    assert [name for _, name in rows(shot)] == ["ada-run", "bob-run", "cy-run"], shot
    interactive = (await tools.call("browser_snapshot", {"mode": "interactive"})).text
    assert [name for _, name in rows(interactive, r' "Select row [\w-]+ [A-Z]+"')] == ["ada-run", "bob-run", "cy-run"], \
        interactive

    await tools.call("browser_click", {"ref": ref(shot, 'button "Sort by status"')})
    again = (await tools.call("browser_snapshot", {})).text
    bob = dict((name, box) for box, name in rows(again))["bob-run"]
    await tools.call("browser_click", {"ref": bob})
    checked = (await tools.call("browser_snapshot", {})).text
    assert re.search(r'^  checkbox "Select row" \[e\d+\] checked[^\n]*\n gridcell "bob-run"', checked, re.M), checked
    # The page's own record: the checkbox checked is the one of bob's row (aria-rowindex 3).
    assert (await tools.call("browser_eval", {"expression": "document.querySelector('input:checked')"
                                              ".closest('[role=row]').getAttribute('aria-rowindex')"})).data["result"] == "3"


async def test_a_pre_keeps_its_line_breaks(tools):
    await tools.call("browser_navigate", {"url": "data:text/html,<p>Code:</p><pre>def f(x):%0A    return x%0A%0Aprint(f(1))</pre>"
                                                 "<p>after</p>"})
    shot = (await tools.call("browser_snapshot", {})).text
    assert "\nCode:\ndef f(x):\nreturn x\nprint(f(1))\nafter" in shot, shot
