"""Ground truth for names and roles: Chromium's own accessibility tree, read over CDP in the same run.

For every ref'd line of a snapshot, the element the ref resolves to (through the tab's own
``resolve``, exactly as an action would) is looked up in Chromium's accessibility tree with
``Accessibility.getPartialAXTree`` (``fetchRelatives: false``), and its role and name are
compared with the line's. The CDP calls go through tests/harness.py, on either driver: it is the
measuring stick, not the product.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from corpus_site import controls, fold
from harness import backend_node_ids, evaluate, open_cdp, tab_of
from webhand.engine.break_hints import without_break_hints

# Chromium's AX tree names some roles by its internal names where the snapshot uses the ARIA
# role (the one Playwright and the ARIA specs use). Each entry: Chromium's role -> the ARIA one.
CHROMIUM_TO_ARIA = {
    "image": "img",                # <img>, role=img: CDP says "image"
    "MenuListOption": "option",    # an <option> of a <select>
    "MenuListPopup": "listbox",    # the popup list of a <select>
    "DisclosureTriangle": "button",  # <summary> (the HTML-AAM maps it to a button-like control)
    "ListBoxOption": "option",
    # <input type=date|time|datetime-local>: ARIA has no role for them (HTML-AAM); Chromium names
    # them by its own internal roles, Playwright and the snapshot call them textbox.
    "Date": "textbox",
    "InputTime": "textbox",
    "DateTime": "textbox",
}

# Roles an element marked `clickable` (actionable without an ARIA role: onclick, cursor:pointer,
# tabindex) may have in Chromium's tree: any that is not a control. If Chromium calls it a
# button or a link, the snapshot should have too, and the line counts as a role mismatch.
CHROMIUM_NOT_CONTROLS = {
    "generic", "none", "StaticText", "paragraph", "image", "listitem", "cell", "gridcell", "row",
    "heading", "group", "region", "article", "section", "figure", "LabelText", "Canvas", "list",
    "table", "main", "navigation", "banner", "contentinfo", "complementary", "form", "blockquote",
    "emphasis", "strong", "code", "Pre", "definition", "term", "DescriptionListDetail", "DescriptionListTerm",
    "Abbr", "mark", "time", "Ruby", "SvgRoot", "graphics-document", "graphics-symbol", "Iframe", "note",
    "caption", "columnheader", "rowheader", "Legend", "RootWebArea", "status", "alert", "log", "timer",
    "marquee", "math", "tooltip", "subscript", "superscript", "insertion", "deletion",
    "LayoutTable", "LayoutTableRow", "LayoutTableCell",  # Chromium's roles for tables used for layout
}


@dataclass
class Check:
    ref: str
    ours_role: str
    ours_name: str
    chromium_role: str
    chromium_name: str
    ok: bool
    clickable: bool  # a `clickable` line: checked for its role only, counted apart from names


# What the page says about each ref'd element, for the places where the snapshot differs from
# Chromium on purpose (docs/design.md, "Names are Chromium's"): whether it holds a <wbr>, and the
# tooltips, image alts and <svg><title>s inside it.
_FACTS = """refs => refs.map(ref => {
  const el = window.__webhand.resolve(ref);
  if (typeof el === 'string') return { wbr: false, inner: [] };
  const inner = [...el.querySelectorAll('[title], img[alt], svg title')].map(e =>
    e.localName === 'title' ? e.textContent : e.localName === 'img' ? e.getAttribute('alt') : e.getAttribute('title'));
  return { wbr: !!el.querySelector('wbr'), inner };
})"""


def _name_matches(ours: str, chromium: str, facts: dict) -> bool:
    # Break hints are no text in the snapshot; Chromium keeps zero-width spaces in names.
    ours, chromium = fold(ours), fold(without_break_hints(chromium))
    if not chromium and ours:  # Chromium left a control unnamed: the snapshot names it by an icon inside
        return ours in {fold(without_break_hints(text)) for text in facts["inner"]}
    if chromium == f"{ours} {ours}":  # one phrase said twice is said once
        return True
    clipped = ours.endswith("…")  # the snapshot clips long names: a prefix of Chromium's name matches
    if clipped:
        ours = ours[:-1].rstrip()
    if facts["wbr"]:  # Chromium puts a space for a <wbr>, the snapshot none: spaces are not compared
        ours, chromium = ours.replace(" ", ""), chromium.replace(" ", "")
    return chromium.startswith(ours) if clipped else ours == chromium


def _role_matches(ours: str, chromium: str) -> bool:
    return ours == CHROMIUM_TO_ARIA.get(chromium, chromium)


async def chromium_checks(webhand, tools, snapshot: str) -> list[Check]:
    """One check per ref'd line of ``snapshot`` (taken just now in ``tools``' default session)."""
    lines = controls(snapshot)
    assert not any(line["ref"].startswith("f") for line in lines), "frame refs are not compared here"
    tab = await tab_of(webhand, tools)
    # Each ref resolves exactly as an action's would; CDP calls go out together (they pipeline).
    elements = await asyncio.gather(*(tab.refs.resolve(line["ref"], timeout=10) for line in lines))
    facts = await evaluate(tab, _FACTS, [line["ref"] for line in lines])
    cdp = await open_cdp(tab)
    try:
        backends = await backend_node_ids(tab, cdp, elements)
        trees = await asyncio.gather(*(cdp.send("Accessibility.getPartialAXTree",
                                                {"backendNodeId": b, "fetchRelatives": False}) for b in backends))
    finally:
        await cdp.detach()
        await asyncio.gather(*(e.dispose() for e in elements))
    checks = []
    for line, backend, tree, fact in zip(lines, backends, trees, facts):
        node = next((n for n in tree["nodes"] if n.get("backendDOMNodeId") == backend), tree["nodes"][0])
        role = "none" if node.get("ignored") else str((node.get("role") or {}).get("value", ""))
        name = str((node.get("name") or {}).get("value", ""))
        checks.append(_check(line, role, name, fact))
    return checks


def _check(line: dict[str, str], role: str, name: str, fact: dict) -> Check:
    """A snapshot line against Chromium's role and name for its element."""
    clickable = line["role"] == "clickable"
    ok = role in CHROMIUM_NOT_CONTROLS if clickable else \
        _role_matches(line["role"], role) and _name_matches(line["name"], name, fact)
    return Check(line["ref"], line["role"], line["name"], role, name, ok, clickable)


