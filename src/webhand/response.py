"""The Response builder: what a tool handler says, rendered once for every surface.

Handlers add short text lines, images, files and structured data; surfaces turn the finished
``ToolResult`` into MCP content, CLI output or a function-calling reply. Large text goes to a
file and the reply gives its path and size instead.

Private module: import its public names from ``webhand`` (``webhand.__all__``); the module's path may
change in any release.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from webhand.caller import NO_CALLER, Caller, ProgressTicker
from webhand.config import Settings
from webhand.errors import UNSAFE_IN_REPLY, WebhandError, escape_char, one_line
from webhand.conversation_files import ConversationFiles
from webhand.security.masking import Masker

if TYPE_CHECKING:  # Pillow loads with the first image, not with every server's start
    from webhand.images.fitting import ModelImage


@dataclass(frozen=True)
class ImageBlock:
    data: bytes
    mime_type: str
    path: str | None = None
    sent_path: str | None = None  # the model-sized copy, when one was kept (``Response.keep_sent_copy``)


@dataclass
class ToolResult:
    """A finished reply: the text for the model, images, structured data, and whether it failed."""

    text: str
    images: list[ImageBlock] = field(default_factory=list)
    data: dict[str, Any] | None = None
    is_error: bool = False
    files: list[str] = field(default_factory=list)


# Page text is data, never structure (docs/design.md, "Replies"): a page-made value enters a reply
# through ``Response.page`` (or ``clip``), on the line of webhand's label, escaped (errors.one_line).
#: Longest page-made value quoted in a reply line; the rest is cut, and the note says how to read it whole.
URL_LIMIT = 2_000
TITLE_LIMIT = 300
NAME_LIMIT = 300
WHOLE_URL = "browser_eval location.href reads it whole"
WHOLE_TITLE = "browser_eval document.title reads it whole"
#: Characters per token of a model's tokenizer, estimated offline (calibrated in surfaces/mcp/sizes.py):
#: what the dashboard's history and ``webhand schema --stats`` convert sizes with.
CHARS_PER_TOKEN = 4.7
#: The most of a page's HTML browser_content returns inline (tools/reading.py).
HTML_LIMIT = 100 * 1024
#: Room around the one large text a reply may hold (its header, notices): past the largest a tool
#: returns inline (a snapshot, browser_text, browser_content) plus this, the whole reply goes to a
#: file, as a snapshot does.
REPLY_MARGIN = 4_000


def reply_limit(settings: Settings) -> int:
    """The overall cap on a reply's text, in characters."""
    return max(settings.snapshot_max_chars, settings.text_max_chars, HTML_LIMIT) + REPLY_MARGIN


