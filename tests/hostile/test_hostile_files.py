"""The file-escape table: every file-taking tool against every way out of a conversation's folders.

A conversation may reach its own folder and the roots the user shared, nothing else. Each row is
one attempt: a tool (reading or writing) and a path that tries to get out: ``..``, absolute
paths, symlinks, ``~``, invalid paths, another conversation's files (knowing their path), and the
working directory that the old default roots included. A row passes when the tool refused it
with the expected typed error and nothing leaked: no outside content reached the model, the page
or the cookies, and no file outside was created or changed.

The counts are printed by the last test; run ``pytest -s tests/hostile/test_hostile_files.py``.
"""

from __future__ import annotations

import io
import json
import os
import struct
import uuid
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from helpers import settings_for_tests
from webhand import Settings, Webhand
from webhand.host import Conversation

# -- the world the attempts run in ---------------------------------------------------------------


@dataclass
class World:
    outside: Path       # a folder outside every root, holding canaries
    shared: Path        # the root the user shared (tests/helpers.py configures one)
    victim: Conversation  # another conversation, whose files the attacker knows the paths of
    victim_shot: Path
    victim_state: Path
    cwd: Path           # the working directory, for the webhand with default settings


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(out, "PNG")
    return out.getvalue()


CANARY_STATE = {"cookies": [{"name": "canary", "value": "leaked", "domain": "127.0.0.1", "path": "/", "expires": -1,
                             "httpOnly": False, "secure": False, "sameSite": "Lax"}], "origins": []}


def _plant_canaries(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "canary.png").write_bytes(_png())
    (folder / "canary.json").write_text(json.dumps(CANARY_STATE))
    (folder / "existing.txt").write_text("original")