# ---------------------------------------------------------------------------------------------
# Another browser's snapshot (Firefox's) against Chromium's tree, element by element

#: Where each ref'd element sits in the document: its index among its parent's element children,
#: from the root down. The same page (a MiniWoB++ episode seeded alike) gives the same path for the
#: same element in every browser, so a line of Firefox's snapshot meets Chromium's truth by it.
DOM_PATHS = """refs => refs.map(ref => {
  const el = window.__webhand.resolve(ref);
  if (typeof el === 'string') return null;
  const steps = [];
  for (let node = el; node.parentElement; node = node.parentElement)
    steps.push([...node.parentElement.children].indexOf(node));
  return steps.reverse().join('/');
})"""
FACTS = _FACTS
NOT_REFD = "(no ref)"


async def chromium_truth_by_path(webhand, tools, snapshot: str) -> dict[str, Check]:
    """``chromium_checks`` of a Chromium snapshot, keyed by each element's DOM path."""
    checks = await chromium_checks(webhand, tools, snapshot)
    paths = await evaluate(await tab_of(webhand, tools), DOM_PATHS, [c.ref for c in checks])
    return {path: check for path, check in zip(paths, checks) if path}


def checks_against_chromium(snapshot: str, paths: list[str | None], facts: list[dict],
                            truth: dict[str, Check]) -> list[Check]:
    """One check per ref'd line of another browser's ``snapshot`` (``paths`` and ``facts`` read in
    that browser, in line order): its role and name against Chromium's for the element at the
    same place, by the same rules as Chromium's own snapshot. An element only one browser gave a
    ref to is a mismatch too (its other side reads ``(no ref)``)."""
    lines = list(zip(controls(snapshot), paths, facts))
    matched = {path for _, path, _ in lines if path in truth}
    # An element whose path differs (the page's scripts built the two documents a little apart) is
    # met by its ref instead: the same page agent numbers refs in document order in both browsers.
    by_ref = {check.ref: path for path, check in truth.items() if path not in matched}
    checks = []
    for line, path, fact in lines:
        if path not in truth and line["ref"] in by_ref:
            path = by_ref.pop(line["ref"])
            matched.add(path)
        chromium = truth.get(path or "")
        if chromium is None:
            checks.append(Check(line["ref"], line["role"], line["name"], NOT_REFD, "", False, False))
            continue
        checks.append(_check(line, chromium.chromium_role, chromium.chromium_name, fact))
    for path, chromium in truth.items():
        if path not in matched:
            checks.append(Check(NOT_REFD, NOT_REFD, "", chromium.chromium_role, chromium.chromium_name, False, False))
    return checks


#: The share of named lines that must agree with Chromium's tree on a page.
AGREEMENT = 0.99


def assert_agrees(page: str, checks: list[Check]) -> None:
    assert checks, f"{page}: the snapshot has no ref'd element to compare"
    named = [c for c in checks if not c.clickable]
    agreed = sum(c.ok for c in named) / len(named) if named else 1.0
    # A `clickable` line has no Chromium role or name to equal; it must only not be a control Chromium knows.
    wrong_clickables = [c for c in checks if c.clickable and not c.ok]
    assert agreed >= AGREEMENT and not wrong_clickables, mismatch_table(page, checks)


def mismatch_table(page: str, checks: list[Check]) -> str:
    """The mismatched lines of one page as a table a person reads at a glance."""
    bad = [c for c in checks if not c.ok]
    rows = [f"{page}: {len(bad)} of {len(checks)} ref'd elements differ from Chromium's accessibility tree",
            f"  {'ref':<6} {'ours':<60} chromium"]
    for c in bad:
        ours = f'{c.ours_role} "{fold(c.ours_name)}"'
        rows.append(f"  {c.ref:<6} {ours[:60]:<60} {c.chromium_role} \"{fold(c.chromium_name)[:80]}\"")
    return "\n".join(rows)
