"""Turn the results into bench/results/latest.json, latest.md (read at a glance) and PNG plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from measure import ratio

STEPS = ("navigate", "snapshot", "type", "click", "press_key")
PEERS = (("playwright", "Playwright MCP"), ("playwright-settle0", "Playwright MCP settle 0"), ("devtools", "Chrome DevTools MCP"),
         ("agent-browser", "agent-browser MCP"))
#: The warm-CLI goal of issue 31: a warm `webhand get_url` at most this many times `python -c pass`.
CLI_LIMIT = 1.5


def _num(value: Any, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and digits:
        return f"{value:,.{digits}f}"
    return f"{value:,.0f}" if isinstance(value, (int, float)) else str(value)


def _x(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}×"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(row) + " |" for row in rows), ""]


def _get(data: Any, *path: Any) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _median(results: dict[str, Any], server: str, step: str) -> float | None:
    return _get(results, "actions", "servers", server, "latency_ms", step, "median")


def targets(r: dict[str, Any]) -> list[list[str]]:
    """Each target of issue 6 with what this run measured; reported, never asserted."""
    rows: list[list[str]] = []
    actions = ("navigate", "type", "click", "press_key")
    for peer, label, limit in (("playwright", "Playwright MCP", 0.2), ("playwright-settle0", "Playwright MCP settle 0", None),
                               ("devtools", "Chrome DevTools MCP", 0.5)):
        found = {s: ratio(_median(r, "webhand", s), _median(r, peer, s)) for s in actions}
        shown = ", ".join(f"{s} {_x(v)}" for s, v in found.items())
        known = [v for v in found.values() if v is not None]
        met = "report only" if limit is None else ("n/a" if not known else
                                                   ("yes" if all(v <= limit for v in known) else "no"))
        rows.append([f"Action replies ≤ {limit}× {label} (median)" if limit else f"Action replies vs {label} (median)",
                     shown, met])
    pages = _get(r, "snapshots", "pages") or {}
    for mode, limit in (("webhand:default", 0.5), ("webhand:full", 0.8)):
        found = {p: ratio(_get(row, mode, "chars"), _get(row, "playwright:default", "chars")) for p, row in pages.items()}
        known = {p: v for p, v in found.items() if v is not None}
        worst = max(known.items(), key=lambda kv: kv[1]) if known else None
        name = "Interactive" if mode.endswith("default") else "Full"
        rows.append([f"{name} snapshot ≤ {limit}× Playwright MCP chars, every page",
                     f"worst {worst[0]} {_x(worst[1])}; over on {sum(v > limit for v in known.values())} of {len(known)} pages"
                     if worst else "n/a", "n/a" if not worst else ("yes" if worst[1] <= limit else "no")])
    tools = _get(r, "tools_list", "variants") or {}
    tl = ratio(_get(tools, "webhand", "tokens"), _get(tools, "playwright", "tokens"))
    rows.append(["Default tools/list ≤ 0.5× Playwright MCP tokens",
                 f"{_num(_get(tools, 'webhand', 'tokens'))} vs {_num(_get(tools, 'playwright', 'tokens'))} tokens ({_x(tl)})",
                 "n/a" if tl is None else ("yes" if tl <= 0.5 else "no")])
    for case, label, limit in (("process_warm", "First call, warm reserve (process)", 150), ("context", "First call, context isolation", 60)):
        value = _get(r, "first_page", "api", case, "median")
        rows.append([f"{label} < {limit} ms", f"median {_num(value)} ms, p95 {_num(_get(r, 'first_page', 'api', case, 'p95'))} ms",
                     "n/a" if value is None else ("yes" if value < limit else "no")])
    best = _get(r, "scale", "context", "max_sessions_under_1s")
    rows.append(["50 concurrent sessions, context isolation, p95 < 1 s", f"{_num(best)} sessions passed",
                 "n/a" if best is None else ("yes" if best >= 50 else "no")])
    cli = _get(r, "cli", "commands", "webhand get_url") or {}
    found = cli.get("wall_vs_python")
    rows.append([f"Warm CLI `webhand get_url` ≤ {CLI_LIMIT}× the venv's `python -c pass` (median wall)",
                 f"{_num(_get(cli, 'wall_ms', 'median'), 1)} vs {_num(_get(r, 'cli', 'commands', 'python -c pass', 'wall_ms', 'median'), 1)} ms "
                 f"({_x(found)}, pair by pair)" if found else "n/a", "n/a" if found is None else ("yes" if found <= CLI_LIMIT else "no")])
    return rows + _start_up_targets(r)


def _start_up_targets(r: dict[str, Any]) -> list[list[str]]:
    """Issue 11's aims: what a user of a fresh `webhand mcp` waits for, against Playwright MCP."""
    fp = _get(r, "first_page", "mcp") or {}
    memory = _get(r, "actions", "memory") or {}
    rows = []
    for label, found, limit in (
            ("spawn → initialize answered", ratio(_get(fp, "webhand", "initialize", "median"), _get(fp, "playwright", "initialize", "median")), 1.0),
            ("spawn → tools listed (report only)", ratio(_get(fp, "webhand", "tools_listed", "median"), _get(fp, "playwright", "tools_listed", "median")), None),
            ("cold: spawn → first page", ratio(_get(fp, "webhand", "cold_total", "median"), _get(fp, "playwright", "cold_total", "median")), 0.6),
            ("browser PSS with one session", ratio(_get(memory, "webhand", "browser_pss_mb"), _get(memory, "playwright", "browser_pss_mb")), 1.0),
            ("type reply (median)", ratio(_median(r, "webhand", "type"), _median(r, "playwright", "type")), 1.0)):
        met = "report only" if limit is None else ("n/a" if found is None else ("yes" if found <= limit else "no"))
        rows.append([f"{label} ≤ {limit}× Playwright MCP" if limit else f"{label} vs Playwright MCP", _x(found), met])
    return rows


