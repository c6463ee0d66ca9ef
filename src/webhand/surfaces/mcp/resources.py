"""Saved files as MCP resources: the links replies carry, and ``resources/read`` for them.

Every file a call saves (a screenshot, a PDF, a download, a large reply, an export) is listed in
its reply as a ``resource_link`` with a ``file://`` URI (``tool_json.resource_link``), besides its
path in the text. ``resources/read`` answers only for files in the calling session's own
conversation folders (``ConversationFiles.own_file``): a link handed to another session, a path
elsewhere, ``..``, a symlink out, another host or scheme is an error, never a read.
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from urllib.parse import unquote, urlsplit

import mcp_types as types
from mcp.shared.exceptions import MCPError

from webhand.conversation_files import ConversationFiles
from webhand.errors import WebhandError

#: The largest file ``resources/read`` returns (base64 makes it a third larger on the wire).
MAX_READ_BYTES = 32 * 1024 * 1024
#: The most files ``resources/list`` names, newest first.
MAX_LISTED = 100


def mime_type(path: str) -> str:
    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def _path_of(uri: str) -> str:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        raise MCPError(code=types.INVALID_PARAMS, message="webhand serves only the file:// links it returned to this session.")
    return unquote(parts.path, errors="strict")


def read(files: ConversationFiles, uri: str) -> types.ReadResourceResult:
    """The contents behind ``uri``, if it names one of this conversation's saved files."""
    try:
        path = files.own_file(_path_of(uri))
        size = path.stat().st_size
        if size > MAX_READ_BYTES:
            raise MCPError(code=types.INVALID_PARAMS, message=f"{path.name} is {size:,} bytes, more than the "
                           f"{MAX_READ_BYTES:,} resources/read returns: read it from its path instead.")
        data = path.read_bytes()
    except UnicodeDecodeError:
        raise MCPError(code=types.INVALID_PARAMS, message="The link is not valid UTF-8.") from None
    except WebhandError as error:
        raise MCPError(code=types.INVALID_PARAMS, message=f"{error.message} {error.hint}") from None
    except OSError as error:
        raise MCPError(code=types.INTERNAL_ERROR, message=f"Cannot read the file: {error.strerror or error}.") from None
    kind = mime_type(path.name)
    if kind.startswith("text/") or kind == "application/json":
        try:
            return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=kind, text=data.decode())])
        except UnicodeDecodeError:
            pass
    return types.ReadResourceResult(contents=[types.BlobResourceContents(
        uri=uri, mime_type=kind, blob=base64.b64encode(data).decode())])


def listed(files: ConversationFiles) -> types.ListResourcesResult:
    """This conversation's saved files, newest first, at most ``MAX_LISTED``."""
    found: list[tuple[float, Path]] = []
    for folder in files.own_folders():
        if not folder.is_dir():
            continue
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink() and path.parent.name != "history":
                found.append((path.stat().st_mtime, path))
    found.sort(reverse=True)
    return types.ListResourcesResult(resources=[
        types.Resource(uri=path.as_uri(), name=path.name, mime_type=mime_type(path.name), size=path.stat().st_size)
        for _, path in found[:MAX_LISTED]])
