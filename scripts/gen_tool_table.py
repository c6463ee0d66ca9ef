"""Regenerate the README's tool table (and the tool list's size it quotes), and the CLI's command list (src/webhand/surfaces/cli/commands.json),
from the catalog (`make doc-tools`).

tests/test_readme.py fails when the README's table differs from what this prints, and
tests/test_cli.py when the CLI's list does, so neither can drift from the tools a model is served.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN, END = "<!-- tool-table:begin -->", "<!-- tool-table:end -->"


def tool_table() -> str:
    from webhand.tools import CAPABILITIES, CATALOG

    rows = ["| Tool | Group | What it does | Arguments |", "|---|---|---|---|"]
    order = list(CAPABILITIES)
    for tool in sorted(CATALOG.values(), key=lambda t: (order.index(t.capability), t.name)):
        fields = tool.input_model.model_fields
        shown = tool.input_schema().get("properties", {})  # other designs' forms are accepted, not listed
        args = ", ".join(f"`{name}`" if field.is_required() else f"`{name}`?" for name, field in fields.items()
                         if name != "session" and name in shown)
        kind = " (read-only)" if tool.read_only else ""
        rows.append(f"| `{tool.name}` | {tool.capability}{kind} | {tool.description.replace('|', '/')} | {args or '—'} |")
    return "\n".join(rows)


#: The sentence of the README that quotes what the default tool list costs (`webhand schema --stats`).
TOOL_LIST_FIGURE = re.compile(r"(the default set is )[\d,.]+k?(\s+characters of `tools/list`)")


def tool_list_chars() -> int:
    """The characters of the default tools/list, as `webhand schema --stats` counts them."""
    from webhand import Settings
    from webhand.surfaces.mcp.sizes import tools_list_chars

    return tools_list_chars(Settings.from_sources({}, env={}), None, "multi")[1]


def render(readme: str) -> str:
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    readme = f"{head}{BEGIN}\n{tool_table()}\n{END}{tail}"
    # The figure comes from the same count as `schema --stats`, so that the two never disagree.
    return TOOL_LIST_FIGURE.sub(lambda m: f"{m.group(1)}{tool_list_chars():,}{m.group(2)}", readme)


def cli_commands() -> str:
    from webhand.surfaces.cli.tools import command_specs

    return json.dumps(command_specs(), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    from webhand.surfaces.cli.tools import COMMANDS_FILE

    text = README.read_text()
    updated = render(text)
    if "--check" in sys.argv:
        sys.exit(0 if updated == text and COMMANDS_FILE.read_text() == cli_commands() else 1)
    README.write_text(updated)
    COMMANDS_FILE.write_text(cli_commands())
    print(f"README tool table: {tool_table().count(chr(10) + '| `')} tools")