def markdown(r: dict[str, Any]) -> str:
    m = r.get("machine", {})
    servers = r.get("servers", {})
    out = ["# webhand benchmark: side by side with its peers", "",
           f"{r.get('mode', '?')} run, started {r.get('started_utc', '?')}, took {_num(r.get('seconds'))} s. "
           f"Machine: {m.get('cpus')} × {m.get('cpu', '?')}, {m.get('memory_gb')} GB, {m.get('os', '')}; "
           f"{m.get('chromium', '')} ({m.get('chromium_path', '')}); Python {m.get('python')}, Node {m.get('node')}. "
           f"Load average at start: {m.get('load_average_at_start')} (the machine is shared: absolute times are noisy, "
           "ratios within the run hold).", "",
           "Servers: " + "; ".join(f"{s['label']} {s['version']}" for k, s in servers.items() if k != "playwright-settle0")
           + ". All headless, isolated, on the same Chromium binary, driven through the official MCP Python client over stdio.", "",
           *_glance(r), "## Targets (reported, not asserted)", "", *_table(["target", "measured", "met"], targets(r))]
    out += _buys_less(r) + _cli(r) + _actions(r) + _first_page(r) + _tools_list(r) + _snapshots(r) + _memory(r) + _scale(r) + _flows(r)
    notes = r.get("notes") or []
    cleanup = r.get("cleanup") or {}
    out += ["## Notes", ""] + [f"- {n}" for n in notes] + [
        f"- Cleanup: {'every server and browser the bench started is gone' if cleanup.get('ok') else 'still running after the grace period, then ended by pid: ' + ', '.join(cleanup.get('left_then_ended') or [])}"
        f" (checked by a mark every process of the run inherits; {cleanup.get('processes_seen', 0)} processes seen below the bench).", ""]
    return "\n".join(out)


def _flows(r: dict[str, Any]) -> list[str]:
    flows = r.get("flows") or {}
    if not flows.get("table"):
        return []
    return ["## Flows: a task recorded through the tools, replayed on a fresh instance (bench/flows.py)", "",
            flows["table"], "", flows.get("measures", ""), ""]


