"""On real pages, every ref'd element's role and name are exactly what Chromium's own accessibility tree says,
except where the snapshot differs on purpose (break hints, icon controls Chromium leaves unnamed, a
phrase said twice: docs/design.md, "Names are Chromium's"; tests/corpus_truth.py allows exactly these).

The corpus (corpus_site.py): a dozen MiniWoB++ tasks after START, Python's HTML docs, and Swagger UI
(rendered, and with an operation expanded). Chromium's role and name for the very element each ref
resolves to are read over CDP in the same run (corpus_truth.py).
"""

from __future__ import annotations

import pytest

from corpus_site import missing_reason, open_task, snapshot_text
from corpus_truth import assert_agrees, chromium_checks
from harness import click, evaluate, tab_of, wait_for_selector

pytestmark = [pytest.mark.corpus,
              pytest.mark.one_driver("the real-page corpus takes minutes; the snapshot and refs are checked on every"
                                     " driver in test_snapshot.py and test_names.py")]

MINIWOB_PAGES = ["click-button", "click-link", "login-user", "enter-password", "click-checkboxes", "click-option",
                 "choose-list", "click-tab", "click-dialog", "click-widget", "read-table", "use-spinner",
                 "form-sequence-2", "email-inbox"]
PYDOC_PAGES = ["index.html", "library/stdtypes.html", "library/functions.html", "tutorial/introduction.html"]


@pytest.mark.parametrize("task", MINIWOB_PAGES)
async def test_miniwob_task_names_are_chromiums(tools, webhand, corpus_site, task):
    if missing_reason("miniwob"):
        pytest.skip(missing_reason("miniwob"))
    tab = await open_task(webhand, tools, corpus_site, task)
    await click(tab, "#sync-task-cover")  # START, by the harness: this test is about names
    checks = await chromium_checks(webhand, tools, await snapshot_text(tools))
    assert_agrees(task, checks)


@pytest.mark.parametrize("doc", PYDOC_PAGES)
async def test_python_docs_names_are_chromiums(tools, webhand, corpus_site, doc):
    if missing_reason("pydoc"):
        pytest.skip(missing_reason("pydoc"))
    reply = await tools.call("browser_navigate", {"url": corpus_site.pydoc(doc)})
    assert not reply.is_error, reply.text
    checks = await chromium_checks(webhand, tools, await snapshot_text(tools))
    assert_agrees(doc, checks)


async def open_swagger(webhand, tools, corpus_site):
    if missing_reason("swagger"):
        pytest.skip(missing_reason("swagger"))
    reply = await tools.call("browser_navigate", {"url": corpus_site.swagger()})
    assert not reply.is_error, reply.text
    tab = await tab_of(webhand, tools)
    await wait_for_selector(tab, ".opblock-summary", timeout=15)  # rendered from the spec it fetched
    return tab


async def test_swagger_ui_names_are_chromiums(tools, webhand, corpus_site):
    await open_swagger(webhand, tools, corpus_site)
    checks = await chromium_checks(webhand, tools, await snapshot_text(tools))
    assert_agrees("swagger-ui", checks)


async def test_swagger_ui_with_an_operation_open_names_are_chromiums(tools, webhand, corpus_site):
    tab = await open_swagger(webhand, tools, corpus_site)
    await click(tab, "#operations-pet-addPet .opblock-summary-control")
    await wait_for_selector(tab, "#operations-pet-addPet .opblock-body", timeout=15)
    checks = await chromium_checks(webhand, tools, await snapshot_text(tools))
    assert_agrees("swagger-ui, POST /pet open", checks)


async def test_snapshot_never_shows_the_text_of_style_or_script_elements(tools, webhand, corpus_site):
    """Swagger UI's logo is an inline SVG holding a <style>: its CSS is not text anyone sees."""
    tab = await open_swagger(webhand, tools, corpus_site)
    hidden = await evaluate(tab, """() => [...document.querySelectorAll('style, script, template, noscript')]
        .map(e => e.textContent.replace(/\\s+/g, ' ').trim()).filter(t => t.length >= 12)""")
    assert hidden, "the page has no style or script text to look for"
    shot = " ".join((await snapshot_text(tools)).split())
    leaked = [text[:80] for text in hidden if text[:40] in shot]
    assert not leaked, f"style/script text in the snapshot: {leaked}"
