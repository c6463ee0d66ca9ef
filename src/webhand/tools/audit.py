"""Accessibility audits: axe-core (vendored, page/vendor/axe.min.js) run on the page in an isolated world.

axe-core runs where the page's scripts cannot see it or change what it calls (the tab's ``isolated``
component: CDP's isolated world, a BiDi sandbox), installed once per document. The reply groups the
violations by impact and rule, and names each element by the ref a snapshot gives it, so the model
can act on it next; an element without a ref (hidden, or not a control) is named by axe's CSS
target. axe's words about the page's content (its failure summaries, targets, HTML) are page text.
The whole report goes to a JSON file.
"""

from __future__ import annotations

import asyncio
import json
import re
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import Field, field_validator

from webhand.durations import Timeout
from webhand.engine.driver import WorldScript
from webhand.errors import ActionTimeout, InvalidArgument, WebhandError
from webhand.page.snapshot import take_snapshot
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

#: The vendored axe-core's version (page/vendor/axe.min.js; tests/test_accessibility_audit.py checks it).
AXE_VERSION = "4.14.1"
#: The rules run when no tags are given: WCAG 2.0, 2.1 and 2.2 at levels A and AA, what a
#: conformance claim names. axe's "best-practice" rules (landmarks, one h1) are not WCAG
#: failures; ask for them by tag.
DEFAULT_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa")
IMPACTS = ("critical", "serious", "moderate", "minor")
#: Elements named per rule in the reply (the file has them all), and in all.
PER_RULE = 10
MAX_ELEMENTS = 200
#: Longest CSS target, help URL and failure summary quoted in the reply.
TARGET_LIMIT = 120
SUMMARY_LIMIT = 240
URL_LIMIT = 200
DEFAULT_TIMEOUT = 60.0
#: The tags named when a tag is unknown: standards and levels, not axe's many criterion and category tags.
_MAIN_TAGS = re.compile(r"^(wcag2\d?a{1,3}|wcag2a+-obsolete|best-practice|section508|EN-301-549|ACT|experimental|TTv5|RGAAv4)$")


@cache
def axe_script() -> WorldScript:
    source = resources.files("webhand.page").joinpath("vendor/axe.min.js").read_text()
    return WorldScript(world="webhand-axe", source=source,
                       loaded=f"typeof window.axe === 'object' && window.axe !== null && window.axe.version === '{AXE_VERSION}'")


@cache
def _audit_call() -> str:
    text = resources.files("webhand.page").joinpath("audit.js").read_text()
    return text[text.index("async ("):]  # the function, without its comment


class AuditArgs(PageArgs):
    ref: str | None = Field(None, description="Element ref from browser_snapshot: audit only that element and what it "
                                              "holds. Omit for the whole page.")
    tags: list[str] | None = Field(None, max_length=30, description=(
        'axe-core rule tags to run, e.g. ["wcag2a","wcag2aa","wcag21aa","wcag22aa","best-practice"]. '
        "Default: WCAG 2.0, 2.1 and 2.2, levels A and AA."))
    impact: Literal["minor", "moderate", "serious", "critical"] | None = Field(
        None, description="Report only violations of this impact or worse.")
    #: Longer than the usual default: axe takes seconds on a page of thousands of elements (Python's
    #: library/stdtypes.html, 17,000 elements: 8-11 s on Chromium, 18-27 s on Firefox).
    timeout: Timeout = Field(DEFAULT_TIMEOUT, description=f"Max seconds (default {DEFAULT_TIMEOUT:g}).")

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: list[str] | None) -> list[str] | None:
        if tags is None:
            return None
        cleaned = list(dict.fromkeys(t.strip() for t in tags if t.strip()))
        if not cleaned:
            raise ValueError("give at least one tag, or omit tags for WCAG 2.x A and AA")
        if any(len(t) > 50 for t in cleaned):
            raise ValueError("a tag is at most 50 characters")
        return cleaned


@tool("browser_audit_accessibility", capability="debug", read_only=True)
async def audit_accessibility(session: Session, args: AuditArgs, response: Response) -> None:
    """Check the page for accessibility problems with axe-core (WCAG 2.x A/AA by default): violations grouped by
    impact and rule, each naming its elements by ref; the full report saved as JSON."""
    tab = await session.tab()
    timeout = args.timeout or DEFAULT_TIMEOUT
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    tags = args.tags or list(DEFAULT_TAGS)
    try:  # every control gets its ref, as browser_find does: the refs named work next
        await take_snapshot(tab, max_refs=None)
        unnamed = ""
    except WebhandError as error:  # the page broke webhand's page agent: axe, out of its reach, still runs
        unnamed = (f"Elements are named by CSS target only: webhand's snapshot failed on this page "
                   f"({response.page(error.message.rstrip('.'), 200)}).")
    try:
        value, refs = await tab.isolated.run(axe_script(), _audit_call(),
                                             {"tags": tags, "perRule": PER_RULE, "maxElements": MAX_ELEMENTS},
                                             ref=args.ref, timeout=max(0.1, deadline - loop.time()))
    except ActionTimeout:
        raise ActionTimeout(f"axe-core did not finish auditing the page within {timeout:g} s: its rules (color "
                            "contrast above all) take long on a page with many elements.",
                            "Pass a larger timeout, or `ref` to audit one part of the page.") from None
    report: dict[str, Any] = json.loads(value)
    if report.get("busy"):  # a run past its timeout goes on where the browser cannot stop it (Firefox)
        raise ActionTimeout("axe-core is still running the audit of this page that ran past its timeout "
                            f"({session.settings.driver} cannot stop a script in the page).",
                            "Call again in a while, or reload the page (browser_reload) to stop it.")
    if "unknown" in report:
        known = report.get("known") or []
        main = [t for t in known if _MAIN_TAGS.match(t)]
        raise InvalidArgument(f"axe-core {AXE_VERSION} knows no tag {', '.join(repr(t) for t in report['unknown'][:10])}.",
                              f"Use its tags: {', '.join(main)}; or one of its {len(known) - len(main)} others "
                              "(a criterion such as wcag111, a category such as cat.forms).")
    for rule in report["violations"]:
        for node in rule["nodes"]:
            index = node.pop("element", None)
            if index is not None and index < len(refs) and refs[index]:
                node["ref"] = refs[index]
    _say(report, args, response)
    frames = len(await tab.refs.frames()) - 1
    if frames > 0 and not args.ref:
        response.add(f"Not audited: the {frames} frame{'s' if frames != 1 else ''} inside the page (axe-core ran on the "
                     "main document only); to audit one, open its URL with browser_navigate.")
    if unnamed:
        response.add(unnamed)