def _glance(r: dict[str, Any]) -> list[str]:
    """One table of the headline figures, one column per server."""
    keys = ["webhand", "webhand-pw", "webhand-ff", "playwright", "playwright-settle0", "devtools", "agent-browser"]
    keys = [k for k in keys if k in (r.get("servers") or {}) or k == "webhand"]
    labels = {k: (_get(r, "servers", k, "label") or k) for k in keys}
    same_as_webhand = ["same"] if "webhand-pw" in keys else []  # tokens do not depend on the driver
    on_firefox = "webhand-ff" in keys
    rows = []
    for step in ("navigate", "snapshot", "type", "click", "press_key"):
        rows.append([f"{step} reply, median ms", *(_num(_median(r, k, step)) for k in keys)])
    pages = _get(r, "snapshots", "pages") or {}
    modes = ("webhand:default", "webhand:full", "playwright:default", "devtools:default")
    both = [p for p, row in pages.items() if all("tokens" in (row.get(m) or {}) for m in modes)]
    total = {m: sum(pages[p][m]["tokens"] for p in both) for m in modes}
    agent = [m for m in ("agent-browser:default", "agent-browser:full") if all("tokens" in (pages[p].get(m) or {}) for p in both)]
    agent_total = {m: sum(pages[p][m]["tokens"] for p in both) for m in agent}
    agent_cell = ([f"{_num(agent_total.get('agent-browser:default'))} interactive, {_num(agent_total.get('agent-browser:full'))} full"]
                  if "agent-browser" in keys else [])
    firefox_cell = []
    if on_firefox:  # the same pages on Firefox: the snapshot is the page agent's, the tree is Firefox's
        firefox_pages = [p for p in both if "tokens" in (pages[p].get("webhand-ff:default") or {})]
        firefox_cell = [f"{_num(sum(pages[p]['webhand-ff:default']['tokens'] for p in both))} interactive"
                        if len(firefox_pages) == len(both) else "n/a"]
    if both:
        rows.append([f"snapshot tokens, sum over {len(both)} pages", f"{_num(total['webhand:default'])} interactive, "
                     f"{_num(total['webhand:full'])} full", *same_as_webhand, *firefox_cell, _num(total["playwright:default"]),
                     "same", _num(total["devtools:default"]), *agent_cell])
    tools = _get(r, "tools_list", "variants") or {}
    rows.append(["tools/list tokens (default)", _num(_get(tools, "webhand", "tokens")), *same_as_webhand,
                 *(["same"] if on_firefox else []), _num(_get(tools, "playwright", "tokens")),
                 "same", _num(_get(tools, "devtools", "tokens")),
                 *([_num(_get(tools, "agent-browser", "tokens"))] if "agent-browser" in keys else [])])
    fp = _get(r, "first_page", "mcp") or {}
    rows.append(["spawn → initialize answered, median ms", *(_num(_get(fp, k, "initialize", "median")) if k != "playwright-settle0" else "same" for k in keys)])
    rows.append(["cold: spawn → first page, median ms", *(_num(_get(fp, k, "cold_total", "median")) if k != "playwright-settle0" else "same" for k in keys)])
    rows.append(["first navigate of an idle server, median ms", *(_num(_get(fp, k, "after_idle", "median")) if k != "playwright-settle0" else "same" for k in keys)])
    mem = _get(r, "actions", "memory") or {}
    rows.append(["browser PSS with one session, MB (stdio: no reserve; crash handlers left out)", *(_num(_get(mem, k, "browser_pss_mb")) for k in keys)])
    return ["## At a glance", "", *_table(["figure", *(labels[k] for k in keys)], rows)]


def _actions(r: dict[str, Any]) -> list[str]:
    data = _get(r, "actions", "servers") or {}
    if not data:
        return []
    keys = list(data)
    header = ["step"] + [f"{data[k]['label']} median / p95 ms" for k in keys] + [f"webhand / {label}" for key, label in PEERS if key in data]
    header += ["webhand on Firefox / on Chromium"] if "webhand-ff" in data else []
    rows = []
    for step in (*STEPS, "click_navigates", "click_dom", "navigate_workers"):
        row = [step.replace("_navigates", " (navigates)").replace("_dom", " (DOM change)")
               .replace("navigate_workers", "navigate (page starts workers)")]
        for key in keys:
            cell = _get(data, key, "latency_ms", step)
            row.append(f"{_num(cell['median'])} / {_num(cell['p95'])}" if cell else "n/a")
        row += [_x(ratio(_median(r, "webhand", step), _median(r, key, step))) for key, _ in PEERS if key in data]
        row += [_x(ratio(_median(r, "webhand-ff", step), _median(r, "webhand", step)))] if "webhand-ff" in data else []
        rows.append(row)
    tokens = [[step] + [_num(_get(data, k, "reply_tokens", step, "median")) for k in keys] for step in STEPS]
    return ([f"## Action replies ({_get(r, 'actions', 'rounds')} rounds, servers interleaved)", "",
             "Client-side time of each reply, including the tool's own wait for the action's effects "
             "(login form: type, type, click that navigates; todo app: type, press Enter, click a checkbox; then a page "
             "that starts a dedicated, a shared and a service worker).", "",
             *_table(header, rows), "Reply size per step (median tokens the model reads back):", "",
             *_table(["step"] + [data[k]["label"] for k in keys], tokens), *_api_gap(r), *_in_process(r)])


