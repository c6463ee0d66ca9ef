"""The default snapshot is sufficient: after START, a MiniWoB++ task's whole instruction is in it.

Each episode is seeded (``Math.seedrandom``, core.js) so that runs repeat. START is clicked as an
agent would (its ref, from the snapshot). The instruction is MiniWoB's own ``#query`` text,
whitespace folded; it must read as one piece on one line, not in fragments, unless the page itself
breaks it into blocks.
"""

from __future__ import annotations

import pytest

from corpus_site import fold, missing_reason, open_task
from harness import evaluate
from miniwob_agent import Agent

pytestmark = [pytest.mark.corpus,
              pytest.mark.one_driver("the real-page corpus takes minutes; the snapshot and refs are checked on every"
                                     " driver in test_snapshot.py and test_names.py")]

# Sixty tasks whose instruction is a sentence of text (every MiniWoB++ task has a #query).
TEXT_TASKS = [
    "ascending-numbers", "book-flight", "buy-ticket", "choose-date", "choose-list", "click-button",
    "click-button-sequence", "click-checkboxes", "click-checkboxes-large", "click-checkboxes-soft",
    "click-collapsible", "click-collapsible-2", "click-color", "click-dialog", "click-dialog-2", "click-link",
    "click-menu", "click-menu-2", "click-option", "click-scroll-list", "click-shades", "click-shape", "click-tab",
    "click-tab-2", "click-test", "click-test-2", "click-widget", "copy-paste", "copy-paste-2", "count-shape",
    "daily-calendar", "drag-items", "email-inbox", "email-inbox-forward-nl", "email-inbox-reply", "enter-date",
    "enter-password", "enter-text", "enter-text-2", "enter-time", "find-word", "focus-text-2", "form-sequence-2",
    "form-sequence-3", "grid-coordinate", "guess-number", "login-user", "multi-layouts", "navigate-tree",
    "order-food", "phone-book", "read-table", "search-engine", "sign-agreement", "simple-algebra",
    "simple-arithmetic", "social-media", "terminal", "text-editor", "use-autocomplete",
]


@pytest.mark.parametrize("task", TEXT_TASKS)
async def test_instruction_is_whole_in_the_default_snapshot_after_start(tools, webhand, corpus_site, task):
    if missing_reason("miniwob"):
        pytest.skip(missing_reason("miniwob"))
    problem = await instruction_problem(webhand, tools, corpus_site, task)
    assert problem is None, problem


async def instruction_problem(webhand, tools, corpus_site, task: str) -> str | None:
    """Why ``task``'s instruction is not whole in the default snapshot after START, or None.
    (Also run on Firefox by test_corpus_firefox.py.)"""
    tab = await open_task(webhand, tools, corpus_site, task)
    screen = await Agent(tools).start()
    query = await evaluate(tab, "() => { const q = document.getElementById('query');"
                                " return {text: q.textContent, blocks: q.innerText.split('\\n')}; }")
    whole = fold(query["text"])
    if not whole:
        return f"{task}: MiniWoB showed no instruction"
    lines = [fold(line) for line in screen.lines]
    blocks = [fold(b) for b in query["blocks"] if fold(b)]
    if len(blocks) == 1:  # one block on the page: one piece on one line
        if not any(whole in line for line in lines):
            return f"{task}: {whole!r} is not whole on one line of:\n{screen.text}"
    elif not (whole in screen.folded and all(any(b in line for line in lines) for b in blocks)):
        return f"{task}: {whole!r} is not in:\n{screen.text}"
    return None
