"""The ``webhand`` command: the catalog's tools (through the daemon), ``mcp``, ``daemon``,
``schema``, ``doctor`` and ``demo``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from webhand.errors import ConfigError, WebhandError
from webhand.surfaces.cli.tools import (
    BUILTINS,
    GLOBAL_OPTIONS,
    add_common_options,
    add_tool_commands,
    find_command,
    forward_to_running_daemon,
    load_specs,
    run_tool_command,
)

TYPE_CHECKING = False  # typing itself is not imported: a forwarded call must start fast
if TYPE_CHECKING:
    from typing import Any

    from webhand.config import Settings


def _run(coroutine: Any) -> Any:
    import asyncio  # here, not at the top: a call forwarded to the daemon does not need it

    return asyncio.run(coroutine)


def _caps_help() -> str:
    return f"capability groups, comma-separated: {','.join(load_specs()['capabilities'])} or all (default core)"


def _header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise SystemExit("webhand: --remote-header takes 'Name: value' (a value ${NAME} reads the variable NAME)")
    return name.strip(), value.strip()


def _remote_options(parser: argparse.ArgumentParser) -> None:
    """Where browsers come from, when not launched here (a pool is set in webhand.toml: [[pool.endpoints]])."""
    parser.add_argument("--cdp-url", help="connect to this browser over CDP (http(s):// or ws(s)://) instead of "
                        "launching one")
    parser.add_argument("--playwright-url", help="use the Playwright browser server at this ws(s):// URL")
    parser.add_argument("--remote-header", action="append", metavar="'NAME: VALUE'",
                        help="a header sent when connecting; write the value as ${VAR} so that the key does not "
                        "show in `ps`")
    parser.add_argument("--attach-existing-context", action="store_true",
                        help="with --cdp-url: drive that browser's own tabs, cookies and logins")
    parser.add_argument("--extension-bridge", action="store_true",
                        help="drive the tabs you share from the Chrome you run, through webhand's extension "
                        "(`webhand extension path`)")


def _flavor_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chromium-flavor", choices=["auto", "full", "headless-shell"],
                        help="Chromium build of a headless launch: the headless shell when installed (auto, the "
                        "default: half the CPU per tab), always the full browser, or always the shell")


def _settings(args: argparse.Namespace) -> Settings:
    from webhand.config import load_settings

    caps = getattr(args, "caps", None)
    flags = {"capabilities": caps.split(",") if caps else None, "isolation": getattr(args, "isolation", None),
             "executable_path": getattr(args, "chrome", None), "cdp_url": getattr(args, "cdp_url", None),
             "chromium_flavor": getattr(args, "chromium_flavor", None),
             "playwright_url": getattr(args, "playwright_url", None),
             "attach_to_existing_context": getattr(args, "attach_existing_context", None) or None,
             "extension_bridge": getattr(args, "extension_bridge", None) or None,
             "driver": getattr(args, "driver", None), "browser": getattr(args, "browser", None),
             "profile": getattr(args, "profile", None), "timeout": _timeout_setting(args),
             "storage_state": _storage_state(args),
             "headless": None if getattr(args, "headed", None) is None else not args.headed}
    headers = getattr(args, "remote_header", None)
    if headers:
        flags["remote_headers"] = dict(_header(text) for text in headers)
    return load_settings(config=getattr(args, "config", None), agent=getattr(args, "agent", None), flags=flags)


def _timeout_setting(args: argparse.Namespace) -> float | None:
    """``--timeout`` as the setting; for a tool that has a ``timeout`` of its own, that call's only."""
    spec = find_command(args.command) if getattr(args, "tool", None) else None
    return None if spec is not None and "timeout" in spec["fields"] else getattr(args, "timeout", None)


def _storage_state(args: argparse.Namespace) -> str | None:
    """``--storage-state FILE`` from the command's folder (the daemon runs in another); a tool's
    own ``storage_state`` field is that call's."""
    spec = find_command(args.command) if getattr(args, "tool", None) else None
    value = None if spec is not None and "storage_state" in spec["fields"] else getattr(args, "storage_state", None)
    return os.path.abspath(os.path.expanduser(value)) if value else None


