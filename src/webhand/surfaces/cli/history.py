"""The CLI's history commands: ``webhand export`` (a session's calls as a script) and ``webhand
replay`` (rerun a JSON export). Kept apart from main.py, which stays the parser and the dispatch."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from webhand.config import Settings
from webhand.errors import ConfigError
from webhand.security.locations import open_private_file


def run_export(args: argparse.Namespace, settings: Settings) -> int:
    from webhand.surfaces.cli.export import load_entries, render, steps_of
    from webhand.security.masking import Masker

    source = Path(args.session)
    if source.is_file():
        entries, name = load_entries(source), source.stem
    else:
        from webhand.surfaces.cli import daemon_client

        try:
            reply = daemon_client.request({"op": "history", "session": args.session}, timeout=30.0)
        except daemon_client.DaemonUnavailable:
            raise ConfigError("The webhand daemon is not running, so it has no session to export.",
                              "Give a history file instead (history/*.jsonl in the conversation's folder).") from None
        if not reply.get("ok"):
            raise ConfigError(str(reply.get("error")), "Run `webhand daemon status` to see the sessions.")
        entries, name = reply["entries"], args.session
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
