"""browser_find: reaching any element of any page size by what it is and what it says."""

from __future__ import annotations

import re

import pytest

from webhand.page import find as find_module
from webhand.page.find import MAX_QUERY_WORDS, rank, read_description, within_one_edit
from webhand.surfaces.cli.demo import serve_demo_site


async def test_find_reaches_a_button_the_snapshot_cap_left_out_and_its_ref_is_the_snapshots(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/big.html?n=10000")})
    capped = await tools.call("browser_snapshot", {})
    assert "browser_find" in capped.text  # the capped snapshot says how to reach the rest

    found = await tools.call("browser_find", {"query": "button Open 1999"})
    assert not found.is_error, found.text
    best = found.text.splitlines()[1]
    assert re.fullmatch(r'button "Open 1999" \[e\d+\]', best), found.text
    ref = re.search(r"\[(e\d+)\]", best).group(1)
    scoped = (await tools.call("browser_snapshot", {"scope": ".row:nth-child(2000)"})).text
    assert f'button "Open 1999" [{ref}]' in scoped  # the same element, the same ref
    assert len(found.text) < 2000  # small whatever the page size


async def test_find_ranks_the_role_asked_for_first_and_searches_frames(tools, site, other_site):
    await tools.call("browser_navigate", {"url": site.url(f"snapshot/frames.html?other={other_site.port}")})
    found = await tools.call("browser_find", {"query": "the pay button"})
    assert re.match(r'button "Pay" \[f\d+e\d+\]', found.text.splitlines()[1]), found.text
    assert "in: ## Cross-origin frame" in found.text


async def test_find_with_no_match_says_so_and_what_to_do(tools, site):
    await tools.call("browser_navigate", {"url": site.url("snapshot/login.html")})
    found = await tools.call("browser_find", {"query": "zebra crossing"})
    assert not found.is_error
    assert "Nothing on the page matches 'zebra crossing'" in found.text and "browser_snapshot" in found.text


# ---------------------------------------------------------------------------------------------
# Plain descriptions, as a person says them: (description, the role and name expected first).
# The ranking is Python's, over the snapshot's lines: the other driver adds nothing.

DEMO_DESCRIPTIONS = [
    ("the create ticket button", "button", "Create ticket"),
    ("please click the button to create a ticket", "button", "Create ticket"),
    ("email field", "textbox", "Email"),
    ("your name input", "textbox", "Your name"),
    ("name", "textbox", "Your name"),
    ("topic dropdown", "combobox", "Topic"),
    ("the topic menu", "combobox", "Topic"),
    ("what happened box", "textbox", "What happened?"),
    ("knowledge base link", "link", "Knowledge base"),
    ("creat ticket", "button", "Create ticket"),          # one letter dropped
    ("knowlegde base", "link", "Knowledge base"),         # two letters swapped
]
SHOP_DESCRIPTIONS = [
    ("login", "button", "Log in"),                         # compound against its spaced form
    ("the login button", "button", "Log in"),
    ("sign up", "link", "Signup"),                         # spaced form against the compound
    ("sign-up link", "link", "Signup"),
    ("checkout", "button", "Check out"),
    ("press check out", "button", "Check out"),
    ("email text box", "textbox", "E-mail address"),       # "e-mail" is "email" with its hyphen
    ("subscribe checkbox", "checkbox", "Subscribe to the newsletter"),
    ("newsletter tick box", "checkbox", "Subscribe to the newsletter"),
    ("country select", "combobox", "Country"),
    ("todays deals", "link", "Today's deals"),
    ("customer servce", "link", "Customer service"),      # one letter dropped
]
NOTHING_ON_SHOP = ["delete account", "log out", "sign in", "password field", "cart", "remove coupon",
                   "checkout 2019", "the logn out button", "refund policy", "track my order"]


def _first(reply) -> tuple[str, str]:
    assert not reply.is_error, reply.text
    assert not reply.text.startswith("Nothing"), reply.text
    match = re.match(r'(\S+) "((?:[^"\\]|\\.)*)" \[', reply.text.splitlines()[1])
    assert match, reply.text
    return match[1], match[2]


@pytest.mark.one_driver("find ranks the snapshot's lines in Python; the snapshot itself is checked on both drivers")
async def test_plain_descriptions_find_the_element_a_person_means_on_the_demo_site_and_a_shop(tools, site):
    with serve_demo_site() as demo:
        await tools.call("browser_navigate", {"url": demo})
        for description, role, name in DEMO_DESCRIPTIONS:
            assert _first(await tools.call("browser_find", {"query": description})) == (role, name), description
    await tools.call("browser_navigate", {"url": site.url("find/shop.html")})
    for description, role, name in SHOP_DESCRIPTIONS:
        assert _first(await tools.call("browser_find", {"query": description})) == (role, name), description


@pytest.mark.one_driver("find ranks the snapshot's lines in Python; the snapshot itself is checked on both drivers")
async def test_descriptions_of_what_the_page_lacks_find_nothing_even_when_a_word_is_close(tools, site):
    await tools.call("browser_navigate", {"url": site.url("find/shop.html")})
    for description in NOTHING_ON_SHOP:
        found = await tools.call("browser_find", {"query": description})
        assert found.text.startswith("Nothing on the page matches"), (description, found.text)


@pytest.mark.one_driver("find ranks the snapshot's lines in Python; the snapshot itself is checked on both drivers")
async def test_a_fuzzy_match_says_how_the_description_was_read(tools, site):
    await tools.call("browser_navigate", {"url": site.url("find/shop.html")})
    found = await tools.call("browser_find", {"query": "the chekout button"})
    lines = found.text.splitlines()
    assert lines[1].startswith('button "Check out"'), found.text
    assert lines[3] == '  matched: "chekout" read as "check out" (one letter off)', found.text  # after its section
    exact = (await tools.call("browser_find", {"query": "check out button"})).text.splitlines()
    assert exact[1].startswith('button "Check out"') and "matched:" not in "\n".join(exact)  # exact: nothing to explain


def test_a_description_is_bounded_and_read_the_same_every_time(monkeypatch):
    words = " ".join(f"word{i}" for i in range(1000))
    description = read_description("the login button " + words)
    assert len(description.terms) + len(description.role_words) <= MAX_QUERY_WORDS
    assert read_description("the login button") == read_description("the login button")
    monkeypatch.setattr(find_module, "MAX_LINES", 100)
    lines = [f'button "Item {i}" [e{i}]' for i in range(150)]
    assert rank(lines, "item 99", 5)[0].line == 'button "Item 99" [e99]'
    assert rank(lines, "item 120", 5) == []  # past the cap: not ranked
    assert within_one_edit("submti", "submit") and within_one_edit("logn", "login")
    assert not within_one_edit("card", "cart") and not within_one_edit("1999", "1998")
