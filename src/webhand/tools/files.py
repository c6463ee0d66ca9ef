"""Files in and out of the page: uploads, downloads, and the page saved as PDF.

Every path a tool reads or writes goes through ``ConversationFiles.confine``: the
conversation's own folder and the roots the user configured. Downloads are saved by the session
as they happen, into the conversation's download folder, and reported in the reply of the action
that caused them; browser_downloads lists them all.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import Field

from webhand.durations import Timeout
from webhand.errors import InvalidArgument
from webhand.conversation_files import require_file
from webhand.response import URL_LIMIT, Response
from webhand.session.changes import settle_changes
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool


class UploadArgs(PageArgs):
    paths: list[str] = Field(min_length=1, description="Files to upload: in your own folder (relative paths) or the folders the user shared.")
    ref: str | None = Field(None, description="Ref of an <input type=file>, to set its files directly. Omit to answer the open file chooser.")
    selector: str | None = Field(None, description="CSS selector of an <input type=file>, when there is no ref.")
    timeout: Timeout = None


@tool("browser_upload_file", capability="files", destructive=True)
async def upload_file(session: Session, args: UploadArgs, response: Response) -> None:
    """Upload files: answer the file chooser a click opened, or set the files of an <input type=file> by ref."""
    if args.ref and args.selector:
        raise InvalidArgument("Give `ref` or `selector`, not both.", "Call again with one of them.")
    files = [_readable(path, response) for path in args.paths]
    timeout = args.timeout or session.settings.timeout
    await settle_changes(session, response)
    if args.ref or args.selector:
        element = await session.element(args.ref, args.selector, args.timeout)
        try:
            await element.set_input_files(files, timeout=timeout)
        finally:
            await element.dispose()
        target = args.ref or args.selector
    else:
        chooser = session.file_chooser
        if chooser is None:
            raise InvalidArgument("No file chooser is open.",
                                  "Click the page's upload button first (its reply says when a file chooser opens), "
                                  "or give the ref of the <input type=file>.")
        if all(t.index != chooser.tab or t.closed for t in session.context.tabs):
            session.file_chooser = None
            raise InvalidArgument(f"The file chooser's tab {chooser.tab} was closed.",
                                  "Open the page again and click its upload button, or give the ref of the <input type=file>.")
        if len(files) > 1 and not chooser.multiple:
            raise InvalidArgument(f"The file chooser takes one file; {len(files)} were given.", "Call again with one path.")
        await chooser.set_files(files, timeout=timeout)
        session.file_chooser = None
        target = f"the file chooser of tab {chooser.tab}"
    names = ", ".join(Path(f).name for f in files)
    response.add(f"Uploaded {len(files)} file{'s' if len(files) > 1 else ''} ({names}) to {target}.")


def _readable(path: str, response: Response) -> str:
    return str(require_file(response.files.confine(path), "Check the path; give a file, not a folder."))


@tool("browser_downloads", capability="files", read_only=True)
async def downloads(session: Session, args: PageArgs, response: Response) -> None:
    """List the files this session downloaded, with where they were saved and their size."""
    if not session.downloads:
        response.add(f"No downloads yet. Files the page downloads are saved to {response.files.downloads}.")
        response.data({"downloads": []})
        return
    lines = []
    for item in session.downloads:
        if item.path is not None:
            response.saved(Path(item.path))
            lines.append(f"- {response.page(item.name)}: {item.path} ({item.size:,} bytes)")
        elif item.error is not None:
            lines.append(f"- {response.page(item.name)}: failed ({response.page(item.error)})")
        else:
            lines.append(f"- {response.page(item.name)}: still downloading")
    response.add(f"Downloads ({len(session.downloads)}):\n" + "\n".join(lines))
    response.data({"downloads": [{"name": d.name, "url": d.url, "path": d.path, "size": d.size, "error": d.error}
                                 for d in session.downloads]})


class PdfArgs(PageArgs):
    path: str | None = Field(None, description="Where to save the PDF: a name in your own folder, or inside a folder the user shared; default: a new file in your folder.")
    timeout: Timeout = None


@tool("browser_pdf", capability="pdf", read_only=True)
async def pdf(session: Session, args: PdfArgs, response: Response) -> None:
    """Save the current page as a PDF file. Replies with its path and size."""
    if args.path is not None:  # an empty path is a mistake to report, not a request for the default
        target = response.files.confine(args.path)  # refused before the page is rendered for nothing
    else:
        stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{int(time.time() * 1000) % 1000:03d}"
        target = response.files.pdfs / f"page-{stamp}.pdf"
    tab = await session.tab()
    data = await tab.capture.pdf(timeout=args.timeout or session.settings.timeout)
    response.files.write(target, data)
    response.saved(target)
    response.add(f"Saved {response.page(tab.url, URL_LIMIT)} as PDF: {target} ({len(data):,} bytes)")
    response.data({"path": str(target), "size": len(data)})
