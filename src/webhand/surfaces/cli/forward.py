"""The ``webhand`` command's entry point: a tool command goes to a running daemon as typed.

Coding agents call the CLI once per step, so a warm call should cost little more than Python's
own start. This path imports ``daemon_wire`` (the socket and json's C parts) and the runtime
folder's check, nothing else of webhand's or of the standard library's Python layer: the daemon,
which has the parser and the catalog loaded already, parses the command line in the caller's
directory and environment and answers with what to print. Everything else (no daemon running, a
command that is not a tool, ``--help``, an option before the command) goes to the full CLI,
``main.main``. No ``from __future__``: importing it is a cost this module does not need.
"""

import os
import sys

#: The environment the daemon needs to read a command line as this process would.
_FORWARDED_ENV = ("WEBHAND_SESSION", "WEBHAND_AGENT", "WEBHAND_CONFIG", "WEBHAND_PROFILE", "WEBHAND_DRIVER",
                  "WEBHAND_BROWSER", "WEBHAND_HEADLESS", "WEBHAND_STORAGE_STATE", "HOME", "XDG_CONFIG_HOME")
#: The fast path bounds its wait by the longest timeout a config allows (600 s) plus a margin;
#: the daemon ends each call at the call's own timeout.
_LONGEST_WAIT_SECONDS = 630.0


def main() -> int:
    argv = sys.argv[1:]
    if argv and not argv[0].startswith("-") and "-h" not in argv and "--help" not in argv:
        code = _forward(argv)
        if code is not None:
            return code
    from webhand.surfaces.cli.main import main as full_cli

    return full_cli(argv)


def _forward(argv: list[str]) -> "int | None":
    """Exit status of the command run by the daemon; None when none runs or argv is no tool command."""
    from webhand.surfaces.cli.daemon_wire import connect, decode, exchange

    env = {name: os.environ[name] for name in _FORWARDED_ENV if name in os.environ}
    payload = {"op": "argv", "argv": argv, "cwd": os.getcwd(), "env": env}
    try:
        sock = connect(_LONGEST_WAIT_SECONDS)
        if sock is None:
            return None
        try:
            line = exchange(sock, payload, _LONGEST_WAIT_SECONDS, progress=sys.stderr.isatty())
        finally:
            sock.close()
        if not line:
            raise EOFError
        reply = decode(line)
    except KeyboardInterrupt:
        return 130
    except (OSError, EOFError) as problem:  # what the full client says of it (it imports more, only now)
        from webhand.surfaces.cli.daemon_client import unavailable

        print(f"webhand: {unavailable(problem, _LONGEST_WAIT_SECONDS)}", file=sys.stderr)
        return 1
    except Exception as error:  # a runtime folder that is not private: WebhandError, said as the full CLI says it
        from webhand.errors import WebhandError

        if not isinstance(error, WebhandError):
            raise
        print(f"webhand: {error}", file=sys.stderr)
        return 1
    if not reply.get("ok"):  # a daemon from before this request existed: the full CLI still works
        return None
    if not reply.get("handled"):
        return None
    sys.stdout.write(reply.get("stdout") or "")
    sys.stderr.write(reply.get("stderr") or "")
    return int(reply.get("exit", 1))


if __name__ == "__main__":
    raise SystemExit(main())