def _daemon_args(args: argparse.Namespace) -> list[str]:
    """The settings this command gives as flags, for the daemon it starts."""
    extra = []
    if _storage_state(args):
        extra += ["--storage-state", str(_storage_state(args))]
    for name in ("config", "agent", "profile", "browser"):
        if getattr(args, name, None):
            extra += [f"--{name}", getattr(args, name)]
    if _timeout_setting(args) is not None:
        extra += ["--timeout", str(_timeout_setting(args))]
    if getattr(args, "headed", None) is not None:
        extra.append("--headed" if args.headed else "--headless")
    return extra


def config_origin(args: argparse.Namespace) -> dict[str, str]:
    """Where settings come from (config file, agent, profile), so the CLI can tell a daemon started
    with other settings."""
    from webhand.surfaces.cli.tools import settings_origin

    return settings_origin(args, os.getcwd(), os.environ)


def _cmd_mcp(args: argparse.Namespace) -> int:
    if args.port is None:
        from webhand.surfaces.mcp.startup.wire import StdioWire

        # Own the client's pipe now: `initialize` is answered while the settings, the browser and
        # the catalog load (surfaces/mcp/stdio.py tells the order).
        wire = StdioWire(args.tool_style).start()
        from webhand.engine.launch.subreaper import adopt_orphans

        adopt_orphans()  # a server owns its process: reap the browsers' orphans (engine/launch/subreaper.py)
        from webhand.engine.launch.launch_memo import memo_key
        from webhand.surfaces.mcp.stdio import serve

        started_as = {name: value for name, value in vars(args).items() if not callable(value)}
        _run(serve(lambda: _settings(args), wire, style=args.tool_style, dashboard=args.dashboard,
                   memo_key=memo_key([json.dumps(started_as, sort_keys=True)], os.getcwd(), dict(os.environ))))
        return 0
    from webhand.engine.launch.subreaper import adopt_orphans

    adopt_orphans()
    settings = _settings(args)
    from webhand.host import Webhand
    from webhand.surfaces.http_security import HttpOptions, check_options, read_token_file
    from webhand.surfaces.mcp.streamable_http import serve_http, settings_for_address

    if args.token and args.token_file:
        raise ConfigError("Both --token and --token-file were given.", "Keep --token-file (a flag's value shows in ps).")
    if args.token:
        import logging

        logging.getLogger("webhand").warning("--token is visible to every local user in `ps`: prefer --token-file "
                                             "PATH or the WEBHAND_TOKEN variable.")
    token = read_token_file(args.token_file) if args.token_file else args.token or os.environ.get("WEBHAND_TOKEN")
    options = HttpOptions(host=args.host, port=args.port, token=token or None, require_token=args.require_token,
                          allowed_hosts=args.allow_host or [], allowed_origins=args.allow_origin or [],
                          max_body_bytes=args.max_body_bytes, style=args.tool_style)
    check_options(options)  # refuse before anything starts
    _run(serve_http(Webhand(settings_for_address(settings, options.host)), options))
    return 0


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from webhand.surfaces.cli import daemon_client

    settings = _settings(args)
    reply = daemon_client.request({"op": "dashboard", "port": args.port}, timeout=settings.timeout,
                                  start=_daemon_args(args), launch_timeout=settings.launch_timeout)
    if not reply.get("ok"):
        raise ConfigError(f"The daemon could not serve the dashboard: {reply.get('error')}.",
                          "Pick another --port, or run `webhand daemon stop` and try again.")
    print(f"webhand dashboard: {reply['url']} (the CLI's sessions; served by the daemon on loopback until it exits)")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from webhand.surfaces.cli.history import run_export

    return run_export(args, _settings(args))


def _cmd_replay(args: argparse.Namespace) -> int:
    from webhand.surfaces.cli.history import run_replay

    return run_replay(args, _settings(args))


def _cmd_profile(args: argparse.Namespace) -> int:
    from webhand.surfaces.cli.profiles import run_profile

    return run_profile(args, lambda: _settings(args))


def _cmd_demo(args: argparse.Namespace) -> int:
    from webhand.surfaces.cli.demo import run_demo

    return _run(run_demo())


def _cmd_doctor(args: argparse.Namespace) -> int:
    from webhand.surfaces.cli.doctor import run_doctor

    return _run(run_doctor(_settings(args)))


