"""The other-local-user table: a second user on the machine prepares folders before webhand runs.

Another user may create any name in a shared folder like /tmp before webhand does. Whoever owns
the folder that holds webhand's private folders (the conversations' files, the daemon's socket,
the browser registry, the launch memo) can rename what is inside and put their own in its place:
a saved storage state then lands in their file, a download goes through their symlink. Each row
is one preparation by that user (the test creates them with ``useradd``, and removes them after)
and one folder webhand is pointed at; a row passes when webhand refused the folder with a message
naming it, or did not use it at all (its defaults are no longer in a shared folder).

Needs root (to create the user); skipped otherwise. The counts are printed by the last test:
``pytest -s tests/hostile/test_hostile_local_users.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from webhand import Settings
from webhand.engine.launch import launch_memo
from webhand.errors import FileNotWritable
from webhand.security.locations import runtime_dir
from webhand.conversation_files import ConversationFiles


@dataclass
class World:
    user: str        # the other local user
    uid: int
    gid: int
    shared: Path     # a shared folder like /tmp: world-writable and sticky
    ours: Path       # a private folder of the user running webhand

    def as_other(self, *command: str) -> None:
        """Run ``command`` as the other user."""
        subprocess.run(command, user=self.uid, group=self.gid, extra_groups=[], check=True, timeout=30)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    if os.geteuid() != 0:
        pytest.skip("needs root: the test creates a second local user with useradd (and removes it after)")
    if shutil.which("useradd") is None:
        pytest.skip("useradd is not installed, so no second local user can be made")
    name = f"whhostile{uuid.uuid4().hex[:6]}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True, timeout=30)
    shared = Path(tempfile.mkdtemp(prefix="webhand-shared-tmp-"))  # outside pytest's 0700 folders: the user reaches it
    ours = Path(tempfile.mkdtemp(prefix="webhand-ours-"))
    try:
        os.chmod(shared, 0o1777)
        import pwd

        entry = pwd.getpwnam(name)
        yield World(name, entry.pw_uid, entry.pw_gid, shared, ours)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
        shutil.rmtree(ours, ignore_errors=True)
        subprocess.run(["userdel", name], check=False, timeout=30)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The webhand user's own state and cache folders (private), and no runtime dir: the defaults
    webhand falls back to. ``tempfile``'s cached answer is dropped, so TMPDIR counts."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("WEBHAND_OUTPUT_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)
    return tmp_path


# -- what webhand does with a folder ------------------------------------------------------------
# Each returns the folder webhand put its private things in (None when it refused) and its message.


def _conversation_files(**settings: object) -> tuple[Path | None, str]:
    files = ConversationFiles(Settings.from_sources({"capabilities": ["all"], **settings}, env={}))
    try:
        files.ensure()
    except FileNotWritable as error:
        return None, str(error)
    return files.folder, ""


def _runtime() -> tuple[Path | None, str]:
    try:
        return runtime_dir(), ""
    except FileNotWritable as error:
        return None, str(error)


def _memo() -> tuple[Path | None, str]:
    launch_memo.remember("hostile", {"executable": "/bin/true", "headless": True, "width": 1, "height": 1,
                                     "extra_args": [], "timeout": 1.0, "preferences": None})
    folder = Path(launch_memo.memo_dir())
    return (folder if (folder / "hostile.json").exists() else None), "not written: the folder is not the user's alone"


# -- the preparations ---------------------------------------------------------------------------
# Each: (what the other user did, how webhand meets it, and the folder the row must name when
# refused, or None when webhand must simply not use the other user's folder).

Row = Callable[[World, pytest.MonkeyPatch], tuple[tuple[Path | None, str], Path, Path | None]]


def _old_default_output(w: World, mp: pytest.MonkeyPatch):
    w.as_other("mkdir", "-m", "0777", str(w.shared / "webhand-output"))  # the old default, $TMPDIR/webhand-output
    mp.setenv("TMPDIR", str(w.shared))
    return _conversation_files(), w.shared / "webhand-output", None


def _output_theirs(w: World, mp: pytest.MonkeyPatch):
    w.as_other("mkdir", "-m", "0777", str(w.shared / "out-theirs"))
    return _conversation_files(output_dir=str(w.shared / "out-theirs")), w.shared / "out-theirs", w.shared / "out-theirs"


def _output_symlink(w: World, mp: pytest.MonkeyPatch):
    target = w.ours / "out-linked"
    target.mkdir(mode=0o700)
    w.as_other("ln", "-s", str(target), str(w.shared / "out-link"))  # theirs to re-point later
    return _conversation_files(output_dir=str(w.shared / "out-link")), w.shared / "out-link", w.shared / "out-link"


def _output_group_writable(w: World, mp: pytest.MonkeyPatch):
    folder = w.ours / "out-group"
    folder.mkdir()
    os.chown(folder, 0, w.gid)  # a folder of ours that the other user's group may write
    os.chmod(folder, 0o770)
    return _conversation_files(output_dir=str(folder)), folder, folder


def _output_in_open_parent(w: World, mp: pytest.MonkeyPatch):
    parent = w.ours / "open-parent"
    parent.mkdir()
    os.chmod(parent, 0o777)  # everyone may write, not sticky: anyone may rename what is inside
    (parent / "out").mkdir(mode=0o700)
    return _conversation_files(output_dir=str(parent / "out")), parent, parent


def _output_in_their_parent(w: World, mp: pytest.MonkeyPatch):
    w.as_other("mkdir", "-m", "0755", str(w.shared / "their-parent"))
    (w.shared / "their-parent" / "out").mkdir(mode=0o700)  # ours, inside theirs
    return (_conversation_files(output_dir=str(w.shared / "their-parent" / "out")), w.shared / "their-parent",
            w.shared / "their-parent")


def _screenshots_theirs(w: World, mp: pytest.MonkeyPatch):
    w.as_other("mkdir", "-m", "0777", str(w.shared / "shots-theirs"))
    return (_conversation_files(output_dir=str(w.ours / "out-ok"), screenshot_dir=str(w.shared / "shots-theirs")),
            w.shared / "shots-theirs", w.shared / "shots-theirs")


def _runtime_theirs(w: World, mp: pytest.MonkeyPatch):
    w.as_other("mkdir", "-m", "0777", str(w.shared / "run-theirs"))
    mp.setenv("XDG_RUNTIME_DIR", str(w.shared / "run-theirs"))
    return _runtime(), w.shared / "run-theirs", None


def _runtime_fallback_symlink(w: World, mp: pytest.MonkeyPatch):
    target = w.ours / "run-linked"
    target.mkdir(mode=0o700)
    w.as_other("ln", "-s", str(target), str(w.shared / f"webhand-{os.getuid()}"))  # the old fallback's name
    mp.setenv("TMPDIR", str(w.shared))
    return _runtime(), w.shared / f"webhand-{os.getuid()}", None


def _memo_theirs(w: World, mp: pytest.MonkeyPatch):
    w.as_other("mkdir", "-m", "0777", str(w.shared / "cache-theirs"))
    mp.setenv("XDG_CACHE_HOME", str(w.shared / "cache-theirs"))
    return _memo(), w.shared / "cache-theirs", None


ROWS: dict[str, Row] = {
    "pre-creates the old default output folder $TMPDIR/webhand-output": _old_default_output,
    "owns the configured output_dir": _output_theirs,
    "made the configured output_dir a symlink (to a folder of ours)": _output_symlink,
    "may write the configured output_dir (its group)": _output_group_writable,
    "may rename in output_dir's parent (world-writable, not sticky)": _output_in_open_parent,
    "owns output_dir's parent": _output_in_their_parent,
    "owns the configured screenshot_dir": _screenshots_theirs,
    "owns XDG_RUNTIME_DIR": _runtime_theirs,
    "made the old runtime fallback $TMPDIR/webhand-<uid> a symlink": _runtime_fallback_symlink,
    "owns XDG_CACHE_HOME (the launch memo's folder)": _memo_theirs,
}
OUTCOMES: dict[str, tuple[bool, bool]] = {}  # row -> (refused, neutralised)


@pytest.mark.parametrize("row", list(ROWS))
def test_a_folder_another_user_prepared_is_refused_or_not_used(row, world, home, monkeypatch):
    (used, message), theirs, named = ROWS[row](world, monkeypatch)
    refused = used is None
    inside_theirs = used is not None and (used == theirs or used.is_relative_to(theirs)
                                          or used.resolve().is_relative_to(theirs.resolve()))
    OUTCOMES[row] = (refused, not inside_theirs)
    assert not inside_theirs, f"{row}: webhand used {used}, which the other user controls"
    if named is not None:
        assert refused, f"{row}: expected a refusal, webhand used {used}"
        assert f"webhand will not use the folder {named}" in message, message
        assert "of your own" in message, f"the message says what to do: {message}"


def test_local_users_table_summary():
    """Prints the table's counts (run with -s): every row ran, and none used the other user's folder."""
    if not OUTCOMES:
        pytest.skip("run with the table rows to get the summary")
    print("\nother-local-user table (row: refused / not used)")
    for row, (refused, safe) in OUTCOMES.items():
        print(f"  {row:70} {'refused' if refused else '-':8} {'safe' if safe else 'USED'}")
    print(f"other-local-user table: tried {len(OUTCOMES)}, refused {sum(r for r, _ in OUTCOMES.values())}, "
          f"used the other user's folder {sum(not s for _, s in OUTCOMES.values())}")
    assert len(OUTCOMES) == len(ROWS) and all(s for _, s in OUTCOMES.values())
