"""Regenerate the maps of the source tree in the docs (`make doc-tools`).

Two maps, each line a path and the first sentence of its docstring (a page script's first comment),
trimmed to the page's width:

- the Layout section of docs/design.md: one line per package, with the names of its modules
  (short, so the design page stays a ten-minute read);
- docs/layout.md: one line per package and per module, the map to find a file by.

It reads the files and imports nothing, so it runs on any tree, a half-merged one included.

    python scripts/layout.py            print the module tree
    python scripts/layout.py --write    write both maps
    python scripts/layout.py --check    exit 1 when either map differs from the tree

tests/test_design_layout.py fails when a map differs from what this writes, so the map a newcomer
reads is the tree they will open.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "webhand"
DESIGN = ROOT / "docs" / "design.md"
MODULE_MAP = ROOT / "docs" / "layout.md"
BEGIN, END = "<!-- layout:begin -->", "<!-- layout:end -->"
COMMAND = "python scripts/layout.py --write"
WIDTH = 108  # what a code block shows without scrolling
INDENT = "  "
# Page scripts are modules too (the page agent lives in them); bundled third-party code is not ours.
SCRIPT_SUFFIXES = (".js",)
SKIPPED_FOLDERS = {"__pycache__", "vendor"}


def _first_sentence(text: str) -> str:
    """The first sentence of a docstring's first paragraph, unwrapped."""
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    line = " ".join(paragraph.split()).replace("``", "`")  # reStructuredText's literals, as Markdown writes them
    match = re.search(r"(?<!\be\.g)(?<!\bi\.e)\.(\s|$)", line)
    return line[: match.start() + 1] if match else line


def _python_summary(path: Path) -> str:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    return _first_sentence(docstring) if docstring else ""


def _script_summary(path: Path) -> str:
    """A page script's summary: its opening `//` comment."""
    comment = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("//"):
            break
        comment.append(line[2:].strip())
    return _first_sentence("\n".join(comment)) if comment else ""


def _summary(path: Path) -> str:
    return _python_summary(path) if path.suffix == ".py" else _script_summary(path)


def _rows(package: Path, depth: int) -> list[tuple[str, str]]:
    """(label, summary) for the package's own modules first, then each subpackage with its rows."""
    rows: list[tuple[str, str]] = []
    modules = sorted(p for p in package.iterdir()
                     if p.is_file() and p.name != "__init__.py" and (p.suffix == ".py" or p.suffix in SCRIPT_SUFFIXES))
    for module in modules:
        rows.append((INDENT * depth + module.name, _summary(module)))
    subpackages = sorted(p for p in package.iterdir()
                         if p.is_dir() and p.name not in SKIPPED_FOLDERS and (p / "__init__.py").is_file())
    for subpackage in subpackages:
        rows.append((INDENT * depth + subpackage.name + "/", _summary(subpackage / "__init__.py")))
        rows.extend(_rows(subpackage, depth + 1))
    return rows


def _trim(text: str, room: int) -> str:
    if len(text) <= room:
        return text
    cut = text[: room - 1].rsplit(" ", 1)[0].rstrip(",;:(")
    return cut + "…"


def layout(package: Path = PACKAGE) -> str:
    """The tree: `src/webhand/` with its top-level docstring, then one aligned line per module."""
    rows = [("src/webhand/", _summary(package / "__init__.py"))] + _rows(package, 1)
    column = max(len(label) for label, _ in rows) + 2
    lines = []
    for label, summary in rows:
        line = label.ljust(column) + _trim(summary, WIDTH - column) if summary else label
        lines.append(line.rstrip())
    return "\n".join(lines)


def _modules_of(package: Path) -> list[str]:
    return sorted((p.stem if p.suffix == ".py" else p.name) for p in package.iterdir()
                  if p.is_file() and p.name != "__init__.py" and (p.suffix == ".py" or p.suffix in SCRIPT_SUFFIXES))


def _packages(package: Path, label: str) -> list[tuple[str, Path]]:
    found = [(label, package)]
    for sub in sorted(p for p in package.iterdir()
                      if p.is_dir() and p.name not in SKIPPED_FOLDERS and (p / "__init__.py").is_file()):
        found += _packages(sub, f"{label}{sub.name}/")
    return found


def package_map(package: Path = PACKAGE) -> str:
    """One line per package (its docstring), and under it the names of its modules, wrapped."""
    lines = []
    for label, folder in _packages(package, "src/webhand/"):
        summary = _summary(folder / "__init__.py")
        lines.append(_trim(f"{label}  {summary}" if summary else label, WIDTH))
        names = _modules_of(folder)
        row = INDENT * 2
        for name in names:
            piece = name + ("," if name != names[-1] else "")
            if len(row) + len(piece) + 1 > WIDTH and row.strip():
                lines.append(row.rstrip())
                row = INDENT * 2
            row += piece + " "
        if row.strip():
            lines.append(row.rstrip())
    return "\n".join(lines)


def render(page: str, package: Path = PACKAGE) -> str:
    """The design page with the package map between its markers replaced by the current one."""
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n```\n{package_map(package)}\n```\n{END}{tail}"


def render_module_map(package: Path = PACKAGE) -> str:
    """docs/layout.md: every package and module of src/webhand, one line each."""
    return ("# Layout: every module\n\n"
            f"Generated by `{COMMAND}` from the source tree; do not edit by hand. The design page\n"
            "([design.md](design.md#layout)) has the same map one line per package.\n\n"
            f"```\n{layout(package)}\n```\n")


if __name__ == "__main__":
    if "--write" in sys.argv or "--check" in sys.argv:
        text = DESIGN.read_text(encoding="utf-8")
        updated = render(text)
        modules = render_module_map()
        current = MODULE_MAP.read_text(encoding="utf-8") if MODULE_MAP.exists() else ""
        if "--check" in sys.argv:
            sys.exit(0 if updated == text and modules == current else 1)
        DESIGN.write_text(updated, encoding="utf-8")
        MODULE_MAP.write_text(modules, encoding="utf-8")
        print(f"docs/design.md: {package_map().count(chr(10)) + 1} lines of package map; "
              f"docs/layout.md: {layout().count(chr(10)) + 1} lines")
    else:
        print(layout())
