"""``webhand replay FILE``: run a JSON export (export.py) on a fresh browser, step by step, and
report the first step whose outcome or resulting URL differs from the recording; or run a flow
file (flows/, docs/flows.md) the way ``browser_run_flow`` does, healing small shifts, ``--update``
writing the healed ways back into the file."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webhand.config import Settings
from webhand.errors import InvalidArgument


@dataclass
class ReplayReport:
    steps: int  # how many ran
    total: int
    difference: str = ""  # the first step that differs, for people; "" when all matched

    @property
    def matched(self) -> bool:
        return not self.difference


def load_export(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InvalidArgument(f"Cannot read the export {path}: {getattr(error, 'strerror', None) or error}.",
                              "Give a file written by `webhand export SESSION --format json`.") from None
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise InvalidArgument(f"{path} is not a webhand JSON export (no `steps`).",
                              "Write one with `webhand export SESSION --format json`.")
    return data["steps"]


async def replay(steps: list[dict[str, Any]], settings: Settings) -> ReplayReport:
    """Run ``steps`` in a fresh conversation; stop at the first that differs from its expectation."""
    from webhand.host import Webhand

    async with Webhand(settings, capabilities=["all"]) as webhand:
        context = webhand.conversation(f"replay-{uuid.uuid4().hex[:12]}")
        for number, step in enumerate(steps, 1):
            result = await context.call(str(step.get("tool")), step.get("arguments") or {})
            expect = step.get("expect") or {}
            label = f"Step {number} ({step.get('tool')}{' on ' + step['target'] if step.get('target') else ''})"
            if result.is_error:
                return ReplayReport(number, len(steps), f"{label} failed: {result.text.removeprefix('Error: ')}")
            session = webhand.sessions.find(context.conversation_id)
            tab = session.active_tab if session is not None else None
            now = tab.url if tab is not None and not tab.closed else ""
            if expect.get("url") and now != expect["url"]:
                return ReplayReport(number, len(steps), f"{label} ended on {now}, the recording on {expect['url']}.")
        return ReplayReport(len(steps), len(steps))


def is_flow_file(path: Path) -> bool:
    """Whether ``path`` holds a flow (``"webhand_flow"``) rather than a JSON export."""
    try:
        with open(path, "rb") as file:
            head = file.read(4096)
    except OSError:
        return False
    return b'"webhand_flow"' in head


async def replay_flow(path: Path, params: dict[str, str], settings: Settings, *, update: bool = False) -> tuple[bool, str]:
    """Run the flow in ``path`` in a fresh conversation: (whether it ran to its end, the reply)."""
    from webhand.tools.flows.replay import Runner, run_flow
    from webhand.tools.flows.store import read_flow_file, write_flow
    from webhand.host import Webhand
    from webhand.response import Response
    from webhand.tools.flows import say_run

    flow = read_flow_file(path)
    async with Webhand(settings, capabilities=["all"]) as webhand:
        context = webhand.conversation(f"replay-{uuid.uuid4().hex[:12]}")
        result = await run_flow(flow, params, Runner(context.sessions, settings, context.files), update=update)
        if result.updated:
            write_flow(path, result.flow)
        response = Response(settings, "webhand replay", context.files)
        say_run(result, response)
        return result.finished, response.result().text
