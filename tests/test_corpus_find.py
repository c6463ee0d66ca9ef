"""browser_find on a real long page: Python's built-in types reference, far past the snapshot's ref cap."""

from __future__ import annotations

import re

import pytest

from corpus_site import controls, missing_reason, open_task

pytestmark = [pytest.mark.corpus,
              pytest.mark.one_driver("the real-page corpus takes minutes; the snapshot and refs are checked on every"
                                     " driver in test_snapshot.py and test_names.py")]


async def test_a_table_of_contents_link_the_cap_left_out_is_found_and_opens_its_section(tools, corpus_site):
    if missing_reason("pydoc"):
        pytest.skip(missing_reason("pydoc"))
    await tools.call("browser_navigate", {"url": corpus_site.pydoc("library/stdtypes.html")})
    capped = await tools.call("browser_snapshot", {})
    assert "more elements with refs were left out" in capped.text and "browser_find" in capped.text

    found = await tools.call("browser_find", {"query": "link Truth Value Testing"})
    best = found.text.splitlines()[1]
    assert re.match(r'link "Truth Value Testing" \[e\d+\] url=#truth', best), found.text
    clicked = await tools.call("browser_click", {"ref": re.search(r"\[(e\d+)\]", best).group(1)})
    assert not clicked.is_error, clicked.text
    where = await tools.call("browser_eval", {"expression": "location.hash"})
    assert where.data["result"] == "#truth"


# Plain descriptions on pages nobody on this team wrote: (page, description, role and name expected first).
CORPUS_DESCRIPTIONS = {
    "miniwob:login-user": [
        ("the login button", "button", "Login"),
        ("log in button", "button", "Login"),                  # spaced form against the compound
        ("please click the button to log in", "button", "Login"),
        ("username field", "textbox", ""),                     # unnamed: found by its hint "Username"
        ("pasword box", "textbox", ""),                        # one letter dropped, found by its hint
    ],
    "miniwob:enter-password": [("verify password field", "textbox", ""), ("submti", "button", "Submit")],
    "miniwob:click-checkboxes": [("checkbox IqDqjr", "checkbox", "IqDqjr")],
    "miniwob:click-tab": [("tab 3", "tab", "Tab #3"), ("link Tab #3", "link", "Tab #3")],
    "miniwob:sign-agreement": [("agree button", "button", "Agree"), ("name text box", "textbox", "Name"),
                               ("cancle", "button", "Cancel")],
    "miniwob:book-flight": [("from field", "textbox", "From:"), ("search button", "button", "Search")],
    "pydoc:index.html": [
        ("quick search box", "textbox", "Quick search"), ("glossary link", "link", "Glossary"),
        ("the tutorial", "link", "Tutorial"), ("go button", "button", "Go"),
        ("complete table of contents", "link", "Complete Table of Contents"), ("glosary", "link", "Glossary"),
    ],
    "swagger": [("explore button", "button", "Explore"), ("dark mode", "button", "Switch to dark mode")],
}
NOTHING_IN_CORPUS = {
    "miniwob:login-user": ["delete account", "log out", "sign up", "password reset link"],
    "pydoc:index.html": ["delete account", "sign in", "checkout button"],
    "swagger": ["delete account"],
}


async def _open(webhand, tools, corpus_site, page: str) -> None:
    kind, _, name = page.partition(":")
    if missing_reason(kind):
        pytest.skip(missing_reason(kind))
    if kind == "miniwob":
        await open_task(webhand, tools, corpus_site, name)
        await tools.call("browser_click", {"selector": "#sync-task-cover"})  # starts the episode: the task shows
    elif kind == "pydoc":
        await tools.call("browser_navigate", {"url": corpus_site.pydoc(name)})
    else:
        await tools.call("browser_navigate", {"url": corpus_site.swagger()})
        await tools.call("browser_wait_for", {"text": "Skip to operations"})


@pytest.mark.parametrize("page", sorted(CORPUS_DESCRIPTIONS))
async def test_plain_descriptions_find_the_element_a_person_means_on_real_pages(webhand, tools, corpus_site, page):
    await _open(webhand, tools, corpus_site, page)
    for description, role, name in CORPUS_DESCRIPTIONS[page]:
        found = await tools.call("browser_find", {"query": description})
        best = controls(found.text)
        assert best and (best[0]["role"], best[0]["name"]) == (role, name), (description, found.text)
    for description in NOTHING_IN_CORPUS.get(page, []):
        found = await tools.call("browser_find", {"query": description})
        assert found.text.startswith("Nothing on the page matches"), (description, found.text)
