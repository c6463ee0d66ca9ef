"""Crafted history files and secrets in URLs.

A history file is data, and may be crafted: each row writes one, exports it as python, cli and json,
and checks that it was refused, or that the script holds no statement the file put there (the python
export compiles to the same statements as a clean one, the cli export passes ``sh -n`` and every
command line is one ``webhand`` command whose free text comes after ``--``). Then a secret typed
into a GET form, which the next page's URL carries: it must show in no history file, export or
daemon status.
"""

from __future__ import annotations

import ast
import json
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

import webhand
from helpers import CLI_TIMEOUT

ENTRY = {"index": 1, "tool": "browser_type", "arguments": {"ref": "e1", "text": "Ada"}, "started_at": 1.0,
         "url_before": "http://127.0.0.1:9/", "outcome": "ok", "message": "Typed.", "duration_ms": 3,
         "url_after": "http://127.0.0.1:9/", "thumbnail": None,
         "targets": {"e1": {"role": "textbox", "name": "Name", "selector": "#name"}}}
INJECTED = "import os; os.system('touch /tmp/pwned')"


def _entry(**changes) -> dict:
    entry = json.loads(json.dumps(ENTRY))
    for key, value in changes.items():
        if key.startswith("-"):
            entry.pop(key[1:])
        elif key in ("text", "extra_argument"):
            entry["arguments"][key if key == "text" else "bogus"] = value
        elif key in ("role", "name"):
            entry["targets"]["e1"][key] = value
        else:
            entry[key] = value
    return entry


# name: (entry, whether a sound export refuses the file)
ROWS = {
    "newline in role": (_entry(role=f"textbox\n{INJECTED}"), True),
    "crlf in role": (_entry(role=f"textbox\r\n{INJECTED}"), True),
    "newline in name": (_entry(name=f"Name\n{INJECTED}\n#"), False),
    "u2028 in name": (_entry(name=f"Name\u2028{INJECTED}"), False),
    "shell in name": (_entry(name="x\n$(touch /tmp/pwned)"), False),
    "typed --help": (_entry(text="--help"), False),
    "typed -x": (_entry(text="-x"), False),
    "typed shell": (_entry(text="'; touch /tmp/pwned; '"), False),
    "typed triple quote": (_entry(text='"""\n' + INJECTED + '\n"""'), False),
    "unknown field": (_entry(evil=INJECTED), True),
    "unknown argument": (_entry(extra_argument=INJECTED), True),
    "unknown tool": (_entry(tool=f"browser_type\n{INJECTED}"), True),
    "index as text": (_entry(index="1"), True),
    "arguments as list": (_entry(arguments=["--help"]), True),
    "outcome made up": (_entry(outcome="ok\nrm -rf /"), True),
    "no tool": (_entry(**{"-tool": None}), True),
}
FORMATS = ["python", "cli", "json"]


def _export(tmp_path: Path, entry: dict, form: str, name: str = "default") -> subprocess.CompletedProcess[str]:
    history = tmp_path / f"{name}.jsonl"
    history.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(tmp_path), "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "webhand", "export", str(history), "--format", form],
                          env={**env, "PYTHONPATH": str(Path(webhand.__file__).parents[1])}, capture_output=True,
                          text=True, timeout=CLI_TIMEOUT, stdin=subprocess.DEVNULL, cwd=tmp_path)


def _statements(source: str) -> list[str]:
    """The script's statements, as a tree dump: comments and string values do not show."""
    tree = ast.parse(source)
    return [type(node).__name__ for node in ast.walk(tree) if isinstance(node, ast.stmt)]


def _clean(tmp_path: Path, form: str) -> str:
    return _export_here(tmp_path, ENTRY, form)


def _export_here(tmp_path: Path, entry: dict, form: str) -> str:
    """What `webhand export FILE --format FORM` writes, run in this process (the table is large)."""
    from webhand.surfaces.cli.export import load_entries, render, steps_of

    history = tmp_path / "default.jsonl"
    history.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    return render(steps_of(load_entries(history)), form, "default")