def page_line(text: str, limit: int = NAME_LIMIT, whole: str = "") -> str:
    """Page-made ``text`` made fit to stand inside one reply line: every line break, control and bidi
    character escaped (``\\n``, ``\\u2028``), then cut to ``limit`` characters, saying how many were left
    out and (``whole``) how to read them. It can thus never start a line of webhand's own format.
    Not masked: ``Response.page`` masks first (a cut through a secret would leave half of it)."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text) - limit:,} more characters" + (f"; {whole}" if whole else "") + ")"


#: What leads each later line of a page-made block (``page_block``): no line of webhand's own
#: format starts with it, so a line the page wrote can never pass for one of webhand's.
CONTINUED = "    ┆ "


def page_block(text: str, limit: int, max_lines: int = 50, whole: str = "", lead: str = CONTINUED) -> str:
    """Page-made ``text`` that has lines of its own (a stack trace, a console message over lines),
    shown with its line breaks: at most ``max_lines`` lines and ``limit`` characters, each later line
    led by ``lead`` (in a reply, ``CONTINUED``), every other line boundary and control escaped as
    ``page_line`` does. Not masked: ``Response.page_block`` masks first."""
    lines = text.split("\n")
    shown = "\n".join(lines[:max_lines])
    cut = len(shown) > limit
    shown = shown[:limit]
    block = ("\n" + lead).join(one_line(line.removesuffix("\r")) for line in shown.split("\n"))
    left = len(text) - len(shown)
    if cut or len(lines) > max_lines:
        block += f"…({left:,} more characters" + (f"; {whole}" if whole else "") + ")"
    return block


def clip_line(text: str, limit: int) -> str:
    """Page-made ``text`` on one line (``page_line``'s escapes), cut to ``limit`` characters with
    "…" and no note. Not masked: mask first (``Response.clip``), as for ``page_line``."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ChangeReport(Protocol):
    """What an action changed, said at the end of its reply. A handler declares one before it acts
    (``Response.report_changes``; session/changes.py builds them, and watches the page from then on);
    the tool's runner has it said once the handler is done (``Response.say_changes``)."""

    #: Said even when the handler fails: a batch tells what its steps did before the one that failed.
    after_failure: bool

    async def say(self, response: Response) -> None: ...


def _stamp() -> str:
    now = time.time()
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + f"-{int(now * 1000) % 1000:03d}"


class Response:
    def __init__(self, settings: Settings, tool: str, files: ConversationFiles | None = None,
                 caller: Caller = NO_CALLER) -> None:
        self.settings = settings
        self.tool = tool
        #: What the surface's client can do during this call (hear progress, answer its person).
        self.caller = caller
        #: Reports the call's progress while it runs, when the client asked for it (``Conversation.call``).
        self.ticker: ProgressTicker | None = None
        #: The calling conversation's folders: where this reply's files go, and what its paths may reach.
        self.files = files or ConversationFiles(settings)
        if caller.working_folder is not None:
            self.files = self.files.with_working_folder(caller.working_folder)
        #: Every text and value of the reply, and every file it writes, leaves through it.
        self.masker = Masker(settings.secrets_file)
        self._lines: list[str] = []
        self._images: list[ImageBlock] = []
        self._files: list[str] = []
        self._data: dict[str, Any] | None = None
        self._error: WebhandError | None = None
        self._changes: ChangeReport | None = None
        #: The action's report of changes said it changed nothing on the page (the history keeps it).
        self.changed_nothing = False

    # -- building ------------------------------------------------------------------------------
    def add(self, text: str) -> None:
        if text:
            self._lines.append(text)

    def waiting_for(self, what: str) -> None:
        """Name what the call now waits for, in the progress its client hears (page text masked
        and on one line: pass page-made parts through ``page``)."""
        if self.ticker is not None:
            self.ticker.what = what

    def saved(self, path: Path) -> None:
        """Note a file this call saved (a PDF, a download, an export): surfaces link it (MCP resource
        links). Only files in the conversation's own folders: the links are read back from there."""
        if self.files.is_own(path) and str(path) not in self._files:
            self._files.append(str(path))

    def data(self, value: dict[str, Any]) -> None:
        """Structured content for programs (MCP structuredContent, the CLI's --json)."""
        self._data = value

    def image(self, png: bytes, *, kind: str = "screenshot", directory: Path | None = None) -> tuple[ModelImage, Path]:
        """Save the full image to disk and attach a model-sized copy; return both."""
        from webhand.images.fitting import for_model

        path = self.files.write((directory or self.files.screenshots) / f"{kind}-{_stamp()}.png", png)
        fitted = for_model(png, max_side=self.settings.image_max_side, max_pixels=self.settings.image_max_pixels)
        self._images.append(ImageBlock(fitted.data, fitted.mime_type, str(path)))
        self._files.append(str(path))
        return fitted, path

    def keep_sent_copy(self, fitted: ModelImage, path: Path) -> Path | None:
        """Save the model-sized copy of the image just attached (``image``) beside the full one at
        ``path``, when it was scaled down: its pixels are the coordinates the model gives back, so
        a person or a program checking a point needs that picture. None when it was sent whole."""
        if fitted.width == fitted.original_width and fitted.height == fitted.original_height:
            return None
        suffix = ".jpg" if fitted.mime_type == "image/jpeg" else ".png"
        sent = self.files.write(path.with_name(f"{path.stem}-sent-{fitted.width}x{fitted.height}{suffix}"), fitted.data)
        self._files.append(str(sent))
        if self._images and self._images[-1].path == str(path):
            self._images[-1] = replace(self._images[-1], sent_path=str(sent))
        return sent

    def attach_image(self, image: ModelImage, path: str | None = None) -> None:
        self._images.append(ImageBlock(image.data, image.mime_type, path))

    def large(self, text: str, *, what: str, limit: int | None = None, suffix: str = ".txt", hint: str = "") -> None:
        """Add ``text`` inline when small; else write it to a file and say where and how big."""
        limit = limit if limit is not None else self.settings.large_output_bytes
        text = self.masker.text(text)  # masked before it is measured, saved or cut
        size = len(text.encode())
        if size <= limit:
            self.add(text)
            return
        path = self._save(text, what.replace(" ", "-"), suffix)
        preview = text[: min(200, limit // 2)].rstrip()
        self.add(f"The {what} is {size:,} bytes, more than the {limit:,}-byte reply limit: saved to {path}.")
        if hint:
            self.add(hint)
        self.add(f"It begins:\n{preview}…")

    def write_file(self, text: str, stem: str, suffix: str) -> Path:
        return self._save(self.masker.text(text), stem, suffix)  # a saved reply is still a reply

    def _save(self, masked_text: str, stem: str, suffix: str) -> Path:
        path = self.files.large_replies / f"{stem}-{_stamp()}{suffix}"
        self.files.write(path, masked_text.encode(errors="replace"))  # a page's lone surrogates must not fail the call
        self._files.append(str(path))
        return path

    def clip(self, text: str, limit: int) -> str:
        """Page-made ``text`` on one line (``page_line``'s escapes), cut to ``limit`` characters,
        secrets masked first: a cut through a secret would leave its first part unmasked."""
        return clip_line(self.masker.text(text), limit)

    def page(self, text: str, limit: int = NAME_LIMIT, whole: str = "") -> str:
        """Page-made ``text`` (a URL, title, name, message) fit for one reply line: masked, escaped,
        cut with a note (``page_line``). Every reply site that quotes a page value uses this."""
        return page_line(self.masker.text(text), limit, whole)

    def page_block(self, text: str, limit: int, max_lines: int = 50, whole: str = "") -> str:
        """Page-made ``text`` with its own line breaks kept (``page_block``), masked first."""
        return page_block(self.masker.text(text), limit, max_lines, whole)

    def summary(self) -> str:
        """The first line said so far, masked: what a history entry keeps of the reply."""
        first = str(self._error) if self._error is not None else (self._lines[0] if self._lines else "Done.")
        return self.masker.text(first.split("\n", 1)[0])

    def lines(self) -> list[str]:
        """The reply's lines said so far (unmasked: the history masks what it keeps of them)."""
        return [line for text in self._lines for line in text.split("\n") if line.strip()]

    def reply_chars(self) -> int:
        """The length of the reply's text so far (before masking, which keeps lengths close)."""
        return len(self._result().text)

    def fail(self, error: WebhandError) -> None:
        self._error = error

    # -- what the action changed ---------------------------------------------------------------
    def report_changes(self, report: ChangeReport | None) -> None:
        """Declare that this reply ends with what the action changed, as ``report`` says it;
        ``None`` takes the declaration back (the action did not happen: nothing to compare)."""
        self._changes = report

    async def say_changes(self, *, failed: bool = False) -> None:
        """Say what the declared action changed, once, after the handler's own lines (``failed``:
        the handler raised; only a report declared ``after_failure`` is said then)."""
        report, self._changes = self._changes, None
        if report is not None and (report.after_failure or not failed):
            await report.say(self)

    # -- finishing -----------------------------------------------------------------------------
    @property
    def failed(self) -> bool:
        return self._error is not None

    def result(self) -> ToolResult:
        """The finished reply, text and structured data passed through the masker."""
        result = self._result()
        try:
            result.text = self._bounded(UNSAFE_IN_REPLY.sub(escape_char, self.masker.text(result.text)))
            if result.data is not None:
                result.data = self.masker.data(result.data)
        except WebhandError as error:  # the secrets file went away: nothing unchecked may leave (fail closed)
            return ToolResult(f"Error: {error}", [], {"error": type(error).__name__, "message": str(error)}, True,
                              self._files)
        return result

    def _bounded(self, text: str) -> str:
        """The reply within one overall size cap: past it, the whole reply goes to a file and the
        reply keeps its beginning, with the path (the same rule as a snapshot's)."""
        limit = reply_limit(self.settings)
        if len(text) <= limit:
            return text
        path = self._save(text, self.tool.replace("_", "-") + "-reply", ".txt")
        head = text[: limit - 1_000]
        head = head[: head.rfind("\n")] if "\n" in head else head
        return (f"{head}\n… The reply is {len(text):,} characters, more than the {limit:,}-character limit: "
                f"all of it is saved to {path}; read the file for the rest.")

    def _result(self) -> ToolResult:
        if self._error is not None:
            text = f"Error: {self._error}"
            if self._lines:  # what did happen before the failure still matters (e.g. a batch)
                text = "\n".join(self._lines) + "\n" + text
            return ToolResult(text, [], {"error": type(self._error).__name__, "message": str(self._error)}, True, self._files)
        text = "\n".join(self._lines) if self._lines else "Done."
        return ToolResult(text, self._images, self._data, False, self._files)


def to_json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)
