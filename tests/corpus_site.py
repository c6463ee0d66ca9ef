"""The real-page corpus, served on 127.0.0.1: pages nobody on this team wrote, from the registries.

- ``/miniwob/…``  MiniWoB++'s task pages, from the PyPI package ``miniwob`` (its ``html`` folder,
  the one holding ``core/core.js``).
- ``/pydoc/…``    Python's HTML documentation, from Debian's ``python3-doc``.
- ``/swagger/…``  Swagger UI, a client-rendered single-page app, from npm ``swagger-ui-dist``
  (installed into tests/corpus/node_modules by ``make test``). Files in tests/corpus/swagger/
  are laid over it: its configuration (which spec to load) and the OpenAPI document it fetches.
- ``/aggrid/…``   AG Grid Community, a virtualised data grid, from npm ``ag-grid-community`` (its
  UMD bundle, same install); tests/corpus/aggrid/index.html lays a grid of runs over it.

``make test`` installs all three (see the Makefile's ``corpus`` target). Each ``*_ROOT`` is None
when that part is missing, and ``missing_reason`` says how to get it; the tests skip with it.
"""

from __future__ import annotations

import http.server
import json
import re
from pathlib import Path

from harness import evaluate, tab_of
from helpers import Site
from webhand.engine.driver import Tab

CORPUS = Path(__file__).parent / "corpus"
PYDOC_HTML = Path("/usr/share/doc/python3-doc/html")
SWAGGER_DIST = CORPUS / "node_modules" / "swagger-ui-dist"
SWAGGER_OVERLAY = CORPUS / "swagger"
AGGRID_DIST = CORPUS / "node_modules" / "ag-grid-community" / "dist"
AGGRID_OVERLAY = CORPUS / "aggrid"


def miniwob_html() -> Path | None:
    try:
        import miniwob
    except ImportError:
        return None
    folder = Path(miniwob.__file__).parent / "html"
    return folder if (folder / "core" / "core.js").is_file() else None


def missing_reason(part: str) -> str | None:
    """Why a part of the corpus cannot be served here (and how to install it), or None."""
    if part == "miniwob" and miniwob_html() is None:
        return "MiniWoB++ is not installed: run `make test` (it installs the test extra, which pins `miniwob`)"
    if part == "pydoc" and not (PYDOC_HTML / "library" / "stdtypes.html").is_file():
        return "Python's HTML docs are missing: run `make test` as root (it installs Debian's python3-doc)"
    if part == "swagger" and not (SWAGGER_DIST / "swagger-ui-bundle.js").is_file():
        return "swagger-ui-dist is missing: run `make test` (it runs `npm ci` in tests/corpus; needs npm)"
    if part == "aggrid" and not (AGGRID_DIST / "ag-grid-community.min.js").is_file():
        return "ag-grid-community is missing: run `make test` (it runs `npm ci` in tests/corpus; needs npm)"
    return None


class _CorpusHandler(http.server.SimpleHTTPRequestHandler):
    """Static files from the mounted folders; the first folder of a mount that has the file wins."""

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        for prefix, folders in _mounts().items():
            if clean.startswith(prefix):
                rest = clean[len(prefix):]
                for folder in folders:
                    # The parent class resolves the URL path safely (no ..) under self.directory.
                    self.directory = str(folder)
                    candidate = super().translate_path("/" + rest)
                    if Path(candidate).exists():
                        return candidate
                return candidate
        return str(CORPUS / "not-found")


def _mounts() -> dict[str, list[Path]]:
    mounts: dict[str, list[Path]] = {"/pydoc/": [PYDOC_HTML], "/swagger/": [SWAGGER_OVERLAY, SWAGGER_DIST],
                                      "/aggrid/": [AGGRID_OVERLAY, AGGRID_DIST]}
    folder = miniwob_html()
    if folder is not None:
        mounts["/miniwob/"] = [folder]
    return mounts


class CorpusSite(Site):
    def __init__(self) -> None:
        super().__init__(_CorpusHandler)

    def miniwob(self, task: str) -> str:
        return self.url(f"miniwob/miniwob/{task}.html")

    def pydoc(self, page: str) -> str:
        return self.url(f"pydoc/{page}")

    def swagger(self) -> str:
        return self.url("swagger/index.html")

    def aggrid(self) -> str:
        return self.url("aggrid/index.html")


def miniwob_tasks() -> list[str]:
    folder = miniwob_html()
    return sorted(p.stem for p in (folder / "miniwob").glob("*.html")) if folder else []


# ---------------------------------------------------------------------------------------------
# A snapshot's control lines, as the snapshot contract writes them:
#   role "accessible name" [e12] state state key=value …   (the name is a JSON string)

CONTROL_LINE = re.compile(r'^(?P<indent> *)(?P<role>[A-Za-z][\w-]*)(?: (?P<name>"(?:[^"\\]|\\.)*"))? '
                          r'\[(?P<ref>(?:f\d+)?e\d+)\](?P<rest>.*)$')


def controls(snapshot: str) -> list[dict[str, str]]:
    """Every ref'd line: role, name ("" when it has none), ref, and the rest of the line (states)."""
    found = []
    for line in snapshot.splitlines():
        match = CONTROL_LINE.match(line)
        if match:
            name = json.loads(match["name"]) if match["name"] else ""
            found.append({"role": match["role"], "name": name, "ref": match["ref"], "rest": match["rest"].strip(),
                          "line": line.strip()})
    return found


async def snapshot_text(tools, **arguments: object) -> str:
    """The whole default snapshot, also when it was too big for the reply and went to a file."""
    reply = await tools.call("browser_snapshot", dict(arguments))
    assert not reply.is_error, reply.text
    saved = [f for f in reply.files if f.endswith(".txt")]
    return Path(saved[0]).read_text() if saved else reply.text


def fold(text: str) -> str:
    """Whitespace runs folded to one space, as the snapshot and Chromium's names are compared."""
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------
# The harness side of a MiniWoB++ episode (the test's own hands, never the agent's eyes)

#: Plenty of time per episode: MiniWoB's default is 10 s, and this 2-core machine runs other tests
#: at the same time. The benchmark's question here is whether the task can be read and done.
EPISODE_MS = 120_000


async def open_task(webhand, tools, site: CorpusSite, task: str) -> Tab:
    """Navigate to a MiniWoB++ task and seed its random generator, so the episode repeats run to run.

    Returns the tab, for the harness's own reads (``instruction``, ``reward``)."""
    reply = await tools.call("browser_navigate", {"url": site.miniwob(task)})
    assert not reply.is_error, reply.text
    tab = await tab_of(webhand, tools)
    await evaluate(tab, "([seed, ms]) => { Math.seedrandom(seed); core.EPISODE_MAX_TIME = ms; }",
                   [f"webhand-{task}", EPISODE_MS])
    return tab


async def instruction(tab: Tab) -> str:
    """The task's instruction as MiniWoB states it: the #query text, whitespace folded."""
    return fold(await evaluate(tab, "() => document.getElementById('query').textContent"))


async def reward(tab: Tab) -> dict:
    """What core.js recorded for the episode that ended (WOB_* globals)."""
    return await evaluate(tab, "() => ({done: WOB_DONE_GLOBAL, reward: WOB_REWARD_GLOBAL, raw: WOB_RAW_REWARD_GLOBAL, "
                               "reason: WOB_REWARD_REASON, episodes: WOB_EPISODE_ID})")