def judge(tmp_path: Path, entry: dict, form: str, refused_expected: bool) -> str:
    from webhand.errors import InvalidArgument

    try:
        text = _export_here(tmp_path, entry, form)
    except InvalidArgument as error:
        return "refused" if "is not one webhand records" in str(error) or "does not take" in str(error) \
            else f"refused oddly: {error}"
    except Exception as error:  # noqa: BLE001 - a crash on a crafted file is a finding of the table
        return f"crashed: {type(error).__name__}"
    if refused_expected:
        return "accepted"
    if form == "python":
        compile(text, "export.py", "exec")  # fails the row loudly if it does not even parse
        return "neutralised" if _statements(text) == _statements(_clean(tmp_path, "python")) else "injected"
    if form == "cli":
        if subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True).returncode != 0:
            return "broken"
        body = text.split("' EXIT\n", 1)[1]  # after the set-up lines
        words = shlex.split(body.replace('"$S"', "S"), comments=True)  # comments (the target) drop out
        if words[:2] != ["webhand", "type"] or words.count("--") != 1:
            return "injected"
        options, free = words[2:words.index("--")], words[words.index("--") + 1:]
        if free != [entry["arguments"]["text"]] or not all(w.startswith("--") or w == "S" for w in options):
            return "injected"
        return "neutralised"
    data = json.loads(text)
    return "neutralised" if data["steps"][0]["arguments"]["text"] == entry["arguments"]["text"] else "changed"


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> dict[tuple[str, str], str]:
    tmp_path = tmp_path_factory.mktemp("crafted-histories")
    return {(name, form): judge(tmp_path, entry, form, refused)
            for name, (entry, refused) in ROWS.items() for form in FORMATS}


def test_crafted_history_files_are_refused_or_exported_as_data(table, capsys):
    counts = Counter(table.values())
    lines = [f"crafted-history table: {len(table)} tried ({len(ROWS)} files x {len(FORMATS)} formats), "
             f"{counts['refused']} refused, {counts['neutralised']} neutralised, "
             f"{len(table) - counts['refused'] - counts['neutralised']} otherwise"]
    lines += [f"  {name} / {form}: {outcome}" for (name, form), outcome in table.items()
              if outcome not in ("refused", "neutralised")]
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert counts["refused"] + counts["neutralised"] == len(table), "\n".join(lines)
    for (name, _form), outcome in table.items():
        assert (outcome == "refused") == ROWS[name][1], (name, outcome)


def test_a_dash_leading_text_in_a_cli_export_is_typed_not_an_option(tmp_path):
    from webhand.surfaces.cli.main import build_parser
    from webhand.surfaces.cli.tools import tool_arguments

    for entry in [_entry(text="--help"), {**_entry(), "tool": "browser_select_option",
                                          "arguments": {"ref": "e1", "values": ["-x", "--help"]}}]:
        line = [l for l in _export(tmp_path, entry, "cli").stdout.splitlines() if l.startswith("webhand ")][-1]
        words = [w for w in shlex.split(line.replace('"$S"', "replay"))][1:]
        parsed = tool_arguments(build_parser().parse_args(words))
        expected = {k: v for k, v in entry["arguments"].items() if k != "ref"}
        assert {k: v for k, v in parsed.items() if k in expected} == expected, (line, parsed)


SECRET = "hunter2 s3cret&x"


def test_a_secret_typed_into_a_get_form_is_masked_in_history_exports_and_status(cli, site, tmp_path):
    secrets_file = tmp_path / "secrets.env"
    secrets_file.write_text(f"PASSWORD={SECRET}\n", encoding="utf-8")
    cli.env.update({"WEBHAND_SECRETS_FILE": str(secrets_file), "WEBHAND_HISTORY_KEEP": "1"})
    cli("navigate", site.url("hostile/getform.html"))
    cli("type", "--selector", "#q", "--submit", "--", "<secret>PASSWORD</secret>")
    cli("get_url")  # the typing call (with its url_after) is spilled to the history file
    cli("snapshot")
    shown = {"status": cli("daemon", "status", "--json").stdout}
    for form in FORMATS:
        shown[f"export {form}"] = cli("export", "default", "--format", form).stdout
    spilled = list((tmp_path / "out").rglob("history/*.jsonl"))
    assert spilled, "no history file was written"
    shown["history files"] = "\n".join(p.read_text() for p in spilled)
    forms = [SECRET, quote_plus(SECRET), quote(SECRET), quote(SECRET, safe="")]
    leaked = {where: [f for f in forms if f in text] for where, text in shown.items()}
    print(f"secret in a GET form's URL: {len(shown)} places looked at, "
          f"{sum(1 for v in leaked.values() if v)} leaked: {leaked}")
    assert "<secret>PASSWORD</secret>" in shown["history files"]
    assert not any(leaked.values()), leaked
