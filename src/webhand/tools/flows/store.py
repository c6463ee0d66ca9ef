"""Private: the flows folder, ``$XDG_DATA_HOME/webhand/flows/``: one JSON file a flow.

Private like the profiles folder beside it (security/locations.py's ``private_folder``: a real
folder of this user's, 0700, reached only through folders nobody else can change). A flow's name is
a file name (``NAME_PATTERN``), never a path; a file is written 0600 through a temporary file and
a rename (never through a symbolic link), read only when it is a regular file of this user's, and
validated (tools/flows/format.py) before anything uses it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from pathlib import Path

from pydantic import ValidationError

from webhand.errors import FileNotReadable, InvalidArgument
from webhand.tools.flows.entries import first_problem
from webhand.tools.flows.format import NAME_PATTERN, Flow
from webhand.security.locations import data_home, open_private_file, private_folder

_FOLDER_HINT = "Set XDG_DATA_HOME to a folder of your own that only you can write (mode 0700)."
#: Largest flow file read.
FILE_LIMIT = 5_000_000


def flows_root(*, create: bool = True) -> Path:
    return Path(private_folder(os.path.join(data_home(), "webhand", "flows"), _FOLDER_HINT, create=create))


def check_name(name: object) -> str:
    if not isinstance(name, str) or not re.match(NAME_PATTERN, name):
        raise InvalidArgument("A flow's name is letters, digits, '.', '-' and '_' (up to 64), starting with a letter "
                              "or digit.", "Give a name like signup or report-2024.")
    return name


def flow_path(name: str, *, create: bool = True) -> Path:
    return flows_root(create=create) / (check_name(name) + ".json")


def save_flow(flow: Flow) -> Path:
    """Write ``flow`` to its file in the flows folder (over an older one of that name)."""
    return write_flow(flow_path(flow.name), flow)


def write_flow(path: Path, flow: Flow) -> Path:
    """Write ``flow`` to ``path``, owner-only, atomically (a temporary file renamed over it)."""
    temporary = path.with_name(f".{flow.name}.{os.getpid()}.tmp")
    descriptor = open_private_file(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            data = {"webhand_flow": flow.webhand_flow, **flow.model_dump(mode="json", exclude_defaults=True)}
            file.write(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return path


def read_flow_file(path: Path) -> Flow:
    """A flow file anywhere (``webhand replay FILE``), validated: refused naming the field that does
    not fit, never quoting its value. The file must be a regular file of this user's."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise FileNotReadable(f"Cannot read the flow {path}: {error.strerror or error}.",
                              "Give a flow file (browser_save_flow writes them); a symbolic link is not followed.") \
            from None
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise FileNotReadable(f"The flow {path} is not a regular file of yours.",
                                  "Keep flows in your own flows folder; save them with browser_save_flow.")
        raw = file.read(FILE_LIMIT + 1)
    if len(raw) > FILE_LIMIT:
        raise InvalidArgument(f"The flow {path} is larger than {FILE_LIMIT:,} bytes.", "Give a flow webhand wrote.")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InvalidArgument(f"The flow {path} is not JSON.", "Give a flow file webhand wrote.") from None
    return parse_flow(data, str(path))


def parse_flow(data: object, where: str) -> Flow:
    try:
        return Flow.model_validate(data)
    except ValidationError as error:
        raise InvalidArgument(f"The flow {where} is not one webhand can run: {first_problem(error, 'the flow')}.",
                              "Save flows with browser_save_flow, and edit only their values.") from None


def load_flow(name: str) -> Flow:
    check_name(name)
    path = flow_path(name, create=False) if flows_root_exists() else None
    if path is None or not os.path.lexists(path):
        raise InvalidArgument(f"There is no flow named {name!r}.", "Call browser_list_flows for the saved flows.")
    flow = read_flow_file(path)
    if flow.name != name:
        raise InvalidArgument(f"The flow file {name}.json names another flow.", "Save the flow again under its name.")
    return flow


def flows_root_exists() -> bool:
    return os.path.isdir(os.path.join(data_home(), "webhand", "flows"))


def list_flows() -> list[Flow | str]:
    """Every flow in the folder, by name; a file that is not a valid flow is listed as the reason."""
    if not flows_root_exists():
        return []
    root = flows_root(create=False)
    found: list[Flow | str] = []
    for path in sorted(root.glob("*.json")):
        try:
            found.append(load_flow(path.stem))
        except (InvalidArgument, FileNotReadable) as error:
            found.append(f"{path.name}: {str(error)[:200]}")
    return found
