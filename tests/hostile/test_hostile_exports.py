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


# ---------------------------------------------------------------------------------------------
# Crafted flow files (tools/flows/format.py) exported as Playwright scripts (tools/flows/playwright_script.py):
# each row puts a crafted value in one field of a flow that uses every field; the flow is refused
# by the format's validation, or its script has the statements and names of the clean one, every
# crafted value only a string constant.

CRAFTED = {
    "quote": "x' + __import__('os').system('touch /tmp/pwned') + '",
    "double quote": 'x" + __import__("os").system("touch /tmp/pwned") + "',
    "newline": f"x\n{INJECTED}\n#",
    "carriage return": f"x\r{INJECTED}",
    "triple quotes": f'"""\n{INJECTED}\n"""',
    "single triple quotes": f"'''\n{INJECTED}\n'''",
    "u2028": f"x\u2028{INJECTED}",
    "u2029 and nel": f"x\u2029\x85{INJECTED}",
    "braces": "{{ not_a_param }} {__import__('os')} {{",
    "backslash end": "x\\",
    "nul": "x\x00y",
    "lone surrogate": "x\ud800y",
    "format spec": "{0.__class__}%s%(x)s",
}
BASE_TARGET = {"role": "button", "name": "Save", "ancestors": [{"role": "row", "name": "bob"}], "label": "Save it",
               "placeholder": "p", "attributes": {"id": "save", "data-testid": "save", "name": "save", "href": "/s"},
               "text": "Save", "css": "#save", "frame": ["iframe#app"]}


def _flow(field: str = "", value: str = "") -> dict:
    target = json.loads(json.dumps(BASE_TARGET))
    flow = {"name": "crafted", "description": "d", "start_url": "http://127.0.0.1:9/start",
            "params": {"who": {"description": "d", "default": "w"}},
            "steps": [
                {"tool": "browser_navigate", "arguments": {"url": "http://127.0.0.1:9/a"}},
                {"tool": "browser_type", "arguments": {"ref": "@1", "text": "hi {{who}}", "submit": True},
                 "targets": {"@1": target}, "note": "n", "expect": {"url": "http://127.0.0.1:9/b", "download": "f.csv"}},
                {"tool": "browser_click", "arguments": {"ref": "@2"}, "targets": {"@2": json.loads(json.dumps(BASE_TARGET))},
                 "expect": {"dialog": "prompt"}},
                {"tool": "browser_handle_dialog", "arguments": {"accept": True, "prompt_text": "yes"}},
                {"tool": "browser_select_option", "arguments": {"ref": "@3", "values": ["a"]},
                 "targets": {"@3": {"role": "combobox", "name": "Team"}}},
                {"tool": "browser_wait_for", "arguments": {"text": "t"}},
                {"tool": "browser_wait_for", "arguments": {"text_gone": "g"}},
                {"tool": "browser_wait_for", "arguments": {"selector": "#s"}},
            ]}
    places = {
        "target name": lambda v: target.update(name=v), "ancestor name": lambda v: target["ancestors"][0].update(name=v),
        "label": lambda v: target.update(label=v), "placeholder": lambda v: target.update(placeholder=v),
        "id": lambda v: target["attributes"].update(id=v), "testid": lambda v: target["attributes"].update({"data-testid": v}),
        "href": lambda v: target["attributes"].update(href=v), "text": lambda v: target.update(text=v),
        "css": lambda v: target.update(css=v), "frame": lambda v: target.update(frame=[v]),
        "typed": lambda v: flow["steps"][1]["arguments"].update(text=v + "{{who}}"),
        "url": lambda v: flow["steps"][0]["arguments"].update(url="http://127.0.0.1:9/" + v),
        "start url": lambda v: flow.update(start_url="http://127.0.0.1:9/" + v),
        "note": lambda v: flow["steps"][1].update(note=v), "description": lambda v: flow.update(description=v),
        "param default": lambda v: flow["params"]["who"].update(default=v),
        "param description": lambda v: flow["params"]["who"].update(description=v),
        "prompt": lambda v: flow["steps"][3]["arguments"].update(prompt_text=v),
        "select value": lambda v: flow["steps"][4]["arguments"].update(values=[v]),
        "wait text": lambda v: flow["steps"][5]["arguments"].update(text=v),
        "expected url": lambda v: flow["steps"][1]["expect"].update(url="http://127.0.0.1:9/" + v),
        "download": lambda v: flow["steps"][1]["expect"].update(download=v),
    }
    if field:
        places[field](value)
    return flow


PLACES = ["target name", "ancestor name", "label", "placeholder", "id", "testid", "href", "text", "css", "frame",
          "typed", "url", "start url", "note", "description", "param default", "param description", "prompt",
          "select value", "wait text", "expected url", "download"]


