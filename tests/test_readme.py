"""The README's promises: its tool table is the catalog, and its quick start is two commands."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("gen_tool_table", ROOT / "scripts" / "gen_tool_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tool_table_is_generated_from_the_catalog():
    readme = (ROOT / "README.md").read_text()
    assert _generator().render(readme) == readme, "README tool table is stale: run `make doc-tools`"


def test_quick_start_is_exactly_two_commands():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick start\n.*?```(?:sh|bash)?\n(.*?)```", readme, re.S).group(1)
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert commands == ["make demo", "make test"]
