"""A warm CLI command: what a coding agent pays per step when it drives the browser by command line.

Each CLI's daemon is started first (one page open on the bench's site); then, in rounds, the same
question is asked of each, in turn, the order rotating every round: ``webhand get_url`` (the venv's
console script, the way a user runs it), ``agent-browser get url`` (its native client) and, as the
floor, the same venv's ``python -c pass``. Each run is a whole process, timed from spawn to exit
(wall) with its CPU time from the kernel (wait4), so a load spike on this shared machine hits every
command alike; the figures are medians. Both daemons and their browsers are ended at the end, by
PID, and checked gone.

Both Python commands run with current bytecode, as ``pip install`` leaves it (it compiles every
module at install): their warm-up writes it to a folder of the suite's own (``PYTHONPYCACHEPREFIX``,
so the source tree is not written), whatever ``PYTHONDONTWRITEBYTECODE`` says. Without that, a
shell with that variable set and a source tree edited since its ``__pycache__`` was written timed
Python compiling the edited modules on every run (the client's two modules then: 1.2x its CPU).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

import measure
from peers import agent_browser_binary, agent_browser_spec, unavailable
from suites import Run

LAUNCH_TIMEOUT = 90.0


def _run_once(command: list[str], env: dict[str, str]) -> tuple[float, float, int, bytes]:
    """Wall seconds, CPU seconds (user + system, the kernel's account), exit status, and output."""
    read, write = os.pipe()
    started = time.perf_counter()
    pid = os.posix_spawn(command[0], command, env, file_actions=[
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, write, 1),
        (os.POSIX_SPAWN_DUP2, write, 2), (os.POSIX_SPAWN_CLOSE, read)])
    os.close(write)
    chunks = []
    with os.fdopen(read, "rb") as output:
        while chunk := output.read(65536):
            chunks.append(chunk)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), b"".join(chunks)


def _webhand_command() -> tuple[list[str], str]:
    """The console script of the venv the bench runs in (what `pip install` gives a user); else `-m`."""
    script = Path(sys.executable).parent / "webhand"
    if script.exists():
        return [str(script)], "the venv's console script"
    return [sys.executable, "-m", "webhand"], "python -m webhand (no console script in this venv)"


