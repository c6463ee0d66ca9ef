"""The design page's promises: its Layout is the source tree, and the README's links to its sections land on a heading."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "design.md"


def _generator():
    spec = importlib.util.spec_from_file_location("layout", ROOT / "scripts" / "layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces made hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_layout_is_generated_from_the_source_tree():
    generator = _generator()
    page = DESIGN.read_text(encoding="utf-8")
    assert generator.render(page) == page, f"docs/design.md's Layout is stale: run `{generator.COMMAND}`"
    module_map = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    assert generator.render_module_map() == module_map, f"docs/layout.md is stale: run `{generator.COMMAND}`"


def test_every_module_has_a_line_in_the_layout():
    tree = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    for module in (ROOT / "src" / "webhand").rglob("*.py"):
        if module.name != "__init__.py" and "vendor" not in module.parts:
            assert f" {module.name}" in tree, module


def test_readme_links_into_the_docs_land_on_a_heading():
    links = re.findall(r"\]\(([\w./-]+\.md)#([\w\-]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert ("docs/design.md", "scale") in links, "the README no longer links to the design page's sections"
    for path, anchor in links:
        headings = [line.lstrip("#") for line in (ROOT / path).read_text(encoding="utf-8").splitlines()
                    if line.startswith("#")]
        assert anchor in {_anchor(heading) for heading in headings}, f"README links to {path}#{anchor}, no heading there"