def _cmd_browsers(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from webhand.engine.launch.running_browsers import describe, find_running_browsers

    found = find_running_browsers()
    if args.json:
        print(json.dumps([asdict(b) | {"cdp_url": b.cdp_url} for b in found], indent=1))
    else:
        print("\n".join(describe(found)))
    return 0


def _cmd_extension(args: argparse.Namespace) -> int:
    from webhand.security.pairing import extension_folder, pairing_token

    if args.action == "path":
        print(extension_folder())
    else:
        print(pairing_token())
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from webhand.surfaces.schemas import definitions
    from webhand.tools import enabled_tools

    settings = _settings(args)
    if args.stats:
        from webhand.surfaces.mcp.sizes import size_report

        print(size_report(settings))
        return 0
    tools = enabled_tools(settings)
    print(json.dumps(definitions(tools, args.format, style=args.tool_style), indent=1, ensure_ascii=False))
    return 0


def _cmd_daemon(args: argparse.Namespace) -> int:
    from webhand.surfaces.cli import daemon_client
    from webhand.surfaces.cli.daemon import run_daemon

    if args.action == "run":
        return run_daemon(_settings(args), announce=not args.foreground, origin=config_origin(args))
    if args.action == "start":
        settings = _settings(args)
        reply = daemon_client.request({"op": "status"}, timeout=settings.timeout, start=_daemon_args(args),
                                      launch_timeout=settings.launch_timeout)
        print(f"webhand daemon running (pid {reply['status']['pid']}, socket {reply['status']['socket']}).")
        return 0
    if args.action == "stop":  # returns once the daemon has exited: the next command starts a new one
        print("webhand daemon stopped; its browsers are closed." if daemon_client.stop() else "webhand daemon is not running.")
        return 0
    try:
        reply = daemon_client.request({"op": args.action}, timeout=30.0)
    except daemon_client.DaemonUnavailable:
        print("webhand daemon is not running.")
        return 3
    if args.json:
        print(json.dumps(reply["status"], indent=1))
    else:
        status = reply["status"]
        print(f"webhand daemon running: pid {status['pid']}, up {status['uptime_seconds']} s, "
              f"{len(status['sessions'])} session(s), exits after {status['idle_timeout']:g} s idle.")
        for session in status["sessions"]:
            print(f"  {session['session']}: {session['url'] or '(no page)'} ({session['tabs']} tab(s))")
            if session.get("control"):
                control = session["control"]
                print(f"    {control['by']} has control since "
                      f"{time.strftime('%H:%M:%S UTC', time.gmtime(control['since']))} ({control['seconds']:.0f} s). "
                      f"{control['release']}")
    return 0


def build_parser(only: str | None = None, *, tools: bool = True) -> argparse.ArgumentParser:
    """The whole parser; with ``only`` (a tool command), just that command's, which parses and
    reports errors alike at a fraction of the cost. ``tools=False``: without the tool commands
    (about 15 ms of CPU), for a built-in command such as ``mcp``, whose start-up is timed."""
    parser = argparse.ArgumentParser(prog="webhand", description="A real headless Chromium for AI agents, as tools. "
                                     "`webhand navigate URL`, `webhand snapshot`, `webhand click e3` ... keep one "
                                     "browser between calls (a background daemon holds it).")
    parser.add_argument("-V", "--version", action="store_true",
                        help="print webhand's version and exit (global options such as --config, --agent, "
                             "--session and --json may also come before the command)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if only is not None:
        add_tool_commands(sub, only)
        return parser

    mcp = sub.add_parser("mcp", help="serve the tools over MCP: stdio, or streamable HTTP with --port")
    mcp.add_argument("--caps", help=_caps_help())
    mcp.add_argument("--tool-style", choices=["multi", "single"], default="multi",
                     help="multi: one tool per operation; single: one `browser` tool with an `action` field")
    mcp.add_argument("--port", type=int, help="serve streamable HTTP on this port (path /mcp); 0 picks a free one")
    mcp.add_argument("--dashboard", action="store_true",
                     help="over stdio: also serve the dashboard (live view, takeover) on a free 127.0.0.1 port, behind "
                          "your dashboard token; its link is printed on stderr. Over HTTP it is always at /dashboard")
    mcp.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; others need a token)")
    mcp.add_argument("--token-file", metavar="PATH",
                     help="file holding the bearer token clients must send (or set WEBHAND_TOKEN); prefer either "
                          "to --token")
    mcp.add_argument("--token", help="the bearer token itself; avoid: every local user sees it in `ps`. Prefer "
                                     "--token-file or WEBHAND_TOKEN")
    mcp.add_argument("--require-token", action="store_true",
                     help="require the token on loopback too (without it, any local user can drive the server)")
    mcp.add_argument("--allow-host", action="append", help="another allowed Host header, e.g. myhost:8931 or myhost:*")
    mcp.add_argument("--allow-origin", action="append", help="another allowed Origin, e.g. https://app.example")
    mcp.add_argument("--max-body-bytes", type=int, default=4 * 1024 * 1024, help="largest request body (default 4 MiB)")
    mcp.add_argument("--isolation", choices=["process", "context"])
    mcp.add_argument("--chrome", help="path of the Chromium binary")
    _flavor_option(mcp)
    _remote_options(mcp)
    mcp.add_argument("--driver", choices=["cdp", "playwright", "firefox"],
                     help="Chromium over raw CDP (default) or through Playwright, or Firefox over WebDriver BiDi")
    add_common_options(mcp)
    mcp.set_defaults(run=_cmd_mcp)

    daemon = sub.add_parser("daemon", help="the background daemon that keeps CLI sessions: start, stop, status")
    daemon.add_argument("action", choices=["start", "stop", "status", "run"])
    daemon.add_argument("--foreground", action="store_true", help="with run: do not announce on stdout")
    add_common_options(daemon)
    daemon.set_defaults(run=_cmd_daemon)

    schema = sub.add_parser("schema", help="print function-calling definitions of the tools")
    schema.add_argument("--format", choices=["openai", "anthropic", "mcp"], default="openai")
    schema.add_argument("--tool-style", choices=["multi", "single"], default="multi")
    schema.add_argument("--caps", help=_caps_help())
    schema.add_argument("--stats", action="store_true", help="print the size of tools/list per style instead")
    add_common_options(schema)
    schema.set_defaults(run=_cmd_schema)

    doctor = sub.add_parser("doctor", help="find Chromium, launch it, report versions and what is wrong")
    doctor.add_argument("--chrome", help="path of the Chromium binary")
    _flavor_option(doctor)
    _remote_options(doctor)
    doctor.add_argument("--driver", choices=["cdp", "playwright", "firefox"],
                        help="Chromium over raw CDP (default) or through Playwright, or Firefox over WebDriver BiDi")
    add_common_options(doctor)
    doctor.set_defaults(run=_cmd_doctor)

    browsers = sub.add_parser("browsers", help="list the Chrome, Chromium, Edge and Brave browsers here that expose "
                              "DevTools, and whether each can be attached (cdp_url)")
    add_common_options(browsers)
    browsers.set_defaults(run=_cmd_browsers)

    extension = sub.add_parser("extension", help="the browser extension that shares tabs of the Chrome you run: "
                               "`path` prints its folder (for Load unpacked), `pair` its pairing token")
    extension.add_argument("action", choices=["path", "pair"])
    add_common_options(extension)
    extension.set_defaults(run=_cmd_extension)

    dashboard = sub.add_parser("dashboard", help="serve the dashboard of the CLI's sessions (live view, history, "
                               "takeover) on 127.0.0.1; `webhand mcp --port` serves it at /dashboard too")
    dashboard.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    add_common_options(dashboard)
    dashboard.set_defaults(run=_cmd_dashboard)

    export = sub.add_parser("export", help="write a session's actions as a script that runs on a fresh page")
    export.add_argument("session", nargs="?", help="a CLI session name (its history, from the daemon) or a history "
                                                   "file (.jsonl, or browser_session_history's JSON)")
    export.add_argument("--flow", metavar="NAME", help="export this saved flow (its name, or a flow file) instead of "
                                                     "a session")
    export.add_argument("--format", choices=["python", "cli", "json", "playwright", "playwright-pytest"], default=None,
                        help="json (default for a session), python or cli (on webhand); playwright (default for a flow) "
                             "or playwright-pytest: a script on Playwright for Python alone")
    export.add_argument("-o", "--output", help="file to write (default: standard output)")
    add_common_options(export)  # its secrets file masks what the export writes
    export.set_defaults(run=_cmd_export)

    replay = sub.add_parser("replay", help="rerun a JSON export or a flow file on a fresh browser; report the first "
                            "step that differs")
    replay.add_argument("file")
    replay.add_argument("--param", action="append", metavar="NAME=VALUE", help="a flow's parameter (repeatable)")
    replay.add_argument("--update", action="store_true", help="write the ways that found healed elements back into "
                        "the flow file")
    add_common_options(replay)
    replay.set_defaults(run=_cmd_replay)

    from webhand.surfaces.cli.profiles import add_profile_command

    add_profile_command(sub, add_common_options, _cmd_profile)

    demo = sub.add_parser("demo", help="drive a scripted agent session against a bundled local site")
    add_common_options(demo)
    demo.set_defaults(run=_cmd_demo)

    help_command = sub.add_parser("help", help="this help, or one topic's: a command or a group")
    help_command.add_argument("topic", nargs="?")
    help_command.set_defaults(run=_cmd_help)

    if tools:
        add_tool_commands(sub)
    return parser


#: Options of some commands that may come before the command too (``webhand --caps all schema``).
_MOVABLE_OPTIONS = {**GLOBAL_OPTIONS, "--caps": True, "--driver": True, "--chrome": True, "--tool-style": True}


def command_first(argv: list[str]) -> list[str]:
    """The command line with the options given before the command moved to the end of its own
    (before a ``--``), where argparse reads them: each command's parser owns its options.
    Cheap: no parser is built for it."""
    moved: list[str] = []
    at = 0
    while at < len(argv) and argv[at].split("=", 1)[0] in _MOVABLE_OPTIONS:
        takes_value = _MOVABLE_OPTIONS[argv[at].split("=", 1)[0]] and "=" not in argv[at]
        moved += argv[at:at + 1 + takes_value]
        at += 1 + takes_value
    if not moved or at >= len(argv) or argv[at].startswith("-"):
        return argv  # nothing moved, or no command follows: argparse says what is wrong
    rest = argv[at:]
    end = rest.index("--") if "--" in rest else len(rest)
    return [*rest[:end], *moved, *rest[end:]]


def _cmd_help(args: argparse.Namespace) -> int:
    from webhand.surfaces.cli.help import command_names, topic_help

    if args.topic in command_names():  # the command's own help, as `webhand COMMAND --help` prints it
        spec = find_command(args.topic)
        name = spec["command"] if spec else args.topic
        build_parser(only=name if spec else None, tools=spec is not None).parse_args([name, "--help"])

    text, code = topic_help(args.topic)
    (sys.stdout if code == 0 else sys.stderr).write(text)
    return code


def main(argv: list[str] | None = None) -> int:
    argv = command_first(sys.argv[1:] if argv is None else list(argv))
    if argv[:1] in (["--version"], ["-V"]):
        from webhand import __version__

        print(f"webhand {__version__}")
        return 0
    spec = find_command(argv[0]) if argv else None
    if spec is not None:  # a tool command: a running daemon answers it without loading the catalog or settings
        args = build_parser(only=spec["command"]).parse_args(argv)
        try:
            code = forward_to_running_daemon(args, config_origin(args))
        except WebhandError as error:
            print(f"webhand: {error}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130
        if code is not None:
            return code
    return _main(argv)


def _main(argv: list[str]) -> int:
    import logging

    from webhand.surfaces.cli.help import overview, unknown_command

    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(overview())
        return 0 if argv else 2
    if not argv[0].startswith("-") and (refusal := unknown_command(argv[0])):
        sys.stderr.write(refusal)
        return 2

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="webhand: %(message)s")
    args = build_parser(tools=not (argv and argv[0] in BUILTINS and argv[0] != "help")).parse_args(argv)
    try:
        if args.run is None:  # a tool command, and no daemon runs yet: start one with these settings
            settings = _settings(args)
            return run_tool_command(args, _daemon_args(args), settings.launch_timeout, settings.timeout,
                                    config_origin(args))
        return int(args.run(args) or 0)
    except WebhandError as error:
        print(f"webhand: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


__all__ = ["BUILTINS", "add_common_options", "build_parser", "main"]
