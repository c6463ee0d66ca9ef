"""The size of the tools/list reply: what every conversation pays before its first call.

Counted twice: the whole tools/list result as JSON, and just what a host hands its model (name,
description, input schema per tool), in characters and in cl100k_base tokens.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import measure
from peers import Spec, webhand_spec
from suites import Run


def _webhand_flags() -> str:
    try:
        return subprocess.run([sys.executable, "-m", "webhand", "mcp", "--help"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def variants(bench: Run) -> tuple[list[Spec], list[str]]:
    help_text = _webhand_flags()
    out = [webhand_spec(bench.chrome, key="webhand", label="webhand (default)")]
    missing = []
    if "--caps" in help_text:
        out.append(webhand_spec(bench.chrome, key="webhand-all", label="webhand --caps all", extra=["--caps", "all"]))
    else:
        missing.append("webhand --caps all: no --caps flag on `webhand mcp`")
    if "--tool-style" in help_text:
        out.append(webhand_spec(bench.chrome, key="webhand-single", label="webhand --tool-style single",
                                extra=["--tool-style", "single"]))
        if "--caps" in help_text:
            out.append(webhand_spec(bench.chrome, key="webhand-single-all", label="webhand single, --caps all",
                                    extra=["--tool-style", "single", "--caps", "all"]))
    else:
        missing.append("webhand single-tool style: no --tool-style flag on `webhand mcp` yet")
    for spec in out:
        spec.env["WEBHAND_WARM_RESERVE"] = "false"  # listing tools needs no browser
    out += [s for s in bench.specs if s.kind != "webhand" and s.key != "playwright-settle0"]
    return out, missing


async def run(bench: Run) -> dict[str, Any]:
    chosen, missing = variants(bench)
    for text in missing:
        bench.note(text + " (n/a)")
    out: dict[str, Any] = {"variants": {}, "missing": missing}
    for spec in chosen:  # one at a time: a server per variant
        async with bench.servers([spec]) as servers:
            for server in servers:
                whole, model = await server.list_tools_json()
                names = await server.tool_names()
                out["variants"][spec.key] = {
                    "label": spec.label, "tools": len(names),
                    "chars": len(whole), "tokens": measure.tokens(whole),
                    "model_chars": len(model), "model_tokens": measure.tokens(model), "names": names}
                print(f"  tools/list {spec.label}: {len(names)} tools, {measure.tokens(whole)} tokens", flush=True)
    return out
