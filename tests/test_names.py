"""Names a person would read: icon controls named, no break hints, links with their address,
long names cut at a word, a name said twice said once. Chromium's names stay the rule otherwise
(tests/test_corpus_names.py); each difference is in docs/design.md ("Names are Chromium's")."""

from __future__ import annotations

import re

from helpers import open_page
from webhand.surfaces.cli.export import steps_of

# Break hints: soft hyphen, zero-width space, non-joiner, joiner, word joiner, byte-order mark.
HINTS = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")


def ref(snapshot: str, line: str) -> str:
    found = re.search(re.escape(line) + r" \[((?:f\d+)?e\d+)\]", snapshot)
    assert found, f"{line!r} not in snapshot:\n{snapshot}"
    return found.group(1)


def without_emoji_joiners(text: str) -> str:
    """The text with the one kept hint, a joiner between two emoji (one picture), taken out."""
    return text.replace("👩\u200d👩\u200d👧", "")


async def test_icon_controls_chromium_leaves_unnamed_are_named_by_the_icon_inside(tools, site):
    shot = await open_page(tools, site.url("snapshot/names.html"))
    # A tooltip on the icon (Django admin's date and time pickers), an aria-hidden image's alt, an
    # aria-hidden drawing's <svg><title>.
    assert re.search(r'^link "Choose a Date" \[e\d+\] url=#$', shot, re.M), shot
    assert re.search(r'^link "Choose a Time" \[e\d+\] url=#$', shot, re.M), shot
    assert re.search(r'^link "Settings" \[e\d+\] url=/settings$', shot, re.M), shot
    assert re.search(r'^button "Close panel" \[e\d+\]$', shot, re.M), shot
    # Nothing to read at all: told apart by its icon's class or file, or an id that reads as words, as a state.
    assert re.search(r'^button \[e\d+\] icon="fa-trash-can"$', shot, re.M), shot
    assert re.search(r'^button \[e\d+\] icon="dot.png"$', shot, re.M), shot
    assert re.search(r'^button \[e\d+\] id="refresh-list"$', shot, re.M), shot


async def test_break_hints_are_in_no_name_value_text_diff_or_find_result(tools, site):
    shot = await open_page(tools, site.url("snapshot/names.html"))
    assert re.search(r'^link "/pet/findByStatus" \[e\d+\] url=/pet/findByStatus$', shot, re.M), shot  # <wbr>
    assert re.search(r'^button "get /pet/findByStatus" \[e\d+\]$', shot, re.M), shot  # zero-width spaces
    assert "\nA supercalifragilistic path: /store/order/{orderId} and /user/logins.\n" in shot
    assert re.search(r'^textbox "Request path" \[e\d+\] value="/user/logout"$', shot, re.M), shot
    assert "Family: 👩\u200d👩\u200d👧" in shot  # joined emoji stay one picture
    full = (await tools.call("browser_snapshot", {"mode": "full"})).text
    for text in (shot, full):
        assert not HINTS.search(without_emoji_joiners(text)), [line for line in text.splitlines() if HINTS.search(line)]

    clicked = await tools.call("browser_click", {"ref": ref(shot, 'button "Show the next path"')})
    assert "+ status: Next: /pet/{petId}" in clicked.text, clicked.text
    assert not HINTS.search(clicked.text)

    button = ref(shot, 'button "get /pet/findByStatus"')
    assert not (await tools.call("browser_click", {"ref": button})).is_error
    history = tools.webhand.sessions.find(tools.conversation_id).history.all()
    # What an export says it acted on. That click changed nothing, so an export leaves it out (issue
    # 38.16): its recorded target is read from the history, the click before it from the export.
    assert [(t["role"], t["name"]) for t in history[-1]["targets"].values()] == [("button", "get /pet/findByStatus")]
    assert steps_of(history)[-1]["target"] == "button 'Show the next path'"

    found = await tools.call("browser_find", {"query": "get /pet/findByStatus"})
    assert not found.is_error, found.text
    assert re.search(r'^button "get /pet/findByStatus" \[e\d+\]', found.text, re.M), found.text
    pasted = await tools.call("browser_find", {"query": "/store\u200b/order"})  # a query copied with its hints
    assert "/store/order/{orderId}" in pasted.text, pasted.text
    assert not HINTS.search(found.text + pasted.text)

    waited = await tools.call("browser_wait_for", {"text": "/store/order/{orderId}", "timeout": 5})  # as the model read it
    assert not waited.is_error, waited.text

    text = await tools.call("browser_text", {})
    assert "/store/order/{orderId}" in text.text and "supercalifragilistic" in text.text, text.text
    assert not HINTS.search(without_emoji_joiners(text.text))


async def test_a_link_to_the_page_itself_shows_its_address_and_only_a_bare_hash_reads_hash(tools, site):
    shot = await open_page(tools, site.url("snapshot/users/"))
    assert re.search(r'^link "Users" \[e\d+\] current url=/snapshot/users/$', shot, re.M), shot
    assert re.search(r'^link "Groups" \[e\d+\] url=/snapshot/groups/$', shot, re.M), shot
    assert re.search(r'^link "Menu" \[e\d+\] url=#$', shot, re.M), shot
    assert re.search(r'^link "Skip to content" \[e\d+\] url=#content$', shot, re.M), shot
    assert re.search(r'^link "Sort by name" \[e\d+\] url=/snapshot/users/\?o=1$', shot, re.M), shot


async def test_a_long_name_is_cut_at_a_word_and_a_name_said_twice_is_said_once(tools, site):
    shot = await open_page(tools, site.url("snapshot/names.html"))
    cut = re.search(r'^button "(Publish the quarterly[^"]*)" \[e\d+\]$', shot, re.M)
    assert cut, shot
    assert cut.group(1) == "Publish the quarterly summary of sales, returns and stock levels to the shared drive for the…"
    # An icon's alt and the label beside it (a notebook app's launcher card).
    assert re.search(r'^button "Python 3 \(ipykernel\)" \[e\d+\]$', shot, re.M), shot