def _api_gap(r: dict[str, Any]) -> list[str]:
    """What MCP adds to webhand's reply: the same steps on the same pages, in the same rounds."""
    if not _get(r, "actions", "servers", "webhand-api"):
        return []
    rows = []
    for step in STEPS:
        over_mcp, api = _median(r, "webhand", step), _median(r, "webhand-api", step)
        rows.append([step, _num(over_mcp), _num(api), _num(round(over_mcp - api, 1)) if over_mcp and api else "n/a"])
    return ["webhand over MCP next to its Python API on the same pages, in the same rounds (median ms):", "",
            *_table(["step", "over MCP (stdio)", "Python API", "MCP adds"], rows)]


def _in_process(r: dict[str, Any]) -> list[str]:
    found = _get(r, "actions", "in_process") or {}
    if not found:
        return []
    rows = [[action, f"{_num(v.get('median_ms'))} / {_num(v.get('p95_ms'))}", _num(_median(r, "webhand", action))]
            for action, v in found.items()]
    return ["webhand with no MCP in between (Python API, context isolation, `bench/action_latency.py`'s page, where every "
            "action changes the DOM):", "", *_table(["action", "median / p95 ms", "over MCP in the scenario above (median)"], rows)]


def _first_page(r: dict[str, Any]) -> list[str]:
    fp = r.get("first_page") or {}
    if not fp.get("mcp"):
        return []
    rows = [[v["label"], *(f"{_num(_get(v, c, 'median'))} / {_num(_get(v, c, 'p95'))}" for c in ("initialize", "tools_listed", "cold_first_call", "cold_total", "after_idle"))]
            for v in fp["mcp"].values()]
    api = fp.get("api") or {}
    api_rows = [[label, f"{_num(_get(api, c, 'median'))} / {_num(_get(api, c, 'p95'))}", _num(_get(api, c, "n"))]
                for c, label in (("process_cold", "process isolation, no reserve (browser launch)"),
                                 ("process_warm", "process isolation, warm reserve ready"), ("context", "context isolation"),
                                 ("firefox_process_cold", "Firefox: process isolation, no reserve (browser launch)"))
                if c in api]
    return ["## Time to the first page in a new session (median / p95 ms)", "",
            *_table(["server", "spawn → initialized", "spawn → tools listed", "first navigate right after", "cold: spawn → first page",
                     f"first navigate after {fp.get('idle_seconds')} s idle"], rows),
            "webhand's Python API, a new conversation's first browser_navigate:", "",
            *_table(["case", "median / p95 ms", "n"], api_rows)]


def _tools_list(r: dict[str, Any]) -> list[str]:
    variants = _get(r, "tools_list", "variants") or {}
    if not variants:
        return []
    rows = [[v["label"], str(v["tools"]), _num(v["chars"]), _num(v["tokens"]), _num(v["model_tokens"])] for v in variants.values()]
    missing = _get(r, "tools_list", "missing") or []
    return ["## tools/list size", "", *_table(["server", "tools", "chars", "tokens", "tokens (name+description+schema only)"], rows),
            *([f"Not measured: {'; '.join(missing)}.", ""] if missing else [])]