def _rules(n: int) -> str:
    return f"{n} rule" + ("s" if n != 1 else "")


def _target(node: dict[str, Any]) -> str:
    """axe's CSS target of a node; a step into a shadow root is written ``>>>``."""
    parts = node.get("target") or []
    return " >>> ".join(p if isinstance(p, str) else " >>> ".join(map(str, p)) for p in parts)


def _say(report: dict[str, Any], args: AuditArgs, response: Response) -> None:
    version, tags = report.get("version", AXE_VERSION), ", ".join(report["tags"])
    # A rule is listed under each outcome it had (passed on one element, failed on another): counted once.
    failed = {r["id"] for r in report["violations"]} | {r["id"] for r in report["incomplete"]}
    ran = len(failed | set(report["passes"]) | set(report["inapplicable"]))
    passed = [rule for rule in report["passes"] if rule not in failed]
    where = f"element {args.ref}" if args.ref else response.page(report.get("url") or "", URL_LIMIT)
    worst = IMPACTS.index(args.impact) if args.impact else len(IMPACTS) - 1
    shown = [r for r in report["violations"] if (IMPACTS.index(r["impact"]) if r["impact"] in IMPACTS else 0) <= worst]
    hidden = len(report["violations"]) - len(shown)
    nodes = sum(len(r["nodes"]) for r in shown)
    path = response.write_file(json.dumps(report, indent=1, ensure_ascii=False), "accessibility-audit", ".json")
    counts = {impact: sum(1 for r in shown if r["impact"] == impact) for impact in IMPACTS}
    by_impact = ", ".join(f"{n} {impact}" for impact, n in counts.items() if n)
    head = f"axe-core {version} audit of {where} (tags {tags}; {ran} rules run, {report['elementCount']:,} elements)"
    if not shown:
        response.add(f"{head}: no violations found" + (f" of {args.impact} impact or worse ({_rules(hidden)} of lesser "
                                                       "impact failed)" if hidden else "") + ".")
    else:
        response.add(f"{head}: {nodes} violations in {_rules(len(shown))} (rules by impact: {by_impact})"
                     + (f"; {_rules(hidden)} of lesser impact not shown" if hidden else "") + ".")
    for impact in IMPACTS:
        rules = [r for r in shown if r["impact"] == impact]
        if rules:
            response.add(f"{impact}:")
        for rule in rules:
            _say_rule(rule, response)
    unsure = report["incomplete"]
    if unsure:
        listed = ", ".join(f"{r['id']} ({len(r['nodes'])})" for r in unsure[:10]) + (" …" if len(unsure) > 10 else "")
        response.add(f"Needs a person to check ({_rules(len(unsure))} axe could not decide): {listed}.")
    response.add(f"Passed: {_rules(len(passed))}; not applicable here: {len(report['inapplicable'])}.")
    response.add(f"Full report (every element, its HTML and CSS target): {path}")
    response.add("axe-core finds about half of accessibility problems; the rest (and the ones it could not decide) "
                 "need a person.")
    response.data({"engine": "axe-core", "version": version, "tags": report["tags"], "rules_run": ran,
                   "violations": [{"id": r["id"], "impact": r["impact"], "nodes": len(r["nodes"]),
                                   "refs": [n["ref"] for n in r["nodes"] if n.get("ref")]} for r in shown],
                   "incomplete": len(unsure), "passes": len(passed), "report": str(path)})


def _say_rule(rule: dict[str, Any], response: Response) -> None:
    nodes = rule["nodes"]
    count = f"{len(nodes)} element" + ("s" if len(nodes) != 1 else "")
    response.add(f"- {rule['id']} ({count}): {response.clip(rule.get('help') or '', SUMMARY_LIMIT)} "
                 f"{response.clip((rule.get('helpUrl') or '').split('?')[0], URL_LIMIT)}")
    named = [n.get("ref") or response.page(_target(n), TARGET_LIMIT) + " (no ref)" for n in nodes[:PER_RULE]]
    more = f", +{len(nodes) - PER_RULE} more" if len(nodes) > PER_RULE else ""
    response.add(f"  elements: {', '.join(named)}{more}")
    first = next((n for n in nodes if n.get("failureSummary")), None)
    if first is not None:
        label = first.get("ref") or response.page(_target(first), TARGET_LIMIT)
        why = response.page(_summary(first["failureSummary"]), SUMMARY_LIMIT, "the report file has it")
        response.add(f"  why ({label}): {why}")


def _summary(text: str) -> str:
    """axe's failure summary on one line: "Fix any of the following: a; b; c"."""
    out = ""
    for line in (line.strip() for line in text.splitlines()):
        if line:
            out += (" " if not out or out.endswith(":") else "; ") + line
    return out.strip()
