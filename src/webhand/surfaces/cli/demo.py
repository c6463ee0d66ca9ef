"""``webhand demo``: a scripted agent session against a bundled local site, through MCP.

It is what a host does: start ``webhand mcp`` as a subprocess, speak MCP to it with the official
client, and call tools the way a model would — reading refs out of the snapshot text rather than
knowing them in advance. Every call and its reply is printed; the screenshot stays on disk.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

from mcp import ClientSession, StdioServerParameters, stdio_client


@contextmanager
def serve_demo_site() -> Iterator[str]:
    """Serve the bundled site on 127.0.0.1 (a free port) and yield its URL."""
    with resources.as_file(resources.files("webhand").joinpath("surfaces", "cli", "demo_site")) as folder:
        handler = type("DemoHandler", (http.server.SimpleHTTPRequestHandler,), {
            "log_message": lambda *args: None,
            "__init__": lambda self, *a, **k: http.server.SimpleHTTPRequestHandler.__init__(self, *a, directory=str(folder), **k),
        })
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
        finally:
            server.shutdown()
            server.server_close()


def _ref(snapshot: str, role: str, name: str) -> str:
    match = re.search(rf'{role} "{re.escape(name)}" \[(\w+)\]', snapshot)
    if not match:
        raise RuntimeError(f"the snapshot has no {role} named {name!r}:\n{snapshot}")
    return match.group(1)


async def run_agent_session(url: str, output_dir: Path, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Drive one agent session over MCP stdio; return what a test needs to check it."""
    env = {**os.environ, "WEBHAND_OUTPUT_DIR": str(output_dir)}
    server = StdioServerParameters(command=sys.executable, args=["-m", "webhand", "mcp"], env=env)
    seen: dict[str, Any] = {}
    async with stdio_client(server) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        tools = await mcp.list_tools()
        seen["tools"] = [t.name for t in tools.tools]
        say(f"• connected to webhand over MCP stdio: {len(tools.tools)} tools")

        async def call(name: str, arguments: dict[str, Any]) -> str:
            say(f"\n→ {name} {arguments}")
            result = await mcp.call_tool(name, arguments)
            text = "\n".join(block.text for block in result.content if block.type == "text")
            images = [block for block in result.content if block.type == "image"]
            shown = text if len(text) < 1200 else text[:1200] + " …"
            say("← " + shown.replace("\n", "\n  ") + (f"\n  [+{len(images)} image]" if images else ""))
            if result.is_error:
                raise RuntimeError(f"{name} failed: {text}")
            seen[name] = text
            return text

        await call("browser_navigate", {"url": url})
        page = await call("browser_snapshot", {})
        await call("browser_type", {"ref": _ref(page, "textbox", "Your name"), "text": "Ada Lovelace"})
        await call("browser_type", {"ref": _ref(page, "textbox", "Email"), "text": "ada@example.org"})
        await call("browser_click", {"ref": _ref(page, "button", "Create ticket")})
        after = await call("browser_snapshot", {})
        found = re.search(r"^\s*status: (.*)$", after, re.M)
        seen["result"] = found.group(1) if found else ""
        shot = await call("browser_take_screenshot", {"full_page": True})
        seen["screenshot"] = re.search(r"saved to (\S+\.png)", shot).group(1)
        await call("browser_close", {})
    return seen


async def run_demo() -> int:
    output = Path(os.environ.get("WEBHAND_OUTPUT_DIR") or Path.cwd() / "webhand-output").resolve()
    with serve_demo_site() as url:
        print(f"• demo site on {url}")
        seen = await run_agent_session(url, output)
    print(f"\n✓ the agent created a ticket: {seen['result']}")
    print(f"✓ screenshot: {seen['screenshot']}")
    print(next_steps())
    return 0


def next_steps() -> str:
    """What to run after the demo; first how to reach the `webhand` command when it is not on PATH
    (after `make demo` it is in .venv/bin, which a fresh shell does not have)."""
    command = Path(sys.executable).with_name("webhand")
    on_path = shutil.which("webhand") == str(command)
    reach = "" if on_path else (f"\n  . {command.parent / 'activate'}   # puts webhand (and this Python) on PATH"
                                 f" in this shell; or call {command} directly")
    return (f"\nNext:{reach}\n  webhand --help                 # the commands, grouped"
            f"\n  python examples/pydantic_ai_agent.py   # an agent framework on the same site, no API key needed")
