"""Action replies: navigate, snapshot, type, click and press_key on every server, interleaved.

One round runs the same scenario on each server in turn (the order rotates every round), so a
load spike on this shared machine hits every server alike and the ratios hold. Each reply is
timed from the client's side, so it includes the tool's own wait for the action's effects. The
scenario: sign in on the login form (the click navigates), then add a todo with Enter and tick
one (the click changes the DOM), then open a page that starts a dedicated, a shared and a service worker
(``navigate_workers``). The first round warms up and is not counted.

A fast click reply buys less when it comes before the page has moved or says nothing of what
changed, so for the click that navigates each counted round also records whether the reply names
the page it led to (``click_reply_names_new_page``) and, for a server whose reply does not say
(agent-browser), whether the page's URL asked for right after the reply was already the new one
(``moved_when_click_replied``); neither is timed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import measure
from peers import InProcessWebhand, McpServer
from suites import Run, step_stats

STEPS = ("navigate", "snapshot", "type", "click", "press_key", "navigate_workers")


class _Scenario:
    def __init__(self, bench: Run, server: McpServer) -> None:
        self.bench = bench
        self.server = server
        self.samples: dict[str, list[float]] = defaultdict(list)
        self.reply_chars: dict[str, list[int]] = defaultdict(list)
        self.reply_tokens: dict[str, list[int]] = defaultdict(list)
        self.errors: list[str] = []
        self.examples: dict[str, str] = {}  # one reply per step, so a reader can see what each server says
        self.press_key = True
        self.click_checks: dict[str, list[bool]] = defaultdict(list)

    def _record(self, step: str, reply: Any, counted: bool, detail: str = "") -> None:
        if reply.is_error:
            self.errors.append(f"{step}: {reply.text[:160]}")
            return
        if counted:
            self.examples.setdefault(detail or step, reply.text[:600])
            self.samples[step].append(reply.ms)
            if detail:
                self.samples[detail].append(reply.ms)
            self.reply_chars[step].append(len(reply.text))
            self.reply_tokens[step].append(measure.tokens(reply.text))

    def _ref(self, snapshot: str, role: str, name: str) -> str | None:
        ref = self.server.find_ref(snapshot, role, name)
        if ref is None:
            self.errors.append(f"no ref for {role} {name!r} in the snapshot")
        return ref

    async def round(self, counted: bool) -> None:
        server, pages = self.server, self.bench.pages
        self._record("navigate", await server.navigate(pages.url("/login")), counted)
        shot = await server.snapshot()
        self._record("snapshot", shot, counted)
        user, password = self._ref(shot.content, "textbox", "Username"), self._ref(shot.content, "textbox", "Password")
        submit = self._ref(shot.content, "button", "Sign in")
        if user and password and submit:
            self._record("type", await server.type(user, "alice"), counted)
            self._record("type", await server.type(password, "secret"), counted)
            click = await server.click(submit)
            self._record("click", click, counted, "click_navigates")
            if counted and not click.is_error:
                self.click_checks["click_reply_names_new_page"].append("welcome" in click.text.lower())
                url = await server.current_url()
                if url is not None:
                    self.click_checks["moved_when_click_replied"].append("/welcome" in url)
        self._record("navigate", await server.navigate(pages.url("/todo")), counted)
        shot = await server.snapshot()
        self._record("snapshot", shot, counted)
        field, box = self._ref(shot.content, "textbox", "New todo"), self._ref(shot.content, "checkbox", "Buy milk")
        if field:
            self._record("type", await server.type(field, "Buy bread"), counted)
            if self.press_key:
                self._record("press_key", await server.press_key("Enter"), counted, "press_key_dom")
        if box:
            self._record("click", await server.click(box), counted, "click_dom")
        # A page that starts workers at load: its navigate is timed on its own (issue 38, item 4).
        self._record("navigate_workers", await server.navigate(pages.url("/workers")), counted)

    def result(self) -> dict[str, Any]:
        return {"label": self.server.spec.label, "version": self.server.spec.version,
                "latency_ms": step_stats(self.samples),
                "reply_chars": step_stats(self.reply_chars), "reply_tokens": step_stats(self.reply_tokens),
                "errors": self.errors[:10], "error_count": len(self.errors), "example_replies": self.examples,
                "press_key": "measured" if self.press_key else "n/a (no browser_press_key tool)",
                "click_checks": {k: f"{sum(v)} of {len(v)}" for k, v in self.click_checks.items()}}


async def _in_process(bench: Run) -> dict[str, Any] | None:
    """webhand's own action latency with no MCP in between (bench/action_latency.py, when it is there)."""
    try:
        import tempfile

        import action_latency
        from webhand import Settings
    except Exception:  # noqa: BLE001 - that script belongs to another part of the bench
        return None
    settings = Settings.from_sources({"executable_path": bench.chrome, "isolation": "context", "warm_reserve": False,
                                      "output_dir": tempfile.mkdtemp(prefix="webhand-bench-")}, env={})
    try:
        found = await action_latency.measure(repeats=8 if bench.quick else 25, warmup=3, settings=settings)
    except Exception as error:  # noqa: BLE001
        bench.note(f"bench/action_latency.py failed: {type(error).__name__}: {error}")
        return None
    bench.remember_processes()
    return found


