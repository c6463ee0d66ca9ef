"""Where a conversation's files go, and which files its tools may reach.

Each conversation gets its own folder inside the output folder, named by a random token that
cannot be guessed, owner-only (0700). Its screenshots, PDFs, downloads, large replies and
storage states go there, and a relative path a model gives lands there too. A conversation's
file tools reach that folder and the roots the user configured (``roots``), nothing else: not
the output folder itself, and never another conversation's folder, even when a configured root
contains the output folder. A call made from a shell (the CLI) also reaches the folder its command
ran in, and its relative paths start there (``with_working_folder``): whoever types the command
can already write there; the home folder itself and ``/`` are not taken so (a root there would
reach every file of the user), nor a folder inside the output folder. The host binds a conversation to its
folder (``SessionManager.files_of``); the model never chooses it.

The files stay on disk when the conversation ends: they are the user's (a PDF, a download).

Private module: import its public names from ``webhand`` (``webhand.__all__``); the module's path may
change in any release.
"""

from __future__ import annotations

import copy
import os
import stat
from pathlib import Path
from secrets import token_hex

from webhand.config import Settings
from webhand.errors import FileNotReadable, FileNotWritable, InvalidArgument, PolicyRefused
from webhand.security.locations import make_private_folders, open_private_file, private_folder

#: Longest path Linux takes (PATH_MAX counts the final NUL) and longest name in it (NAME_MAX).
MAX_PATH_BYTES = 4095
MAX_NAME_BYTES = 255


def _resolved(path: Path | str) -> Path:
    return Path(path).expanduser().resolve()


def _within(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


class ConversationFiles:
    """One conversation's folders, and the check every file path of its tools goes through."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.name = token_hex(16)  # 128 random bits: the folder of another conversation cannot be guessed
        self.folder = _resolved(settings.output_dir) / self.name
        # A configured screenshot or download folder is shared by every conversation, so each
        # gets its own random subfolder there too.
        self.screenshots = _resolved(settings.screenshot_dir) / self.name if settings.screenshot_dir \
            else self.folder / "screenshots"
        self.downloads = _resolved(settings.download_dir) / self.name if settings.download_dir \
            else self.folder / "downloads"
        self.large_replies = self.folder / "files"
        self.pdfs = self.folder / "pdf"
        self.history = self.folder / "history"  # each session's older tool calls (session/history.py)
        #: The folders the MCP client declared as its roots (surfaces/mcp/client_roots.py); ``None``
        #: when it declared none. When set, a configured root is reachable only inside one of them.
        self.client_roots: list[Path] | None = None
        #: Whether ``client_roots`` is what the client last said (a roots/list_changed notification clears it).
        self.client_roots_current = False
        #: The folder the CLI command of this call ran in (``with_working_folder``); None elsewhere.
        self.working_folder: Path | None = None
        self._made = False

    def with_working_folder(self, folder: str) -> ConversationFiles:
        """These folders for one call made from a shell in ``folder``: its relative paths start
        there, and the folder is reachable too unless ``working_folder_refusal`` says why not."""
        view = copy.copy(self)  # per call: two commands of one session may run in two folders at once
        view.working_folder = _resolved(folder)
        return view

    def working_folder_refusal(self) -> str:
        """Why the command's folder is not reachable by itself ("" when it is)."""
        folder = self.working_folder
        if folder is None:
            return "no command folder"
        if folder == Path(folder.anchor) or folder == _resolved("~"):
            return "it is your home folder or the file system's root, which would reach every file you have"
        if any(_within(folder, area) for area in self.private_areas()):
            return "it is inside webhand's output folder, where each conversation's folder is private"
        return ""

    def own_folders(self) -> list[Path]:
        return [self.folder] + [p for p in (self.screenshots, self.downloads) if not _within(p, self.folder)]

    def private_areas(self) -> list[Path]:
        """Folders that hold every conversation's folder: reachable only through one's own."""
        return [_resolved(p) for p in (self.settings.output_dir, self.settings.screenshot_dir, self.settings.download_dir)
                if p is not None]

    def shared_roots(self) -> list[Path]:
        return [_resolved(root) for root in self.settings.roots]

    # -- checking paths ------------------------------------------------------------------------
    def confine(self, path: str) -> Path:
        """The file ``path`` names, resolved (``..`` and symlinks followed), if this conversation may
        use it; else a typed error that states the rule. A relative path is taken inside the
        command's folder for a call from the CLI, else inside the conversation's own folder."""
        _check_text(path)
        base = self.working_folder or self.folder
        try:
            candidate = Path(path).expanduser() if path.startswith("~") else Path(path)
            resolved = (base / candidate).resolve()  # an absolute candidate replaces the folder
        except (OSError, RuntimeError, ValueError) as error:  # a symlink loop, no home directory
            raise InvalidArgument(f"The path cannot be resolved: {error}.", "Give a plain path to a file.") from None
        _check_text(str(resolved), resolved=True)
        if not self.reaches(resolved):
            places = [f"{self.folder} (this conversation's own folder)", *map(str, self.shared_roots())]
            refused = ""
            if self.working_folder is not None:
                refusal = self.working_folder_refusal()
                if refusal:
                    refused = f" The folder this command runs in, {self.working_folder}, is not one of them: {refusal}."
                else:
                    places.insert(0, f"{self.working_folder} (the folder this command runs in)")
            if self.client_roots is not None:
                places.append("intersected with the client's roots: " + (", ".join(map(str, self.client_roots)) or "none"))
            raise PolicyRefused(f"{resolved} is outside the folders webhand may use: {', '.join(places)}.{refused}",
                                f"Use a file inside one of them (a relative path starts in {base}), or add its "
                                "folder to `roots` in webhand's config.")
        return resolved

    def reaches(self, path: Path) -> bool:
        """Whether this conversation may use the resolved ``path``."""
        if any(_within(path, own) for own in self.own_folders()):
            return True
        areas = self.private_areas()
        if self.working_folder is not None and not self.working_folder_refusal() \
                and _within(path, self.working_folder) and not any(_within(path, area) for area in areas):
            return True
        # A root the user configured is reachable, except the private areas inside it (the output
        # folder under a configured home, say); a root configured inside a private area is shared.
        if self.client_roots is not None and not any(_within(path, root) for root in self.client_roots):
            return False  # the client narrowed the configured roots to its own
        return any(_within(path, root) and not any(_within(path, area) and _within(area, root) for area in areas)
                   for root in self.shared_roots())

    def is_own(self, path: Path) -> bool:
        """Whether the resolved ``path`` lies in this conversation's own folders."""
        return any(_within(path, own) for own in self.own_folders())

    def own_file(self, path: str) -> Path:
        """The regular file ``path`` names (``..`` and symlinks followed) if it lies in this
        conversation's own folders, where webhand saves its files; else a typed error. Configured
        roots do not count: this is how a saved file is read back by whoever holds its link."""
        _check_text(path)
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError, ValueError) as error:
            raise InvalidArgument(f"The path cannot be resolved: {error}.", "Give a link webhand returned.") from None
        if not Path(path).is_absolute() or not self.is_own(resolved):
            raise PolicyRefused("That file is not one of this conversation's saved files.",
                                "Read only the resource links webhand returned to this session.")
        return require_file(resolved, "Read only the resource links webhand returned to this session.")

    # -- writing -------------------------------------------------------------------------------
    def ensure(self) -> None:
        """Create the conversation's own folders, owner-only, before anything is written there. The
        folders that hold them (``output_dir`` and the like) are checked first: a folder another user
        made, or could rename, would let them swap a conversation's folder for their own."""
        if self._made:
            return
        hint = "Set output_dir (WEBHAND_OUTPUT_DIR), or screenshot_dir / download_dir, to a folder of your own that only you can write."
        for area in (self.settings.output_dir, self.settings.screenshot_dir, self.settings.download_dir):
            if area is not None:  # as configured, not resolved: a symlink there is refused, not followed
                private_folder(Path(area).expanduser(), hint)
        for own in self.own_folders():
            private_folder(own, hint)
        self._made = True

    def write(self, path: Path, data: bytes) -> Path:
        """Write a file (a confined path, or one of the conversation's own), owner-only (0600, and any
        folder made for it 0700, whatever the umask), never through a symlink put there meanwhile;
        any failure is a typed error. Every file webhand writes for a conversation goes through here,
        but downloads and videos (engine/downloads.py, session/video.py), which others write."""
        self.ensure()
        try:
            make_private_folders(path.parent)
            with os.fdopen(open_private_file(path), "wb") as file:
                file.write(data)
        except IsADirectoryError:
            raise FileNotWritable(f"{path} is a folder.", "Give a file name inside it, e.g. page.pdf.") from None
        except OSError as error:
            raise FileNotWritable(f"Cannot write {path}: {error.strerror or error}.",
                                  "Give another file name, e.g. a relative one (it goes into the conversation's own folder).") from None
        return path