@pytest.fixture(scope="module")
async def world(webhand: Webhand, site, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    outside = tmp_path_factory.mktemp("outside-every-root")
    _plant_canaries(outside)
    cwd = tmp_path_factory.mktemp("working-directory")
    _plant_canaries(cwd)
    shared = webhand.settings.roots[0]
    link = shared / "link-out"
    if not link.exists():
        link.symlink_to(outside, target_is_directory=True)

    victim = webhand.conversation(f"victim-{uuid.uuid4().hex[:8]}")
    await victim.call("browser_navigate", {"url": site.url("tabs_files/account.html")})
    await victim.call("browser_click", {"selector": "#login"})
    saved = await victim.call("browser_storage_state", {"action": "save", "path": "login.json"})
    assert not saved.is_error, saved.text
    shot = await victim.call("browser_take_screenshot", {})
    assert not shot.is_error, shot.text
    yield World(outside, shared, victim, Path(shot.images[0].path), victim.files.folder / "login.json", cwd)
    await webhand.end_conversation(victim.conversation_id)


@pytest.fixture(scope="module")
async def default_webhand(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Webhand]:
    """A webhand with the default file settings (no roots): what `webhand mcp` started in any folder has."""
    settings = settings_for_tests(tmp_path_factory, roots=[], warm_reserve=False)
    async with Webhand(settings) as wh:
        yield wh


def _plant_symlinks(folder: Path, outside: Path) -> None:
    """Symlinks inside the attacker's own folder that point out of it."""
    (folder / "link-out").symlink_to(outside, target_is_directory=True)
    (folder / "existing.txt").symlink_to(outside / "existing.txt")


# -- the attacks -----------------------------------------------------------------------------------
# Each builds the path from the world, the attacker's own folder and the file it wants: the
# canary it tries to read (canary.png or canary.json) or the name of a file it tries to write.

Attack = Callable[[World, Path, str], str]
LONG_PATH = "/".join(["a" * 200] * 25)  # 5,024 bytes, over PATH_MAX


def _victim_file(world: World, name: str) -> Path:
    return world.victim_state if name.endswith(".json") else world.victim_shot


READ_ATTACKS: dict[str, tuple[Attack, str]] = {
    "dot-dot out": (lambda w, own, name: os.path.relpath(w.outside / name, own), "PolicyRefused"),
    "absolute /etc/passwd": (lambda w, own, name: "/etc/passwd", "PolicyRefused"),
    "absolute path out": (lambda w, own, name: str(w.outside / name), "PolicyRefused"),
    "symlink in own folder": (lambda w, own, name: f"link-out/{name}", "PolicyRefused"),
    "symlink in shared root": (lambda w, own, name: str(w.shared / "link-out" / name), "PolicyRefused"),
    "home ~": (lambda w, own, name: "~/.profile", "PolicyRefused"),
    "empty": (lambda w, own, name: "", "InvalidArgument"),
    "very long path": (lambda w, own, name: LONG_PATH, "InvalidArgument"),
    "very long name": (lambda w, own, name: "b" * 300, "InvalidArgument"),
    "NUL": (lambda w, own, name: f"{name}\x00.txt", "InvalidArgument"),
    "newline": (lambda w, own, name: f"x\n{name}", "InvalidArgument"),
    "other conversation, absolute": (lambda w, own, name: str(_victim_file(w, name)), "PolicyRefused"),
    "other conversation, dot-dot": (lambda w, own, name: os.path.relpath(_victim_file(w, name), own), "PolicyRefused"),
    "working directory": (lambda w, own, name: str(w.cwd / name), "PolicyRefused"),
}

#: Write attacks: the path, the expected error, and the file that must stay as it was (None: no file).
WRITE_ATTACKS: dict[str, tuple[Attack, str, Callable[[World, Path, str], Path | None]]] = {
    "dot-dot out": (lambda w, own, name: os.path.relpath(w.outside / name, own), "PolicyRefused",
                    lambda w, own, name: w.outside / name),
    "absolute /etc/cron.d": (lambda w, own, name: f"/etc/cron.d/{name}", "PolicyRefused",
                             lambda w, own, name: Path("/etc/cron.d") / name),
    "symlink folder in own folder": (lambda w, own, name: f"link-out/{name}", "PolicyRefused",
                                     lambda w, own, name: w.outside / name),
    "symlink file in own folder": (lambda w, own, name: "existing.txt", "PolicyRefused",
                                   lambda w, own, name: w.outside / "existing.txt"),
    "symlink in shared root": (lambda w, own, name: str(w.shared / "link-out" / name), "PolicyRefused",
                               lambda w, own, name: w.outside / name),
    "home ~": (lambda w, own, name: f"~/{name}", "PolicyRefused", lambda w, own, name: Path.home() / name),
    "empty": (lambda w, own, name: "", "InvalidArgument", lambda w, own, name: None),
    "very long path": (lambda w, own, name: LONG_PATH, "InvalidArgument", lambda w, own, name: None),
    "very long name": (lambda w, own, name: "b" * 300, "InvalidArgument", lambda w, own, name: None),
    "NUL": (lambda w, own, name: f"{name}\x00", "InvalidArgument", lambda w, own, name: None),
    "newline": (lambda w, own, name: f"x\n{name}", "InvalidArgument", lambda w, own, name: None),
    "other conversation, absolute": (lambda w, own, name: str(w.victim_state), "PolicyRefused",
                                     lambda w, own, name: w.victim_state),
    "other conversation, dot-dot": (lambda w, own, name: os.path.relpath(w.victim_state, own), "PolicyRefused",
                                    lambda w, own, name: w.victim_state),
    "working directory": (lambda w, own, name: str(w.cwd / name), "PolicyRefused",
                          lambda w, own, name: w.cwd / name),
}

# -- the tools -------------------------------------------------------------------------------------
# Each runs one attempt in the attacker's conversation and says whether anything leaked.


async def _read_image(tools: Conversation, path: str, site) -> tuple[object, bool]:
    reply = await tools.call("read_image", {"path": path})
    return reply, bool(reply.images)


async def _upload(tools: Conversation, path: str, site) -> tuple[object, bool]:
    await tools.call("browser_navigate", {"url": site.url("tabs_files/upload.html")})
    reply = await tools.call("browser_upload_file", {"selector": "#files", "paths": [path]})
    page = await tools.call("browser_eval", {"expression": "document.getElementById('out').textContent"})
    return reply, "no files" not in page.text


async def _has_stolen_cookie(tools: Conversation, session: str | None = None) -> bool:
    cookies = (await tools.call("browser_cookies", {"session": session} if session else {})).text
    return "canary=leaked" in cookies or "session=ada-token" in cookies


async def _load_state(tools: Conversation, path: str, site) -> tuple[object, bool]:
    reply = await tools.call("browser_storage_state", {"action": "load", "path": path})
    return reply, await _has_stolen_cookie(tools)


async def _session_from_state(tools: Conversation, path: str, site) -> tuple[object, bool]:
    reply = await tools.call("browser_session_create", {"name": "thief", "storage_state": path})
    started = "thief" in (await tools.call("browser_session_list", {})).text
    return reply, started and await _has_stolen_cookie(tools, "thief")


async def _save_state(tools: Conversation, path: str, site) -> object:
    return await tools.call("browser_storage_state", {"action": "save", "path": path})


async def _pdf(tools: Conversation, path: str, site) -> object:
    return await tools.call("browser_pdf", {"path": path})


READ_TOOLS = {"read_image": (_read_image, "canary.png"),
              "browser_upload_file": (_upload, "canary.png"),
              "browser_storage_state load": (_load_state, "canary.json"),
              "browser_session_create storage_state": (_session_from_state, "canary.json")}
WRITE_TOOLS = {"browser_storage_state save": (_save_state, "json"),
               "browser_pdf": (_pdf, "pdf")}

ROWS = [(tool, "read", attack) for tool in READ_TOOLS for attack in READ_ATTACKS] + \
       [(tool, "write", attack) for tool in WRITE_TOOLS for attack in WRITE_ATTACKS]
OUTCOMES: dict[tuple[str, str], tuple[bool, bool]] = {}  # (tool, attack) -> (refused, leaked)


def _snapshot(path: Path | None) -> bytes | None:
    try:
        return path.read_bytes() if path is not None else None
    except (FileNotFoundError, NotADirectoryError):
        return None


@pytest.mark.parametrize(("tool", "kind", "attack"), ROWS, ids=[f"{t}|{a}" for t, _, a in ROWS])
async def test_escape_attempt_is_refused(tool, kind, attack, world, webhand, default_webhand, site, monkeypatch):
    host = webhand
    if attack == "working directory":  # the old default roots held the working directory
        host = default_webhand
        monkeypatch.chdir(world.cwd)
    tools = host.conversation(f"attacker-{uuid.uuid4().hex[:8]}")
    tools.files.ensure()
    _plant_symlinks(tools.files.folder, world.outside)
    try:
        if kind == "read":
            run, canary = READ_TOOLS[tool]
            build, expected = READ_ATTACKS[attack]
            reply, leaked = await run(tools, build(world, tools.files.folder, canary), site)
        else:
            run, extension = WRITE_TOOLS[tool]
            build, expected, guarded = WRITE_ATTACKS[attack]
            name = f"webhand-hostile-{uuid.uuid4().hex[:8]}.{extension}"
            victim = guarded(world, tools.files.folder, name)
            before = _snapshot(victim)
            try:
                reply = await run(tools, build(world, tools.files.folder, name), site)
                leaked = _snapshot(victim) != before
            finally:
                if victim is not None and before is None and victim.exists():
                    victim.unlink()  # never leave a file in /etc/cron.d or ~, even when the test fails
    finally:
        await host.end_conversation(tools.conversation_id)
    refused = reply.is_error and (reply.data or {}).get("error") == expected
    OUTCOMES[(tool, attack)] = (refused, leaked)
    assert not leaked, f"{tool} / {attack}: leaked. Reply: {reply.text}"
    assert refused, f"{tool} / {attack}: expected {expected}, got: {reply.text}"
    assert "unexpectedly" not in reply.text and "Traceback" not in reply.text and "PosixPath(" not in reply.text
    assert len(reply.text) < 1500, "an error quotes at most a resolved path, never a huge argument"


# -- the folders themselves ------------------------------------------------------------------------


async def test_each_conversation_writes_into_its_own_private_folder(webhand, site):
    first, second = (webhand.conversation(f"own-folder-{uuid.uuid4().hex[:8]}") for _ in range(2))
    try:
        shots = []
        for tools in (first, second):
            await tools.call("browser_navigate", {"url": site.url("tabs_files/account.html")})
            shots.append(Path((await tools.call("browser_take_screenshot", {})).images[0].path))
            saved = await tools.call("browser_storage_state", {"action": "save", "path": "login.json"})
            assert not saved.is_error, saved.text
        for tools, shot in zip((first, second), shots):
            folder = tools.files.folder
            assert folder.parent == webhand.settings.output_dir.resolve()
            assert len(folder.name) == 32 and int(folder.name, 16) >= 0, "128 random bits, not a guessable name"
            assert folder.stat().st_mode & 0o777 == 0o700
            assert shot.is_relative_to(folder)
            assert (folder / "login.json").stat().st_mode & 0o777 == 0o600, "a storage state is a credential"
        assert first.files.folder != second.files.folder
    finally:
        for tools in (first, second):
            await webhand.end_conversation(tools.conversation_id)


async def test_an_ended_conversation_keeps_its_files_out_of_reach_of_the_next(webhand, site):
    conversation = f"ended-{uuid.uuid4().hex[:8]}"
    tools = webhand.conversation(conversation)
    await tools.call("browser_navigate", {"url": site.url("tabs_files/account.html")})
    shot = (await tools.call("browser_take_screenshot", {})).images[0].path
    assert not (await tools.call("read_image", {"path": shot})).is_error, "its own files are in reach"
    await webhand.end_conversation(conversation)

    again = webhand.conversation(conversation)  # a host may reuse an id: it still gets a new folder
    try:
        reply = await again.call("read_image", {"path": shot})
        assert reply.is_error and reply.data["error"] == "PolicyRefused", reply.text
        assert Path(shot).is_file(), "the files stay on disk for the user"
    finally:
        await webhand.end_conversation(conversation)


async def test_a_root_that_holds_the_output_folder_does_not_open_other_conversations(tmp_path):
    # Only read_image runs, which needs no browser: this Webhand is never started.
    settings = Settings.from_sources({"capabilities": ["all"], "roots": [str(tmp_path)], "output_dir": str(tmp_path / "out")},
                                     env={})
    host = Webhand(settings)
    owner, other = host.conversation("owner"), host.conversation("other")
    picture = owner.files.write(owner.files.screenshots / "shot.png", _png())
    (tmp_path / "shared.png").write_bytes(_png())

    stolen = await other.call("read_image", {"path": str(picture)})
    assert stolen.is_error and stolen.data["error"] == "PolicyRefused", stolen.text
    assert not (await other.call("read_image", {"path": str(tmp_path / "shared.png")})).is_error
    assert not (await owner.call("read_image", {"path": str(picture)})).is_error


async def test_a_relative_path_lands_in_the_conversation_folder_not_the_working_directory(tools, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    saved = await tools.call("browser_storage_state", {"action": "save", "path": "state.json"})
    assert not saved.is_error, saved.text
    assert (tools.files.folder / "state.json").is_file() and not (tmp_path / "state.json").exists()


def _png_header(width: int, height: int) -> bytes:
    """A PNG that claims ``width`` x ``height`` pixels in a few bytes: what a hostile page can have downloaded."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


@pytest.mark.parametrize("side", [10_000, 100_000], ids=["over the pixel limit", "over twice the limit"])
async def test_a_decompression_bomb_is_refused_with_a_typed_error(tools, side):
    tools.files.write(tools.files.downloads / "bomb.png", _png_header(side, side))
    reply = await tools.call("read_image", {"path": "downloads/bomb.png"})
    assert reply.is_error and reply.data["error"] == "FileNotReadable", reply.text
    assert "decompression bomb" in reply.text


def test_escape_table_summary():
    """Prints the table's counts (run with -s) and checks every row ran, was refused and leaked nothing."""
    if not OUTCOMES:
        pytest.skip("run with the table rows to get the summary")
    tools = sorted({t for t, _ in OUTCOMES})
    print("\nfile-escape table (tool: tried / refused / leaked)")
    for tool in tools:
        rows = [v for (t, _), v in OUTCOMES.items() if t == tool]
        print(f"  {tool:40} {len(rows):3} / {sum(r for r, _ in rows):3} / {sum(k for _, k in rows):3}")
    refused, leaked = sum(r for r, _ in OUTCOMES.values()), sum(k for _, k in OUTCOMES.values())
    print(f"file-escape table: tried {len(OUTCOMES)}, refused {refused}, leaked {leaked}")
    assert len(OUTCOMES) == len(ROWS) and refused == len(ROWS) and leaked == 0
