"""The suites, one per figure group. Each is ``async def run(bench: Run) -> dict`` and adds its part of
the results; ``run.py`` orders them. A suite that cannot measure something says why in ``bench.notes``
and goes on."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import measure
from pages import PageServer
from peers import McpServer, Spec, server_for, unavailable


@dataclass
class Run:
    quick: bool
    chrome: str
    pages: PageServer
    specs: list[Spec]
    notes: list[str] = field(default_factory=list)
    seen_pids: dict[int, float] = field(default_factory=dict)  # every browser pid seen, with its start time
    suite_deadline: float = float("inf")  # time.time() by which the running suite should wrap up
    scale_ladders: list[str] | None = None  # the scale suite's ladders to run (None: all)

    def over(self) -> bool:
        """True once the running suite has spent its share of the run's time budget."""
        return time.time() > self.suite_deadline

    def left(self) -> float:
        return max(0.0, self.suite_deadline - time.time())

    def note(self, text: str) -> None:
        print(f"  note: {text}", flush=True)
        self.notes.append(text)

    def spec(self, key: str) -> Spec | None:
        return next((s for s in self.specs if s.key == key), None)

    def remember_processes(self) -> None:
        """Record every process below us, so the end of the run can check each one is gone."""
        for process in measure.descendants():
            try:
                self.seen_pids[process.pid] = process.create_time()
            except Exception:  # noqa: BLE001 - it just ended
                continue

    @contextlib.asynccontextmanager
    async def servers(self, specs: list[Spec]) -> AsyncIterator[list[McpServer]]:
        """Start the servers that can run, one at a time; stop every one of them at the end."""
        started: list[McpServer] = []
        try:
            for spec in specs:
                why = unavailable(spec)
                if why:
                    self.note(f"{spec.label} skipped: {why}")
                    continue
                server = server_for(spec)
                try:
                    await server.start()
                except Exception as error:  # noqa: BLE001 - a peer that cannot run is reported, not fatal
                    self.note(f"{spec.label} could not start: {error}")
                    continue
                started.append(server)
            yield started
        finally:
            self.remember_processes()
            for server in reversed(started):
                await server.stop()


def step_stats(samples: dict[str, list[float]]) -> dict[str, Any]:
    return {step: measure.summary(values) for step, values in samples.items()}
