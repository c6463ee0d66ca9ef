"""deploy/ as a user applies it: its webhand configs load, and its Playwright servers are pinned to
the Playwright version webhand talks to (a Playwright client refuses a server of another version).
Schema validation of the manifests runs with `make check-deploy` (validators kept out of the deps)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import playwright

from webhand.config import load_settings

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
DRIVER_VERSION = json.loads((Path(playwright.__file__).parent / "driver" / "package" / "package.json")
                            .read_text())["version"]


def test_the_compose_config_and_the_kubernetes_config_map_load_as_webhand_settings(tmp_path):
    compose = load_settings(config=DEPLOY / "webhand.toml", env={})
    assert [e.kind for e in compose.pool.endpoints] == ["playwright", "playwright"]
    # The ConfigMap's block (no YAML parser among the test dependencies: the block is plain text).
    block = (DEPLOY / "kubernetes.yaml").read_text().split("  webhand.toml: |\n", 1)[1].split("\n---", 1)[0]
    (tmp_path / "webhand.toml").write_text(textwrap.dedent(block))
    cluster = load_settings(config=tmp_path / "webhand.toml", env={})
    assert [e.url for e in cluster.pool.endpoints] == [f"ws://playwright-{i}.playwright:3000/" for i in range(3)]


def test_the_playwright_servers_are_pinned_to_the_playwright_version_webhand_uses():
    for name in ("compose.yaml", "kubernetes.yaml"):
        text = (DEPLOY / name).read_text()
        images = re.findall(r"mcr\.microsoft\.com/playwright:v([\d.]+)-noble", text)
        packages = re.findall(r"playwright@([\d.]+) run-server", text)
        assert images and packages, name
        assert set(images) | set(packages) == {DRIVER_VERSION}, name