def _snapshots(r: dict[str, Any]) -> list[str]:
    snap = r.get("snapshots") or {}
    modes, pages = snap.get("modes") or {}, snap.get("pages") or {}
    if not pages:
        return []
    header = ["page"] + list(modes.values()) + ["interactive / PW chars", "full / PW chars", "PW-ref'd controls without a ref in interactive"]
    rows, times = [], []
    for page, row in pages.items():
        cells = []
        for mode in modes:
            cell = row.get(mode, {})
            cells.append("error" if "error" in cell else f"{_num(cell.get('tokens'))} ({_num(cell.get('chars'))})"
                         + (" ᶠ" if cell.get("to_file") else ""))
        pw = _get(row, "playwright:default", "chars")
        rows.append([page, *cells, _x(ratio(_get(row, "webhand:default", "chars"), pw)), _x(ratio(_get(row, "webhand:full", "chars"), pw)),
                     _num(_get(row, "webhand:default", "missing_vs_playwright"))])
        times.append([page, *(_num(_get(row, mode, "ms", "median")) for mode in modes)])
    shares = [[page, _num(row.get("page_words")), *(_share(_get(row, mode, "text_share")) for mode in modes)]
              for page, row in pages.items()]
    return ["## Snapshot size per page: tokens (characters)", "",
            "ᶠ webhand wrote this snapshot to a file (over its 40,000-byte reply limit) and replied with its path and a preview; "
            "the size shown is the file's. webhand interactive lists at most 200 refs by default (so on big pages it leaves "
            "controls out and says how many: the last column counts them, by role and name, against Playwright MCP's refs).", "",
            *_table(header, rows), "Snapshot time per page (median ms; the gen-N rows show how it grows with page size):", "",
            *_table(["page"] + list(modes.values()), times),
            "Page text each snapshot carries: of the distinct words (four letters or more) of the page's visible text, as its "
            "HTML has it, the share found in the snapshot. An interactive snapshot is small because it leaves the text out; "
            "the model then needs another call to read the page.", "",
            *_table(["page", "page words", *modes.values()], shares)]


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _mean_share(r: dict[str, Any], mode: str) -> float | None:
    values = [v for row in (_get(r, "snapshots", "pages") or {}).values() if (v := _get(row, mode, "text_share")) is not None]
    return sum(values) / len(values) if values else None


def _cli(r: dict[str, Any]) -> list[str]:
    cli = r.get("cli") or {}
    commands = cli.get("commands") or {}
    if not commands:
        return []
    rows = [[f"`{name}`", _num(_get(v, "wall_ms", "median"), 1), _num(_get(v, "wall_ms", "p95"), 1), _num(_get(v, "cpu_ms", "median"), 1),
             _x(v.get("wall_vs_python")) if "wall_vs_python" in v else "1.00× (the floor)",
             _x(v.get("cpu_vs_python")) if "cpu_vs_python" in v else "1.00×"] for name, v in commands.items()]
    return ["## A warm CLI command", "",
            f"Each CLI's daemon already running with one page open; the commands timed in turn, the order rotating, "
            f"{cli.get('rounds')} rounds, each run a whole process from spawn to exit (webhand: {cli.get('webhand_command')}; "
            f"agent-browser: its native client). Load average before / after: {cli.get('load_average_before')} / "
            f"{cli.get('load_average_after')}." + (f" Bytecode: {cli['bytecode']}." if cli.get("bytecode") else ""), "",
            *_table(["command", "median wall ms", "p95 wall ms", "median CPU ms", "wall vs python -c pass (median of pairs)",
                     "CPU vs python -c pass"], rows)]


def _buys_less(r: dict[str, Any]) -> list[str]:
    """Where a peer's figure (or webhand's) buys less than the number alone says."""
    out = []
    checks = {k: _get(r, "actions", "servers", k, "click_checks") or {} for k in (_get(r, "actions", "servers") or {})}
    for key, found in checks.items():
        if found:
            label = _get(r, "actions", "servers", key, "label") or key
            moved = found.get("moved_when_click_replied")
            out.append(f"- {label}: the click that signs in named the page it led to in {found.get('click_reply_names_new_page', 'n/a')} "
                       "replies" + (f"; the URL asked for right after its reply was already the new page's in {moved} rounds."
                                    if moved else "."))
    for mode, label in (("webhand:default", "webhand interactive"), ("webhand:full", "webhand full"),
                        ("playwright:default", "Playwright MCP"), ("devtools:default", "Chrome DevTools MCP"),
                        ("agent-browser:default", "agent-browser interactive (its default)"),
                        ("agent-browser:full", "agent-browser full")):
        share = _mean_share(r, mode)
        if share is not None:
            out.append(f"- {label} snapshot: carries {share * 100:.0f}% of the page's own words on average over the pages.")
    if not out:
        return []
    return ["## Where a figure buys less", "",
            "A fast or small reply is worth less when the model has to ask again. agent-browser's click replies "
            "`{\"clicked\": ...}` once the click is dispatched and names nothing of what changed, so the model's next call "
            "(a snapshot) has to find out; whether the page had moved by the time it replied is counted below. Playwright "
            "MCP's action figures include its fixed settle wait. Interactive snapshots (webhand's default, agent-browser's "
            "default) are small because they leave most of the page's text out: the share each carries is below, per page "
            "in the snapshot section; the full modes carry it all. "
            "Measured in this run:", "", *out, ""]


