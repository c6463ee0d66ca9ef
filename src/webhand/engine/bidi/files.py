"""Files on Firefox: downloads (``browsingContext.downloadWillBegin`` / ``downloadEnd``) and the
file chooser (``input.fileDialogOpened``).

Downloads of a session are saved by Firefox into a staging folder of its own
(``browser.setDownloadBehavior`` for the user context, inside the launched Firefox's scratch
folder, so a killed server leaves nothing behind), then moved into the session's download folder
under the name the page suggested, numbered when taken (``engine/downloads.py``, as on Chromium).
A session without a download folder gets no file: the staged one is deleted and the download
reported as refused.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

from webhand.engine.bidi.connection import BidiConnection, guarded
from webhand.engine.announcements import Announcements
from webhand.engine.downloads import store
from webhand.engine.driver import Download, TabEvents
from webhand.errors import WebhandError



class SessionDownloads:
    def __init__(self, connection: BidiConnection, user_context: str, events: TabEvents, staging_parent: str | None) -> None:
        self._connection = connection
        self._user_context = user_context
        self._events = events
        self.downloads_dir: Path | None = None
        self._staging = tempfile.mkdtemp(prefix="webhand-bidi-downloads-", dir=staging_parent)
        self._saving: dict[str, tuple[Download, asyncio.Future[None]]] = {}  # navigation id -> the download
        self._reserved: set[str] = set()
        self._announced = Announcements()  # attachment responses whose downloadWillBegin is still to come
        self.begun = 0

    async def start(self) -> None:
        async with guarded("Setting the download folder", 30):
            await self._connection.send("browser.setDownloadBehavior", {
                "downloadBehavior": {"type": "allowed", "destinationFolder": self._staging},
                "userContexts": [self._user_context]})

    def announce(self) -> None:
        """A document response was a file (Content-Disposition: attachment): its download is coming."""
        self._announced.announce()

    def expecting(self) -> bool:
        return self._announced.expecting()

    def began(self, params: dict[str, Any], tab: int) -> None:
        self.begun += 1
        self._announced.arrived()
        record = Download(params.get("url", ""), Path(params.get("suggestedFilename") or "").name or "download",
                          tab)
        saving: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._saving[params.get("navigation") or params.get("url", "")] = (record, saving)
        if self._events.download:
            self._events.download(record, saving)

    def ended(self, params: dict[str, Any]) -> None:
        found = self._saving.pop(params.get("navigation") or params.get("url", ""), None)
        if found is None:
            return
        record, saving = found
        staged = params.get("filepath")
        if params.get("status") != "complete" or not staged:
            record.error = "the download was canceled"
        elif self.downloads_dir is None:
            record.error = "no download folder is configured"
            Path(staged).unlink(missing_ok=True)
        else:
            try:
                target, record.size = store(staged, self.downloads_dir, record.name, self._reserved)
                record.path = str(target)
            except OSError as error:
                record.error = str(error)
        if not saving.done():
            saving.set_result(None)

    def close(self) -> None:
        for record, saving in self._saving.values():
            record.error = record.error or "the session ended before the download finished"
            if not saving.done():
                saving.set_result(None)
        self._saving.clear()
        shutil.rmtree(self._staging, ignore_errors=True)


class BidiFileChooser:
    """A file picker the page opened (``input.fileDialogOpened``), answered with ``input.setFiles``
    on the <input type=file> that opened it."""

    def __init__(self, connection: BidiConnection, tab: int, params: dict[str, Any]) -> None:
        self._connection = connection
        self.tab = tab
        self.multiple = bool(params.get("multiple"))
        self._context = params.get("context", "")
        self._element = params.get("element")

    async def set_files(self, paths: list[str], *, timeout: float) -> None:
        if not self._element:
            raise WebhandError("This file chooser was not opened by an <input type=file> (a page script's "
                               "showOpenFilePicker): Firefox cannot be given files for it.",
                               "Give the files to the page's <input type=file> with browser_upload_file and a ref.")
        async with guarded("Choosing the files", timeout):
            await self._connection.send("input.setFiles", {"context": self._context,
                                                           "element": {"sharedId": self._element["sharedId"]},
                                                           "files": paths})