class _Daemons:
    """Both CLIs' daemons, each in a private runtime folder of its own, ended by PID at the end."""

    def __init__(self, bench: Run) -> None:
        self.bench = bench
        self.folder = Path(tempfile.mkdtemp(prefix="bench-cli-"))
        self.webhand_env = {**os.environ, "XDG_RUNTIME_DIR": str(self._private("webhand-run")),
                            "WEBHAND_EXECUTABLE_PATH": bench.chrome, "WEBHAND_WARM_RESERVE": "false",
                            "WEBHAND_OUTPUT_DIR": str(self.folder / "out")}
        self.webhand_env.pop("WEBHAND_SESSION", None)
        self.agent_env = {**os.environ, "XDG_RUNTIME_DIR": str(self._private("agent-browser-run")),
                          "AGENT_BROWSER_EXECUTABLE_PATH": bench.chrome}
        self.webhand, self.webhand_how = _webhand_command()
        self.agent = str(agent_browser_binary())

    def timed_env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` for a timed Python command: current bytecode, written once by its warm-up."""
        timed = {**env, "PYTHONPYCACHEPREFIX": str(self.folder / "bytecode")}
        timed.pop("PYTHONDONTWRITEBYTECODE", None)
        return timed

    def _private(self, name: str) -> Path:
        path = self.folder / name
        path.mkdir(mode=0o700)
        return path

    def open(self, url: str) -> list[str]:
        """Start both daemons on ``url``; the problems met (a CLI that cannot run is left out)."""
        problems = []
        done = subprocess.run([*self.webhand, "navigate", url], env=self.webhand_env, capture_output=True, text=True,
                              timeout=LAUNCH_TIMEOUT)
        if done.returncode != 0:
            problems.append(f"webhand navigate failed: {done.stderr.strip()[:200]}")
        why = unavailable(agent_browser_spec(self.bench.chrome))
        if why:
            problems.append(f"agent-browser: {why}")
            self.agent = ""
        else:
            done = subprocess.run([self.agent, "open", url], env=self.agent_env, capture_output=True, text=True,
                                  timeout=LAUNCH_TIMEOUT)
            if done.returncode != 0:
                problems.append(f"agent-browser open failed: {(done.stderr or done.stdout).strip()[:200]}")
                self.agent = ""
        return problems

    def _agent_processes(self) -> list[psutil.Process]:
        found = []
        for file in (Path(self.agent_env["XDG_RUNTIME_DIR"]) / "agent-browser").glob("*.pid"):
            with contextlib.suppress(OSError, ValueError, psutil.Error):
                daemon = psutil.Process(int(file.read_text().strip()))
                found += [daemon, *daemon.children(recursive=True)]
        return found

    def _webhand_processes(self) -> list[psutil.Process]:
        lock = Path(self.webhand_env["XDG_RUNTIME_DIR"]) / "webhand" / "daemon.lock"
        with contextlib.suppress(OSError, ValueError, psutil.Error):
            daemon = psutil.Process(int(lock.read_text().strip()))
            return [daemon, *daemon.children(recursive=True)]
        return []

    def close(self) -> list[str]:
        """Stop both the way their users do, then end by PID whatever of them still runs; what was left."""
        left = self._webhand_processes() + self._agent_processes()
        self.bench.remember_processes()
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run([*self.webhand, "daemon", "stop"], env=self.webhand_env, capture_output=True, timeout=90)
        if self.agent:
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                subprocess.run([self.agent, "close", "--all"], env=self.agent_env, capture_output=True, timeout=60)
        _gone, alive = psutil.wait_procs(left, timeout=15)
        stragglers = []
        for process in alive:
            with contextlib.suppress(psutil.Error):
                if process.status() != psutil.STATUS_ZOMBIE:
                    stragglers.append(f"{process.pid} {process.name()}")
                    process.send_signal(signal.SIGTERM)
        _gone, alive = psutil.wait_procs(alive, timeout=10)
        for process in alive:
            with contextlib.suppress(psutil.Error):
                process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)
        return stragglers


def _medians(samples: dict[str, list[tuple[float, float]]], floor: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, runs in samples.items():
        walls, cpus = [measure.ms(w) for w, _ in runs], [measure.ms(c) for _, c in runs]
        out[name] = {"wall_ms": measure.summary(walls), "cpu_ms": measure.summary(cpus)}
    base = samples.get(floor) or []
    for name, runs in samples.items():
        if name == floor or len(runs) != len(base) or not base:
            continue
        # Pair by pair (the runs of one round ran back to back), then the median of the ratios:
        # it holds when the machine's speed drifts during the run.
        out[name]["wall_vs_python"] = round(statistics.median(a[0] / b[0] for a, b in zip(runs, base)), 2)
        out[name]["cpu_vs_python"] = round(statistics.median(a[1] / max(b[1], 1e-4) for a, b in zip(runs, base)), 2)
    return out


async def run(bench: Run) -> dict[str, Any]:
    rounds = 12 if bench.quick else 40
    url = bench.pages.url("/login")
    daemons = _Daemons(bench)
    out: dict[str, Any] = {"rounds": rounds, "url": "/login", "load_average_before": [round(x, 2) for x in os.getloadavg()]}
    try:
        problems = daemons.open(url)
        for problem in problems:
            bench.note(f"cli: {problem}")
        commands = {"webhand get_url": ([*daemons.webhand, "get_url"], daemons.timed_env(daemons.webhand_env)),
                    "agent-browser get url": ([daemons.agent, "get", "url"], daemons.agent_env),
                    "python -c pass": ([sys.executable, "-c", "pass"], daemons.timed_env(dict(os.environ)))}
        if not daemons.agent:
            del commands["agent-browser get url"]
        for name, (command, env) in commands.items():  # one warm-up each, and a check that it answers
            _wall, _cpu, code, output = _run_once(command, env)
            if name != "python -c pass" and (code != 0 or b"/login" not in output):
                bench.note(f"cli: {name} did not answer with the page's URL (exit {code}): {output[:200]!r}")
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        names = list(commands)
        for number in range(rounds):
            shift = number % len(names)
            for name in names[shift:] + names[:shift]:
                wall, cpu, _code, _output = _run_once(*commands[name])
                samples[name].append((wall, cpu))
            if bench.over() and number >= 5:
                bench.note(f"cli: stopped after {number + 1} rounds (time budget)")
                break
        out["rounds"] = len(samples[names[0]])
        out["commands"] = _medians(samples, "python -c pass")
        out["webhand_command"] = daemons.webhand_how
        out["bytecode"] = "current for both Python commands (written by their warm-up, as pip install compiles it)"
        out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        for name, figures in out["commands"].items():
            print(f"  cli {name}: median {figures['wall_ms']['median']} ms wall, {figures['cpu_ms']['median']} ms CPU"
                  + (f", {figures['wall_vs_python']}× python -c pass" if "wall_vs_python" in figures else ""), flush=True)
    finally:
        stragglers = daemons.close()
        if stragglers:
            bench.note(f"cli: still running after each CLI's own stop, then ended by PID: {', '.join(stragglers)}")
        out["left_after_stop"] = stragglers
    return out
