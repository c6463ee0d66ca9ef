"""The ``webhand`` command."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from webhand.config import Settings
from webhand.errors import WebhandError


def _settings(args: argparse.Namespace) -> Settings:
    flags = {"capabilities": args.caps.split(",") if getattr(args, "caps", None) else None,
             "isolation": getattr(args, "isolation", None), "executable_path": getattr(args, "chrome", None)}
    return Settings.from_sources({k: v for k, v in flags.items() if v is not None})


def _cmd_mcp(args: argparse.Namespace) -> int:
    from webhand.host import Webhand
    from webhand.surfaces.mcp import serve_stdio

    asyncio.run(serve_stdio(Webhand(_settings(args))))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from webhand.demo import run_demo

    return asyncio.run(run_demo())


def _cmd_doctor(args: argparse.Namespace) -> int:
    from webhand.doctor import run_doctor

    return asyncio.run(run_doctor(_settings(args)))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="webhand", description="A real headless Chromium for AI agents, as tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    mcp = sub.add_parser("mcp", help="serve the tools over MCP (stdio)")
    mcp.add_argument("--caps", help="capability groups, comma-separated (core,tabs,storage,files,pdf,sessions,network or all)")
    mcp.add_argument("--isolation", choices=["process", "context"])
    mcp.add_argument("--chrome", help="path of the Chromium binary")
    mcp.set_defaults(run=_cmd_mcp)
    demo = sub.add_parser("demo", help="drive a scripted agent session against a bundled local site")
    demo.set_defaults(run=_cmd_demo)
    doctor = sub.add_parser("doctor", help="find Chromium, launch it, report what is wrong")
    doctor.add_argument("--chrome", help="path of the Chromium binary")
    doctor.set_defaults(run=_cmd_doctor)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="webhand: %(message)s")
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except WebhandError as error:
        print(f"webhand: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