@asynccontextmanager
async def _api_beside(bench: Run, servers: list[McpServer]) -> AsyncIterator[list[McpServer]]:
    """webhand's Python API as one more server in the rounds, when webhand's MCP server runs."""
    if not any(s.spec.key == "webhand" for s in servers):
        yield []
        return
    api = InProcessWebhand(bench.chrome)
    try:
        await api.start()
    except Exception as error:  # noqa: BLE001 - reported, the MCP figures still stand
        bench.note(f"webhand's Python API could not start: {error}")
        yield []
        return
    try:
        yield [api]
    finally:
        await api.stop()


async def run(bench: Run) -> dict[str, Any]:
    rounds = 2 if bench.quick else 15
    out: dict[str, Any] = {"rounds": rounds, "servers": {}, "memory": {}}
    async with bench.servers(bench.specs) as servers, _api_beside(bench, servers) as api:
        scenarios = [_Scenario(bench, s) for s in [*servers, *api]]
        for scenario in scenarios:
            if scenario.server.spec.kind == "webhand" and not await scenario.server.has_tool("browser_press_key"):
                scenario.press_key = False
                bench.note("webhand has no browser_press_key yet: its press_key figure is n/a")
        for number in range(rounds + 1):
            if number > 3 and bench.over():
                bench.note(f"actions: stopped after {number - 1} rounds (time budget)")
                out["rounds"] = number - 1
                break
            shift = number % max(1, len(scenarios))
            for scenario in scenarios[shift:] + scenarios[:shift]:
                try:
                    await scenario.round(counted=number > 0)
                except Exception as error:  # noqa: BLE001 - a broken peer must not stop the others
                    scenario.errors.append(f"round {number}: {type(error).__name__}: {error}")
            print(f"  actions: round {number}/{rounds}", flush=True)
        # Memory per session, each server holding one session on the same long page.
        served = [s for s in scenarios if not isinstance(s.server, InProcessWebhand)]
        for scenario in served:
            await scenario.server.navigate(bench.pages.url("/article"))
        bench.remember_processes()
        for scenario in served:
            out["memory"][scenario.server.spec.key] = {"label": scenario.server.spec.label, **scenario.server.memory()}
        for scenario in scenarios:
            out["servers"][scenario.server.spec.key] = scenario.result()
            if scenario.errors:
                bench.note(f"{scenario.server.spec.label}: {len(scenario.errors)} errors in the action scenario, "
                           f"first: {scenario.errors[0]}")
    out["in_process"] = await _in_process(bench)
    return out
