"""The CLI's history commands: ``webhand export`` (a session's calls as a script) and ``webhand
replay`` (rerun a JSON export). Kept apart from main.py, which stays the parser and the dispatch."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from pathlib import Path

from webhand.config import Settings
from webhand.errors import ConfigError
from webhand.security.locations import open_private_file


def run_export(args: argparse.Namespace, settings: Settings) -> int:
    from webhand.surfaces.cli.export import render, steps_of
    from webhand.security.masking import Masker

    if args.flow or (args.format or "").startswith("playwright"):
        return _export_playwright(args, settings)
    args.format = args.format or "json"
    entries, name = _history(args)
    # Masked with the secrets file before anything is written: a history file from an older webhand
    # (or one edited by hand) may hold a secret, in its arguments or in a URL of a GET form.
    steps = Masker(settings.secrets_file).data(steps_of(entries))
    text = render(steps, args.format, name)
    if args.output:
        with os.fdopen(open_private_file(args.output), "w", encoding="utf-8") as file:  # 0600, like all webhand writes
            file.write(text)
    else:
        sys.stdout.write(text)
    unresolved = sorted({ref for step in steps for ref in step.get("unresolved", [])})
    if unresolved:
        print(f"webhand: refs {', '.join(unresolved)} had no stable selector (inside a frame, or the element was "
              "gone); those steps may not replay.", file=sys.stderr)
    return 0


def _export_playwright(args: argparse.Namespace, settings: Settings) -> int:
    """A saved flow (by name, or its file), or a session's history, as a Playwright for Python script
    (tools/flows/playwright_script.py)."""
    from webhand.tools.flows.playwright_script import export_flow
    from webhand.tools.flows.store import load_flow, read_flow_file
    from webhand.security.masking import Masker

    form = args.format or "playwright"
    if not form.startswith("playwright"):
        raise ConfigError(f"A flow exports as playwright or playwright-pytest, not {form}.",
                          "Use --format playwright, or browser_run_flow to run it on webhand.")
    if args.flow:
        flow = read_flow_file(Path(args.flow)) if os.path.sep in args.flow or args.flow.endswith(".json") \
            else load_flow(args.flow)
    else:
        from webhand.tools.flows.save import flow_from_history

        entries, name = _history(args)
        flow = flow_from_history(entries, re.sub(r"[^A-Za-z0-9_.-]", "-", name).lstrip("-._")[:64] or "session")
    # Masked as data before it is written: a secret's value becomes <secret>NAME</secret>, which the
    # script reads from the environment; the script's code itself is never masked (it could break).
    masked = Masker(settings.secrets_file).data(flow.model_dump())
    export = export_flow(type(flow).model_validate(masked), "pytest" if form == "playwright-pytest" else "plain")
    if args.output:
        with os.fdopen(open_private_file(args.output), "w", encoding="utf-8") as file:  # 0600, like all webhand writes
            file.write(export.text)
    else:
        sys.stdout.write(export.text)
    for line in export.unsupported:
        print(f"webhand: {line}: the script raises NotImplementedError there.", file=sys.stderr)
    return 0


def _history(args: argparse.Namespace) -> tuple[list, str]:
    """The entries of the session (from the daemon) or history file ``args.session`` names, and its name."""
    from webhand.surfaces.cli.export import load_entries

    if not args.session:
        raise ConfigError("Name a session (or a history file) to export, or a flow with --flow NAME.",
                          "See `webhand help export`.")
    source = Path(args.session)
    if source.is_file():
        return load_entries(source), source.stem
    from webhand.surfaces.cli import daemon_client

    try:
        reply = daemon_client.request({"op": "history", "session": args.session}, timeout=30.0)
    except daemon_client.DaemonUnavailable:
        raise ConfigError("The webhand daemon is not running, so it has no session to export.",
                          "Give a history file instead (history/*.jsonl in the conversation's folder).") from None
    if not reply.get("ok"):
        raise ConfigError(str(reply.get("error")), "Run `webhand daemon status` to see the sessions.")
    return reply["entries"], args.session


def run_replay(args: argparse.Namespace, settings: Settings) -> int:
    from webhand.surfaces.cli.replay import is_flow_file, load_export, replay, replay_flow

    if is_flow_file(Path(args.file)):
        params = {}
        for given in args.param or []:
            name, equals, value = given.partition("=")
            if not equals:
                print(f"webhand: --param takes NAME=VALUE, not {given!r}.", file=sys.stderr)
                return 2
            params[name] = value
        finished, text = asyncio.run(replay_flow(Path(args.file), params, settings, update=args.update))
        print(text)
        return 0 if finished else 1
    steps = load_export(Path(args.file))
    report = asyncio.run(replay(steps, settings))
    if report.matched:
        print(f"Replayed {report.total} steps: each ended as recorded.")
        return 0
    print(f"{report.difference} ({report.steps - 1} of {report.total} steps matched before it.)")
    return 1
