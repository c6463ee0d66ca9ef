"""browser_audit_accessibility: axe-core, vendored, run in an isolated world; violations by impact and rule, named by ref."""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from corpus_site import missing_reason
from harness import evaluate, tab_of
from webhand.engine.driver import WorldScript
from webhand.tools.audit import AXE_VERSION, DEFAULT_TAGS


def ok(reply):
    assert not reply.is_error, reply.text
    return reply


def rule_lines(text: str, rule: str) -> list[str]:
    """The lines a reply gives ``rule``: its heading line, its elements, its first failure."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"- {rule} ("))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


def refs_in(line: str) -> list[str]:
    return re.findall(r"\b(e\d+)\b", line)


def test_the_vendored_axe_core_is_the_pinned_version_with_its_licence():
    vendor = resources.files("webhand.page").joinpath("vendor")
    source = vendor.joinpath("axe.min.js").read_text()
    assert f"/*! axe v{AXE_VERSION}\n" in source[:400]  # the package's own banner
    assert source.startswith(f"// axe-core {AXE_VERSION} (MPL-2.0, Deque Systems)")
    licence = vendor.joinpath("LICENSE-axe-core.txt").read_text()
    assert licence.startswith(f"axe-core {AXE_VERSION}, from npm") and "Mozilla Public License, version 2.0" in licence
    # Shipped in the wheel: the package data takes page/*.js and page/vendor/*.
    root = Path(__file__).resolve().parent.parent
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["webhand"]
    for shipped in ("page/vendor/axe.min.js", "page/vendor/LICENSE-axe-core.txt", "page/audit.js"):
        assert any(fnmatch.fnmatch(shipped, glob) for glob in globs), shipped


async def test_the_violations_page_names_each_known_problem_by_ref_and_impact(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("audit/violations.html")}))
    reply = ok(await tools.call("browser_audit_accessibility", {}))
    text = reply.text
    head = text.splitlines()[0]
    assert head.startswith(f"axe-core {AXE_VERSION} audit of {site.url('audit/violations.html')} "
                           f"(tags {', '.join(DEFAULT_TAGS)}; "), text
    violated = {v["id"]: v for v in reply.data["violations"]}
    assert set(violated) == {"label", "color-contrast", "image-alt"}, text
    assert "5 violations in 3 rules (rules by impact: 2 critical, 1 serious)." in head, text
    # The three unlabelled fields, by the refs the model clicks: the same refs a snapshot gives them.
    label = rule_lines(text, "label")
    assert "(3 elements)" in label[0] and "https://dequeuniversity.com/rules/axe/" in label[0], text
    snapshot = ok(await tools.call("browser_snapshot", {})).text
    for ref in refs_in(label[1]):
        assert f"[{ref}]" in snapshot
    assert len(refs_in(label[1])) == 3, label
    assert "Form elements must have labels" in label[0]
    # Text is no control: it has no ref, and is named by its CSS target.
    contrast = rule_lines(text, "color-contrast")
    assert "#faint (no ref)" in contrast[1], contrast
    assert "insufficient color contrast" in contrast[2], contrast
    image = rule_lines(text, "image-alt")
    assert "(no ref)" in image[1] or refs_in(image[1]), image
    # Grouped by impact, worst first.
    assert text.index("critical:") < text.index("serious:"), text
    assert text.index("- label (") < text.index("serious:") < text.index("- color-contrast ("), text
    # The whole report is a JSON file the reply names.
    path = Path(reply.data["report"])
    report = json.loads(path.read_text())
    assert report["version"] == AXE_VERSION and {r["id"] for r in report["violations"]} == set(violated)
    assert any(n.get("ref") == refs_in(label[1])[0] for r in report["violations"] for n in r["nodes"])
    assert f"Full report (every element, its HTML and CSS target): {path}" in text
    # Two elements share the id a field's description points to: axe 4.x leaves that to a person
    # (duplicate-id-aria is "needs review" since WCAG 2.2 dropped 4.1.1 Parsing).
    assert "Needs a person to check (1 rule axe could not decide): duplicate-id-aria (2)." in text, text
    assert "axe-core finds about half of accessibility problems" in text
    # A ref the reply names works at once.
    ok(await tools.call("browser_click", {"ref": refs_in(label[1])[0]}))


async def test_a_clean_page_says_no_violations_and_what_was_run(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("audit/clean.html")}))
    reply = ok(await tools.call("browser_audit_accessibility", {}))
    head = reply.text.splitlines()[0]
    assert re.fullmatch(rf"axe-core {re.escape(AXE_VERSION)} audit of {re.escape(site.url('audit/clean.html'))} "
                        rf"\(tags {', '.join(DEFAULT_TAGS)}; \d+ rules run, \d+ elements\): no violations found\.", head), head
    assert reply.data["violations"] == [] and reply.data["rules_run"] > 50
    assert "critical:" not in reply.text and "Passed: " in reply.text
    # axe ran in a world of its own: the page has no axe after it.
    seen = ok(await tools.call("browser_eval", {"expression": "typeof window.axe"}))
    assert seen.data == {"result": "undefined"}


async def test_a_hostile_page_can_neither_see_nor_bend_the_audit(tools, site):
    """The page planted a fake axe (read-only) and replaced Array.prototype.map/filter/forEach,
    querySelectorAll and getComputedStyle: the audit finds what it finds on an honest page."""
    ok(await tools.call("browser_navigate", {"url": site.url("audit/hostile.html")}))
    reply = ok(await tools.call("browser_audit_accessibility", {}))
    assert {v["id"] for v in reply.data["violations"]} == {"image-alt", "label"}, reply.text
    assert reply.text.splitlines()[0].startswith(f"axe-core {AXE_VERSION} audit of "), reply.text
    seen = ok(await tools.call("browser_eval", {"expression": "window.axe.version + ' ' + [1, 2].map((n) => n).length"}))
    assert seen.data == {"result": "0.0.0-fake 0"}  # the page's own axe and map, untouched


async def test_a_ref_audits_only_that_part_and_tags_and_impact_narrow_it(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("audit/violations.html")}))
    snapshot = ok(await tools.call("browser_snapshot", {})).text
    checkbox = re.search(r"checkbox[^\n]*\[(e\d+)\]", snapshot).group(1)
    whole = ok(await tools.call("browser_audit_accessibility", {}))
    part = ok(await tools.call("browser_audit_accessibility", {"ref": checkbox}))
    assert part.text.startswith(f"axe-core {AXE_VERSION} audit of element {checkbox} "), part.text
    assert {v["id"]: v["refs"] for v in part.data["violations"]} == {"label": [checkbox]}, part.text
    assert checkbox in {v["id"]: v["refs"] for v in whole.data["violations"]}["label"]
    # Only the rules of the tags asked for run, and impact keeps the worst.
    best = ok(await tools.call("browser_audit_accessibility", {"tags": ["best-practice"]}))
    assert best.data["tags"] == ["best-practice"] and "(tags best-practice; " in best.text
    assert not {"label", "color-contrast", "image-alt"} & {v["id"] for v in best.data["violations"]}, best.text
    worst = ok(await tools.call("browser_audit_accessibility", {"impact": "critical"}))
    assert {v["id"] for v in worst.data["violations"]} == {"image-alt", "label"}
    assert "1 rule of lesser impact not shown" in worst.text and "serious:" not in worst.text


async def test_unknown_tags_and_refs_are_refused_with_what_to_use(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("audit/clean.html")}))
    reply = await tools.call("browser_audit_accessibility", {"tags": ["wcag2aa", "wcag99"]})
    assert reply.is_error and "axe-core 4.14.1 knows no tag 'wcag99'." in reply.text, reply.text
    assert "wcag22aa" in reply.text and "best-practice" in reply.text
    reply = await tools.call("browser_audit_accessibility", {"ref": "e999"})
    assert reply.is_error and "Ref e999 is not on the current page" in reply.text, reply.text
    reply = await tools.call("browser_audit_accessibility", {"ref": "f1e2"})
    assert reply.is_error and "not a ref of the main frame" in reply.text, reply.text


async def test_axe_is_installed_again_in_each_new_document(tools, site):
    for page in ("audit/clean.html", "audit/violations.html", "audit/clean.html"):
        ok(await tools.call("browser_navigate", {"url": site.url(page)}))
        for _ in range(2):  # the second audit of a document reuses its axe
            reply = ok(await tools.call("browser_audit_accessibility", {}))
            assert bool(reply.data["violations"]) == (page == "audit/violations.html"), reply.text
    ok(await tools.call("browser_reload", {}))
    ok(await tools.call("browser_audit_accessibility", {}))


async def test_the_isolated_world_installs_a_script_once_per_document_and_names_elements_by_ref(webhand, tools, site):
    """The tab's ``isolated`` component itself: a library is sent once per document, the page
    cannot see it, and the elements a call returns come back as the page agent's refs."""
    counting = WorldScript(world="webhand-test", source="window.installs = (window.installs || 0) + 1; window.lib = 1;",
                           loaded="window.lib === 1")
    call = ("async (arg, scope) => ({ value: JSON.stringify([window.installs, arg, scope ? scope.id : null]), "
            "elements: [document.getElementById('name'), document.body, document.querySelector('textarea')] })")
    for _ in range(2):
        ok(await tools.call("browser_navigate", {"url": site.url("audit/clean.html")}))
        snapshot = ok(await tools.call("browser_snapshot", {})).text
        email = re.search(r'textbox "Email" \[(e\d+)\]', snapshot).group(1)
        message = re.search(r'textbox "Message" \[(e\d+)\]', snapshot).group(1)
        tab = await tab_of(webhand, tools)
        for installs in (1, 1):
            value, refs = await tab.isolated.run(counting, call, {"n": 7}, ref=email, timeout=10)
            assert json.loads(value) == [installs, {"n": 7}, "email"]
            assert refs == [None, None, message]  # no element with id "name"; the body has no ref
        assert await evaluate(tab, "() => [typeof window.installs, typeof window.lib]") == ["undefined", "undefined"]