def _shape(source: str) -> str:
    """The script's tree with every constant blanked: what is code, not data."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            node.value = None
    return ast.dump(tree)


def _refused(flow: dict) -> bool:
    from pydantic import ValidationError

    from webhand.tools.flows.format import Flow

    try:
        Flow.model_validate(flow)
    except ValidationError:
        return True
    return False


def judge_flow(flow: dict, clean_shape: str, style: str = "plain") -> str:
    from webhand.errors import InvalidArgument
    from webhand.tools.flows.format import Flow
    from webhand.tools.flows.playwright_script import export_flow

    if _refused(flow):
        return "refused"
    try:
        text = export_flow(Flow.model_validate(flow), style).text  # type: ignore[arg-type]
        text.encode("utf-8")  # the script is written as UTF-8
    except InvalidArgument:
        return "refused"
    except Exception as error:  # noqa: BLE001 - a crash on a crafted flow is a finding of the table
        return f"crashed: {type(error).__name__}"
    return "neutralised" if _shape(text) == clean_shape else "injected"


def test_crafted_flow_values_become_string_constants_of_the_playwright_script(capsys):
    from webhand.tools.flows.format import Flow
    from webhand.tools.flows.playwright_script import export_flow

    table = {}
    for style in ("plain", "pytest"):
        clean_shape = _shape(export_flow(Flow.model_validate(_flow()), style).text)  # type: ignore[arg-type]
        table.update({(f"{place} ({style})", name): judge_flow(_flow(place, value), clean_shape, style)
                      for place in PLACES for name, value in CRAFTED.items()})
    counts = Counter(table.values())
    odd = [f"  {place} / {name}: {outcome}" for (place, name), outcome in table.items()
           if outcome not in ("refused", "neutralised")]
    with capsys.disabled():
        print(f"\ncrafted-flow table: {len(table)} tried ({len(PLACES)} places x {len(CRAFTED)} values x 2 styles), "
              f"{counts['refused']} refused, {counts['neutralised']} neutralised, {len(odd)} otherwise\n" + "\n".join(odd))
    assert not odd


CRAFTED_FLOWS = {
    "role with a newline": lambda f: f["steps"][1]["targets"]["@1"].update(role=f"button\n{INJECTED}"),
    "role with a quote": lambda f: f["steps"][1]["targets"]["@1"].update(role="button')"),
    "unknown tool": lambda f: f["steps"][0].update(tool="browser_typo"),
    "code tool": lambda f: f["steps"][0].update(tool="browser_eval", arguments={"expression": INJECTED}),
    "argument the tool does not take": lambda f: f["steps"][0]["arguments"].update(code=INJECTED),
    "unknown field in a step": lambda f: f["steps"][0].update(run=INJECTED),
    "unknown field in a target": lambda f: f["steps"][1]["targets"]["@1"].update(selector_js=INJECTED),
    "ref naming no target": lambda f: f["steps"][1]["arguments"].update(ref="@9"),
    "target key not @n": lambda f: f["steps"][1]["targets"].update({"x); import os": BASE_TARGET}),
    "undeclared parameter": lambda f: f["steps"][1]["arguments"].update(text="{{__import__}}"),
    "parameter name not a word": lambda f: f["params"].update({"a')": {}}),
    "flow name a path": lambda f: f.update(name="../../etc/x"),
    "flow name with a quote": lambda f: f.update(name="x'); import os; ('"),
    "attribute not kept": lambda f: f["steps"][1]["targets"]["@1"]["attributes"].update(onclick=INJECTED),
    "dialog kind made up": lambda f: f["steps"][2]["expect"].update(dialog="confirm')"),
    "number as text": lambda f: f.update(webhand_flow="1"),
    "point out of the box": lambda f: f["steps"][1]["targets"]["@1"].update(point={"x": 2, "y": 0}),
}


@pytest.mark.parametrize("name", list(CRAFTED_FLOWS))
def test_a_crafted_flow_is_refused_before_any_script_is_written(name):
    flow = _flow()
    CRAFTED_FLOWS[name](flow)
    assert _refused(flow), name


def test_a_non_finite_number_or_code_in_a_flow_never_reaches_the_script():
    from webhand.errors import InvalidArgument
    from webhand.tools.flows.format import Flow
    from webhand.tools.flows.playwright_script import export_flow

    flow = _flow()
    flow["steps"].append({"tool": "browser_mouse_click_xy", "arguments": {"x": float("inf"), "y": 1.0}})
    with pytest.raises(InvalidArgument, match="not finite"):
        export_flow(Flow.model_validate(flow))
    flow["steps"][-1] = {"tool": "browser_wait_for", "arguments": {"javascript": INJECTED}}
    export = export_flow(Flow.model_validate(flow))
    assert INJECTED not in export.text and export.unsupported
    flow["steps"][-1] = {"tool": "browser_interact", "arguments": {"steps": [{"action": "click", "ref": "@1",
                                                                              "code": INJECTED}]},
                         "targets": {"@1": BASE_TARGET}}
    with pytest.raises(InvalidArgument, match="does not take"):
        export_flow(Flow.model_validate(flow))


def test_a_crafted_parameter_description_is_help_text_not_a_format(tmp_path):
    """argparse formats help with %: a description "%(prog)s %s" must print as written."""
    from webhand.tools.flows.format import Flow
    from webhand.tools.flows.playwright_script import export_flow

    flow = _flow("param description", "100% sure %(prog)s %s\n" + INJECTED)
    script = tmp_path / "crafted.py"
    script.write_text(export_flow(Flow.model_validate(flow)).text, encoding="utf-8")
    shown = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "100% sure %(prog)s %s" in shown.stdout
    assert not Path("/tmp/pwned").exists()