def require_file(path: Path, hint: str) -> Path:
    """``path`` if it is a regular file that exists. A FIFO or a device could block a read for ever."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise FileNotReadable(f"{path} does not exist.", hint) from None
    except OSError as error:
        raise FileNotReadable(f"Cannot read {path}: {error.strerror or error}.", hint) from None
    if stat.S_ISDIR(info.st_mode):
        raise FileNotReadable(f"{path} is a folder, not a file.", hint)
    if not stat.S_ISREG(info.st_mode):
        raise FileNotReadable(f"{path} is not a regular file.", hint)
    return path


def _check_text(path: str, *, resolved: bool = False) -> None:
    """Refuse what no file system takes (or only takes to cause trouble), without echoing it back."""
    what = "The resolved path" if resolved else "The path"
    if not path.strip():
        raise InvalidArgument("The path is empty.", "Give a file name, e.g. page.pdf.")
    if "\x00" in path:
        raise InvalidArgument(f"{what} contains a NUL character, which no file name can hold.", "Give a plain path.")
    control = next((c for c in path if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if control is not None:  # legal on Linux, but a newline in a name would forge lines of the reply
        raise InvalidArgument(f"{what} contains a control character (U+{ord(control):04X}).", "Give a plain path.")
    try:
        encoded = os.fsencode(path)
    except UnicodeEncodeError:
        raise InvalidArgument(f"{what} is not valid text for a file name (it holds an unpaired surrogate).",
                              "Give a plain path.") from None
    if len(encoded) > MAX_PATH_BYTES:
        raise InvalidArgument(f"{what} is {len(encoded):,} bytes long; a path holds at most {MAX_PATH_BYTES:,}.",
                              "Give a shorter path.")
    longest = max(len(part) for part in encoded.split(b"/"))
    if longest > MAX_NAME_BYTES:
        raise InvalidArgument(f"A name in {what[0].lower()}{what[1:]} is {longest:,} bytes long; a file or folder name holds "
                              f"at most {MAX_NAME_BYTES}.", "Give a shorter name.")