async def test_a_page_nobody_here_wrote_is_audited_and_every_ref_it_names_resolves(tools, corpus_site):
    if missing_reason("pydoc"):
        pytest.skip(missing_reason("pydoc"))
    ok(await tools.call("browser_navigate", {"url": corpus_site.pydoc("library/functions.html")}))
    reply = ok(await tools.call("browser_audit_accessibility", {"tags": [*DEFAULT_TAGS, "best-practice"]}))
    assert reply.data["rules_run"] > 50 and reply.data["passes"] > 10, reply.text
    refs = [ref for v in reply.data["violations"] for ref in v["refs"]]
    for ref in refs:  # each resolves to an element the model can act on
        assert not (await tools.call("browser_scroll", {"ref": ref})).is_error, ref
    assert len(reply.text) < 8000


async def test_an_audit_past_its_timeout_says_why_and_the_tab_still_works(tools, site, driver):
    ok(await tools.call("browser_navigate", {"url": site.url("snapshot/big.html?n=5000")}))
    reply = await tools.call("browser_audit_accessibility", {"timeout": 0.3})
    assert reply.is_error and "axe-core did not finish auditing the page within" in reply.text, reply.text
    assert "color contrast" in reply.text and "`ref`" in reply.text
    # The same document again, one part of it: Chromium stopped the run, and axe is installed afresh;
    # Firefox cannot stop it, and says so while it still runs.
    found = ok(await tools.call("browser_find", {"query": "button Open 7"}))
    ref = re.search(r"\[(e\d+)\]", found.text).group(1)
    again = await tools.call("browser_audit_accessibility", {"ref": ref, "timeout": 30})
    if driver == "firefox" and again.is_error:
        assert "axe-core is still running the audit of this page" in again.text, again.text
    else:
        assert not again.is_error and again.text.startswith(f"axe-core {AXE_VERSION} audit of element {ref} "), again.text
    ok(await tools.call("browser_navigate", {"url": site.url("audit/clean.html")}))
    ok(await tools.call("browser_audit_accessibility", {"timeout": 30}))


async def test_frames_are_said_to_be_left_out(tools, site, other_site):
    ok(await tools.call("browser_navigate", {"url": site.url(f"snapshot/frames.html?other={other_site.port}")}))
    reply = ok(await tools.call("browser_audit_accessibility", {}))
    assert re.search(r"Not audited: the \d+ frames? inside the page \(axe-core ran on the main document only\)",
                     reply.text), reply.text


async def test_a_strict_content_security_policy_does_not_stop_the_audit(tools, site):
    """The page allows no eval and no inline script (its own did not run): axe runs all the same."""
    ok(await tools.call("browser_navigate", {"url": site.url("audit/csp.html")}))
    policed = ok(await tools.call("browser_eval", {"expression": "document.title"}))
    assert policed.data == {"result": "Strict CSP"}, policed.text  # the policy is in force: its inline script did not run
    reply = ok(await tools.call("browser_audit_accessibility", {}))
    assert {v["id"] for v in reply.data["violations"]} == {"image-alt", "label"}, reply.text
