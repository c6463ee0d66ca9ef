"""Every example in the README runs as written, so that the README cannot drift from the code.

Each fenced block of README.md is taken by its language:

- ``sh``: each command line runs through the real ``webhand`` console script (a private daemon, the
  bundled demo site standing in for ``http://127.0.0.1:8000``), and must succeed; a command that cannot
  run in a test (it serves until stopped, or waits for a person) is listed in ``NOT_RUN`` with why and
  the test that covers it;
- ``python``: the block runs as a script, with the same demo site, and must exit 0;
- ``toml``: the block loads as a webhand config file (every key known, every value allowed);
- ``json``: the block parses, and an MCP host config names ``webhand mcp``;
- ``dotenv``: the block loads as webhand's secrets file;
- ``text``: a sample of output; the demo transcript under "What the model sees" is compared with what
  webhand says on the demo site today, the other samples are listed in ``SAMPLES`` with why not.

A block without a language, or of another one, fails the test: a new example must say how it is checked.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import Cli, wait_until_gone
from webhand.config import load_settings
from webhand.engine.launch.chromium_binary import SHELL_CPU_SHARE
from webhand.security import secret_store
from webhand.surfaces.cli.demo import next_steps, serve_demo_site

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: Where the README's examples say the demo site is; the test serves it on a free port instead.
README_SITE = "http://127.0.0.1:8000"
WEBHAND = Path(sys.executable).with_name("webhand")
RUN_TIMEOUT = 180

#: Command lines (by their first words) that a test cannot run as written, with why and what covers them.
NOT_RUN = {
    "make demo": "the quick start: CI runs `make test` itself; `webhand demo` is test_adapters'/the demo's own run",
    "make test": "the quick start: this very suite",
    "webhand mcp": "serves until stopped: tests/test_mcp_stdio.py and test_mcp_http.py start it as written",
    "webhand dashboard": "serves until stopped: tests/test_dashboard.py opens it in a real browser",
    "webhand profile login": "waits for a person to sign in: tests/test_profiles.py drives it with its signal",
    "webhand profile delete": "deletes the profile that `profile login` made, which needs a person",
    "webhand profile unlock": "clears a lock on the profile that `profile login` made: test_profiles.py leaves such a lock",
    "python3 -m http.server": "serves the demo site until stopped: this test serves the same folder",
    "python ticket.py": "runs the Playwright script `webhand export --flow` wrote, outside webhand: "
                        "tests/test_flow_export.py runs such scripts on Chromium against a fresh app",
}

#: The quick start's way to put `webhand` on PATH (a shell builtin, checked rather than run).
ACTIVATE = {". .venv/bin/activate", "source .venv/bin/activate"}

#: Output samples that are not compared, by their first line, with why.
SAMPLES = {
    "can attach     Chromium": "what `webhand browsers` prints depends on the browsers of the machine it runs on",
    'browser_navigate {"url": "http://127.0.0.1:8000/page_tools/flights.html"}':
        "the page-tools transcript is of tests/pages/page_tools/flights.html, not the demo site: "
        "tests/test_page_tools.py asserts those replies",
}


@dataclass(frozen=True)
class Block:
    language: str
    text: str
    line: int

    @property
    def first_line(self) -> str:
        return next((line for line in self.text.splitlines() if line.strip()), "")


def readme_blocks() -> list[Block]:
    text = README.read_text()
    blocks = []
    for match in re.finditer(r"^```([\w-]*)\n(.*?)^```[ \t]*$", text, re.S | re.M):
        blocks.append(Block(match.group(1), match.group(2), text.count("\n", 0, match.start()) + 1))
    return blocks


BLOCKS = readme_blocks()


def _ids(blocks: list[Block]) -> list[str]:
    return [f"line{block.line}-{block.language or 'none'}" for block in blocks]


def _of(*languages: str) -> list[Block]:
    return [block for block in BLOCKS if block.language in languages]


def test_every_block_says_how_it_is_checked():
    known = {"sh", "python", "toml", "json", "dotenv", "text"}
    unknown = [f"README.md:{block.line} ```{block.language}" for block in BLOCKS if block.language not in known]
    assert not unknown, f"blocks with no language this test checks ({sorted(known)}): {unknown}"


def _commands(block: Block) -> list[str]:
    """The command lines of a shell block, without their trailing comments."""
    commands = []
    for line in block.text.splitlines():
        line = re.split(r"\s{2,}#", line)[0].strip()
        if line and not line.startswith("#"):
            commands.append(line)
    return commands


def _not_run(command: str) -> str | None:
    return next((why for start, why in NOT_RUN.items() if command == start or command.startswith(start + " ")), None)


@pytest.fixture(scope="module")
def demo_site():
    with serve_demo_site() as url:
        yield url.removesuffix("/index.html")


@pytest.mark.parametrize("block", _of("sh"), ids=_ids(_of("sh")))
def test_shell_examples_run_as_written(block: Block, demo_site: str, tmp_path: Path):
    commands = [c for c in _commands(block) if not _not_run(c)]
    if not commands:
        pytest.skip("every command of this block is in NOT_RUN: " + "; ".join({_not_run(c) for c in _commands(block)}))
    cli = Cli(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
              XDG_CACHE_HOME=str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    started = False
    activate: Path | None = None
    try:
        for command in commands:
            if command.split("  ")[0].strip() in ACTIVATE:
                # The virtualenv this suite runs in is the one `make` made: its activate script must put
                # `webhand` on a PATH that lacks it, which the commands after it then rely on.
                activate = Path(sys.executable).with_name("activate")
                assert activate.is_file(), f"README.md:{block.line}: {command}: no {activate}"
                continue
            assert command.startswith("webhand "), f"README.md:{block.line}: a command the test does not know: {command}"
            command = command.replace(README_SITE, demo_site)
            if activate is not None:
                env = {**cli.env, "PATH": os.pathsep.join(p for p in cli.env["PATH"].split(os.pathsep)
                                                          if Path(p) != WEBHAND.parent)}
                run = ["bash", "-c", f". {shlex.quote(str(activate))} && {command}"]
            else:
                env, run = cli.env, [str(WEBHAND), *shlex.split(command)[1:]]
            done = subprocess.run(run, env=env, cwd=work, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                                  stdin=subprocess.DEVNULL)
            started = started or (cli.runtime / "webhand" / "daemon.lock").exists()
            assert done.returncode == 0, (f"README.md:{block.line}: `{command}` exited {done.returncode}:\n"
                                          f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    finally:
        if started:
            processes = cli.processes()
            cli("daemon", "stop", check=False)
            wait_until_gone(processes)


@pytest.mark.parametrize("block", _of("python"), ids=_ids(_of("python")))
def test_python_examples_run_as_scripts(block: Block, demo_site: str, tmp_path: Path):
    script = tmp_path / "example.py"
    script.write_text(block.text.replace(README_SITE, demo_site))
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(tmp_path / "out"), "WEBHAND_WARM_RESERVE": "false",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"README.md:{block.line} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("block", _of("toml"), ids=_ids(_of("toml")))
def test_config_examples_load(block: Block, tmp_path: Path):
    config = tmp_path / "webhand.toml"
    config.write_text(block.text)
    # ${NAME} values are read from the environment when the file is loaded, as the README says.
    env = {name: "example-value" for name in re.findall(r"\$\{(\w+)\}", block.text)}
    agents = re.findall(r"^\[agents\.([\w-]+)\.browser\]", block.text, re.M)
    for agent in [None, *agents]:
        load_settings(config=config, agent=agent, env={**env, "HOME": str(tmp_path)}, cwd=tmp_path)


@pytest.mark.parametrize("block", _of("json"), ids=_ids(_of("json")))
def test_json_examples_parse(block: Block):
    value = json.loads(block.text)
    for server in value.get("mcpServers", {}).values():
        assert Path(server["command"]).name == "webhand" and server["args"][0] == "mcp", server


@pytest.mark.parametrize("block", _of("dotenv"), ids=_ids(_of("dotenv")))
def test_secrets_examples_load(block: Block, tmp_path: Path):
    path = tmp_path / "secrets.env"
    path.write_text(block.text)
    path.chmod(0o600)
    book = secret_store.load(path)
    names = re.findall(r"^([A-Z_][A-Z0-9_]*)=", block.text, re.M)
    assert names and set(names) <= set(book.secrets), (names, sorted(book.secrets))


def _transcript(block: Block) -> list[tuple[str, str, list[str]]]:
    """A transcript sample's calls: (tool, arguments, the reply's lines)."""
    calls: list[tuple[str, str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("→ "):
            tool, _, arguments = line[2:].partition(" ")
            calls.append((tool, arguments or "{}", []))
        elif line.startswith("← "):
            calls[-1][2].append(line[2:])
        elif line.startswith("  ") and calls:
            calls[-1][2].append(line[2:])
    return calls


@pytest.mark.one_driver("the README's sample is the default driver's reply; the conformance suite compares the drivers")
async def test_the_model_sees_what_the_readme_shows(tools, demo_site):
    samples = [block for block in _of("text") if block.first_line.startswith("→ ")]
    others = [block for block in _of("text") if block not in samples]
    unexplained = [f"README.md:{b.line}" for b in others if not any(b.first_line.startswith(s) for s in SAMPLES)]
    assert not unexplained, f"text blocks that are neither a transcript nor in SAMPLES: {unexplained}"
    assert samples, "the README shows no transcript"
    await tools.call("browser_navigate", {"url": demo_site + "/index.html"})
    for block in samples:
        for tool, arguments, lines in _transcript(block):
            reply = await tools.call(tool, json.loads(arguments))
            got = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", reply.text).splitlines()
            want = [re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line) for line in lines]
            assert got == want, f"README.md:{block.line}: {tool} {arguments} now replies:\n" + "\n".join(got)


def test_the_figures_the_readme_quotes_are_the_codes_own():
    """The README, `doctor` and the install script say one figure for the headless shell, and the README
    and the Makefile one time for `make test` (the tool list's size is regenerated: test_readme.py)."""
    readme = README.read_text()
    assert SHELL_CPU_SHARE in readme
    assert SHELL_CPU_SHARE in (ROOT / "scripts" / "ensure-chromium").read_text()
    assert not re.search(r"(half|third) (of )?the CPU", readme), "a second figure for the headless shell"
    minutes = re.search(r"^TEST_MINUTES := (\d+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert f"about {minutes} minutes on 2 cores" in readme


def test_the_demo_ends_with_how_to_reach_the_webhand_command(monkeypatch):
    """After `make demo` a fresh shell has no `webhand`: the demo's last lines say how to get it."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    said = next_steps()
    assert f". {Path(sys.executable).with_name('activate')}" in said and "webhand --help" in said
    monkeypatch.setenv("PATH", f"{WEBHAND.parent}:/usr/bin:/bin")
    assert "activate" not in next_steps()