def _memory(r: dict[str, Any]) -> list[str]:
    peers = _get(r, "actions", "memory") or {}
    mem = r.get("memory") or {}
    out = ["## Memory per session (PSS, MB)", ""] if peers or mem.get("process") else []
    if peers:
        rows = [[v["label"], _num(v["browser_pss_mb"]), str(v["browser_processes"]), _num(v["server_pss_mb"])] for v in peers.values()]
        out += ["Each MCP server holding one session on the long article (webhand's total includes its warm-reserve browser):", "",
                *_table(["server", "browser processes PSS", "browser processes", "server process PSS"], rows)]
    if mem.get("process"):
        rows = [[label, _num(_get(mem, iso, "first_session_mb")), _num(_get(mem, iso, "each_more_mb"))]
                for iso, label in (("process", "process"), ("context", "context"), ("firefox_context", "context, on Firefox"))
                if iso in mem]
        out += [f"webhand's Python API, {mem.get('sessions')} sessions on {mem.get('page')}, no reserve:", "",
                *_table(["isolation", "first session", "each more session"], rows)]
    return out


def _scale(r: dict[str, Any]) -> list[str]:
    sc = r.get("scale") or {}
    ladders = [iso for iso in ("process", "context", "pool") if sc.get(iso)]
    if not ladders:
        return []
    names = {"process": "process", "context": "context", "pool": f"pool of {_get(sc, 'pool', 'endpoints') or 2} CDP endpoints"}
    rows = []
    for iso in ladders:
        for level in _get(sc, iso, "levels") or []:
            lat = level.get("latency_ms") or {}
            tools = ", ".join(f"{k} {_num((v or {}).get('p95'))}" for k, v in (level.get("by_tool_ms") or {}).items())
            rows.append([names[iso], str(level["sessions"]), _num(lat.get("median")), _num(lat.get("p95")), tools, str(level["errors"]),
                         _num(level["browser_pss_mb"]), _num(level.get("pss_per_session_mb"), 1),
                         ", ".join(str(x) for x in level.get("load_average") or []) or "n/a", "yes" if level["passed"] else "no"])
    best = ", ".join(f"{names[iso]}: {_num(_get(sc, iso, 'max_sessions_under_1s'))} ({_get(sc, iso, 'stopped')})" for iso in ladders)
    return ["## Concurrent sessions (webhand Python API)", "",
            f"Each session: {sc.get('actions')}, think time {sc.get('think_seconds')} s, all sessions at once, at least "
            f"{sc.get('min_samples_per_level')} actions per level, on {sc.get('cpus') or '?'} cores. Largest level with p95 < 1 s "
            f"and no error — {best}. The load average (1, 5, 15 min) is the machine's at the end of each level: anything "
            "else running makes these figures pessimistic.", "",
            *_table(["sessions on", "sessions", "p50 ms", "p95 ms", "p95 by tool, ms", "errors", "browser PSS MB",
                     "PSS per session MB", "load average", "p95 < 1 s"], rows)]


def write(results: dict[str, Any], out: Path, *, plots: bool = True) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "latest.json", out / "latest.md"]
    written[0].write_text(json.dumps(results, indent=1, sort_keys=False) + "\n")
    written[1].write_text(markdown(results))
    if plots:
        try:
            import plots as plotting

            written += plotting.draw(results, out)
        except Exception as error:  # noqa: BLE001 - the tables matter more than the pictures
            print(f"plots failed: {type(error).__name__}: {error}")
    return written


if __name__ == "__main__":  # re-render the tables and plots from a results file
    import sys

    source = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "results" / "latest.json")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    print("\n".join(str(p) for p in write(json.loads(source.read_text()), source.parent)))
