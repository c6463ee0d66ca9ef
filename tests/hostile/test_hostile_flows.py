"""Crafted flow files: a flow is data, and may be written by anyone who can hand the user a file.

Each row writes one flow file into the flows folder and loads it as ``browser_run_flow`` would: it
must be refused before anything runs, naming the field, never quoting the crafted value (a value
reaches no reply). Then the folder and the file themselves: a flows folder that is a symbolic link,
a flow file that is one, and a file another user owns are refused, and a name that is a path never
leaves the folder.
"""

from __future__ import annotations

import json
import os

import pytest

from webhand.errors import FileNotReadable, FileNotWritable, InvalidArgument
from webhand.tools.flows.store import flows_root, load_flow

INJECTED = "import os; os.system('touch /tmp/pwned')"
GOOD = {"webhand_flow": 1, "name": "crafted", "params": {"who": {}},
        "steps": [{"tool": "browser_type", "arguments": {"ref": "@1", "text": "{{who}}"},
                   "targets": {"@1": {"role": "textbox", "name": "Name", "css": "#name"}}}]}


def crafted(change) -> dict:
    flow = json.loads(json.dumps(GOOD))
    change(flow)
    return flow


def _set(path: str, value):
    def change(flow: dict) -> None:
        *parents, last = path.split(".")
        node = flow
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[last] = value
    return change


# name: (how the file differs from a good one, the field the refusal names)
ROWS = {
    "a tool that runs the page's JavaScript": (_set("steps.0.tool", "browser_eval"), "steps.0.tool"),
    "a tool that is not webhand's": (_set("steps.0.tool", INJECTED), "steps.0.tool"),
    "a name that is a path": (_set("name", "../../" + INJECTED), "name"),
    "an unknown field in the flow": (_set("evil", INJECTED), "evil"),
    "an unknown field in a step": (_set("steps.0.evil", INJECTED), "steps.0.evil"),
    "an unknown field in a target": (_set("steps.0.targets.@1.evil", INJECTED), "steps.0.targets.@1.evil"),
    "an argument the tool does not take": (_set("steps.0.arguments.bogus", INJECTED), "steps.0"),
    "a ref that names no target": (_set("steps.0.arguments.ref", "@2"), "steps.0"),
    "a target key that is not a key": (_set("steps.0.targets", {INJECTED: {}}), "steps.0.targets"),
    "a parameter no one declares": (_set("params", {}), "the flow"),
    "a start URL with a parameter no one declares": (_set("start_url", "{{evil}}"), "the flow"),
    "a parameter name that is not a word": (_set("params", {"who": {}, INJECTED: {}}), "params"),
    "a role with a line break": (_set("steps.0.targets.@1.role", "textbox\n" + INJECTED), "steps.0.targets.@1.role"),
    "a version from the future": (_set("webhand_flow", 2), "webhand_flow"),
    "steps that are not a list": (_set("steps", INJECTED), "steps"),
    "a dialog kind that is not one": (_set("steps.0.expect", {"dialog": INJECTED}), "steps.0.expect.dialog"),
}


@pytest.mark.parametrize("row", list(ROWS))
def test_a_crafted_flow_is_refused_naming_the_field_not_its_value(row, data_home):
    change, field = ROWS[row]
    path = flows_root() / "crafted.json"
    path.write_text(json.dumps(crafted(change)))
    with pytest.raises(InvalidArgument) as refused:
        load_flow("crafted")
    message = str(refused.value)
    assert "is not one webhand can run" in message
    assert f": {field}" in message, message
    assert INJECTED not in message and "pwned" not in message


def test_the_good_flow_of_the_table_loads(data_home):
    (flows_root() / "crafted.json").write_text(json.dumps(GOOD))
    assert load_flow("crafted").steps[0].arguments == {"ref": "@1", "text": "{{who}}"}


@pytest.mark.parametrize("name", ["../crafted", "/etc/passwd", "a/b", ".hidden", "-rf", "x" * 65, ""])
def test_a_flow_name_never_leaves_the_folder(name, data_home):
    with pytest.raises(InvalidArgument, match="A flow's name is letters"):
        load_flow(name)


def test_a_flows_folder_that_is_a_symbolic_link_is_refused(data_home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (data_home / "webhand").mkdir(mode=0o700)
    os.symlink(elsewhere, data_home / "webhand" / "flows")
    with pytest.raises(FileNotWritable, match="symbolic link"):
        flows_root()


def test_a_flow_file_that_is_a_symbolic_link_is_not_followed(data_home, tmp_path):
    target = tmp_path / "theirs.json"
    target.write_text(json.dumps(GOOD))
    os.symlink(target, flows_root() / "crafted.json")
    with pytest.raises(FileNotReadable, match="a symbolic link is not followed"):
        load_flow("crafted")


def test_a_flow_file_another_user_owns_is_refused(data_home):
    if os.geteuid() != 0:
        pytest.skip("needs root, to give the file to another user")
    path = flows_root() / "crafted.json"
    path.write_text(json.dumps(GOOD))
    os.chown(path, 65534, 65534)
    with pytest.raises(FileNotReadable, match="not a regular file of yours"):
        load_flow("crafted")


def test_a_flows_folder_others_may_write_is_refused(data_home):
    folder = flows_root()
    os.chmod(folder, 0o777)
    try:
        with pytest.raises(FileNotWritable):
            flows_root()
    finally:
        os.chmod(folder, 0o700)
