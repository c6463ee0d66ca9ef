"""The real-page corpus on Firefox (the BiDi driver), measured against Chromium in the same run.

- Names: every ref'd line of Firefox's snapshot has the role and name Chromium's own accessibility
  tree gives the same element (found by its place in the document: the pages are the same, a
  MiniWoB++ episode seeded alike), by the rules test_corpus_names.py holds Chromium's snapshot to;
  an element only one browser gives a ref to counts as a mismatch.
- The MiniWoB++ instruction is whole in Firefox's default snapshot after START, on every task
  test_corpus_sufficiency.py checks on Chromium.
- The scripted agent (miniwob_agent.py) solves the same tasks on Firefox as on Chromium.

One Firefox for the module; Chromium is the shared raw-CDP one (it is the measuring stick).
Skipped, with the reason, when Firefox or a part of the corpus is missing.
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import AsyncIterator

import pytest

from corpus_site import missing_reason, open_task, snapshot_text
from corpus_truth import DOM_PATHS, FACTS, assert_agrees, checks_against_chromium, chromium_truth_by_path
from harness import click, tab_of, wait_for_selector
from helpers import own_browser_processes, processes_in_group, settings_for_tests, wait_until_gone
from miniwob_agent import SOLVERS
from test_corpus_agent import run_episode
from test_corpus_names import MINIWOB_PAGES, PYDOC_PAGES
from test_corpus_sufficiency import TEXT_TASKS, instruction_problem
from webhand import Webhand

pytestmark = [pytest.mark.corpus,
              pytest.mark.one_driver("Firefox is compared with Chromium's own accessibility tree, read over raw CDP: "
                                     "one Chromium is the measuring stick")]

if not (shutil.which("firefox-esr") or shutil.which("firefox")):
    pytest.skip("no Firefox installed (firefox-esr or firefox on PATH): run scripts/ensure-firefox",
                allow_module_level=True)


@pytest.fixture(scope="module")
async def firefox(tmp_path_factory) -> AsyncIterator[Webhand]:
    """One Webhand on one Firefox for the module (each test its own conversation: a user context).
    A Firefox cold start takes 10-30 s on this loaded 2-core machine: a generous launch_timeout."""
    settings = settings_for_tests(tmp_path_factory, driver="firefox", warm_reserve=False, launch_timeout=120)
    async with Webhand(settings) as webhand:
        yield webhand
        group = getattr(webhand.sessions._shared, "pid", None)
    # This Webhand's Firefox and its helpers (its process group), not the worker's shared Firefox.
    left = wait_until_gone(processes_in_group(group) if group else
                           [p for p in own_browser_processes() if "firefox" in (p.cmdline() or [""])[0]], timeout=10)
    assert not left, f"Firefox processes left: {[p.pid for p in left]}"


@pytest.fixture
async def firefox_tools(firefox: Webhand) -> AsyncIterator[object]:
    context = firefox.context(f"firefox-{uuid.uuid4().hex[:10]}")
    yield context
    await firefox.end_conversation(context.conversation_id)


async def _compare(page: str, webhand, tools, firefox, firefox_tools) -> None:
    """Firefox's snapshot of the page each conversation shows, against Chromium's tree."""
    chromium_text, firefox_text = await asyncio.gather(snapshot_text(tools), snapshot_text(firefox_tools))
    truth = await chromium_truth_by_path(webhand, tools, chromium_text)
    tab = await tab_of(firefox, firefox_tools)
    refs = [line.split("[", 1)[1].split("]", 1)[0] for line in firefox_text.splitlines()
            if _is_control(line)]
    # The page agent lives in Firefox's sandbox realm: the harness reads it there (BidiTab.call).
    call = tab.call  # type: ignore[attr-defined]
    paths = await call(DOM_PATHS, [refs], doing="Reading the DOM paths of refs", timeout=30)
    facts = await call(FACTS, [refs], doing="Reading the names' facts", timeout=30)
    assert_agrees(f"{page} on Firefox", checks_against_chromium(firefox_text, paths, facts, truth))


def _is_control(line: str) -> bool:
    from corpus_site import CONTROL_LINE

    return CONTROL_LINE.match(line) is not None


@pytest.mark.parametrize("task", MINIWOB_PAGES)
async def test_miniwob_names_on_firefox_are_chromiums(webhand, tools, firefox, firefox_tools, corpus_site, task):
    if missing_reason("miniwob"):
        pytest.skip(missing_reason("miniwob"))
    tabs = await asyncio.gather(open_task(webhand, tools, corpus_site, task),
                                open_task(firefox, firefox_tools, corpus_site, task))
    await asyncio.gather(*(click(tab, "#sync-task-cover") for tab in tabs))  # START, by the harness
    await _compare(task, webhand, tools, firefox, firefox_tools)


@pytest.mark.parametrize("doc", PYDOC_PAGES)
async def test_python_docs_names_on_firefox_are_chromiums(webhand, tools, firefox, firefox_tools, corpus_site, doc):
    if missing_reason("pydoc"):
        pytest.skip(missing_reason("pydoc"))
    for reply in await asyncio.gather(*(t.call("browser_navigate", {"url": corpus_site.pydoc(doc)})
                                        for t in (tools, firefox_tools))):
        assert not reply.is_error, reply.text
    await _compare(doc, webhand, tools, firefox, firefox_tools)


@pytest.mark.parametrize("operation_open", [False, True], ids=["rendered", "POST /pet open"])
async def test_swagger_ui_names_on_firefox_are_chromiums(webhand, tools, firefox, firefox_tools, corpus_site,
                                                          operation_open):
    if missing_reason("swagger"):
        pytest.skip(missing_reason("swagger"))
    for host, conversation in ((webhand, tools), (firefox, firefox_tools)):
        reply = await conversation.call("browser_navigate", {"url": corpus_site.swagger()})
        assert not reply.is_error, reply.text
        tab = await tab_of(host, conversation)
        await wait_for_selector(tab, ".opblock-summary", timeout=30)  # rendered from the spec it fetched
        if operation_open:
            await click(tab, "#operations-pet-addPet .opblock-summary-control")
            await wait_for_selector(tab, "#operations-pet-addPet .opblock-body", timeout=30)
    await _compare("swagger-ui", webhand, tools, firefox, firefox_tools)


async def test_every_instruction_is_whole_on_firefox(firefox, firefox_tools, corpus_site):
    """test_corpus_sufficiency.py's sixty tasks, on Firefox, in one conversation."""
    if missing_reason("miniwob"):
        pytest.skip(missing_reason("miniwob"))
    problems = [problem for task in TEXT_TASKS
                if (problem := await instruction_problem(firefox, firefox_tools, corpus_site, task))]
    assert not problems, f"{len(problems)} of {len(TEXT_TASKS)} tasks on Firefox:\n" + "\n\n".join(problems)


async def test_the_scripted_agent_solves_the_same_tasks_on_firefox(webhand, tools, firefox, firefox_tools,
                                                                   corpus_site):
    if missing_reason("miniwob"):
        pytest.skip(missing_reason("miniwob"))
    outcomes = {}
    for task in sorted(SOLVERS):
        outcomes[task] = await asyncio.gather(run_episode(webhand, tools, corpus_site, task),
                                              run_episode(firefox, firefox_tools, corpus_site, task))
    table = "\n".join(f"  {task:<28} chromium: {c[:60]:<60} firefox: {f[:90]}" for task, (c, f) in outcomes.items())
    solved = {browser: {t for t, o in outcomes.items() if o[i] == "solved"} for i, browser in enumerate(("c", "f"))}
    print(f"solved on Chromium {len(solved['c'])}, on Firefox {len(solved['f'])} of {len(outcomes)}:\n{table}")
    assert solved["c"], f"Chromium solved nothing: the corpus or the agent is broken\n{table}"
    assert solved["f"] == solved["c"], f"Firefox and Chromium solve different tasks:\n{table}"
