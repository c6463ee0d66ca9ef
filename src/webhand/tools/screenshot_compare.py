"""Comparing the page (or one element) with an earlier screenshot: did it change, and where?"""

from __future__ import annotations

import asyncio
import time

from pydantic import Field

from webhand.durations import Timeout
from webhand.errors import FileNotReadable, InvalidArgument
from webhand.images.compare import compare
from webhand.response import Response
from webhand.conversation_files import require_file
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool
from webhand.tools.observation import capture_png

#: Largest earlier screenshot read: a screenshot of a very tall page is a few MB.
_MAX_FILE_BYTES = 50_000_000


class CompareArgs(PageArgs):
    path: str = Field(description="The earlier screenshot (a path a screenshot reply gave, or one in a folder the "
                                  "user shared).")
    ref: str | None = Field(None, description="Element ref: compare only that element.")
    selector: str | None = Field(None, description="CSS selector: compare only that element.")
    full_page: bool = Field(False, description="Whole scrollable page instead of the viewport.")
    tolerance: int = Field(16, ge=0, le=255,
                           description="Largest colour difference (0-255 per channel) still counted as equal.")
    timeout: Timeout = None


@tool("browser_screenshot_compare", capability="debug", read_only=True)
async def screenshot_compare(session: Session, args: CompareArgs, response: Response) -> None:
    """Compare the page or an element with an earlier screenshot file: the share of pixels that changed, and a diff
    image with the changes in red."""
    if args.ref and args.selector:
        raise InvalidArgument("Give `ref` or `selector`, not both.", "Call again with one of them.")
    earlier_path = require_file(response.files.confine(args.path), "Give the path of an earlier screenshot (a PNG).")
    if earlier_path.stat().st_size > _MAX_FILE_BYTES:
        raise FileNotReadable(f"{earlier_path} is larger than {_MAX_FILE_BYTES:,} bytes.",
                              "Compare with a smaller screenshot.")
    try:
        earlier = earlier_path.read_bytes()
    except OSError as error:
        raise FileNotReadable(f"Cannot read {earlier_path}: {error.strerror or error}.", "Check the path.") from None
    timeout = args.timeout or session.settings.timeout
    png = await capture_png(session, args, timeout)
    result = await asyncio.to_thread(compare, earlier, png, tolerance=args.tolerance)  # seconds on a tall page
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{int(time.time() * 1000) % 1000:03d}"
    now_path = response.files.write(response.files.screenshots / f"screenshot-{stamp}.png", png)
    before, after = (f"{w}x{h}" for w, h in (result.before_size, result.after_size))
    sizes = f"both {after}" if before == after else f"earlier {before}, now {after}"
    if result.changed == 0:
        response.add(f"No pixel changed since {earlier_path} ({sizes}, tolerance {args.tolerance}).")
    else:
        left, top, right, bottom = result.box or (0, 0, 0, 0)
        response.add(f"{result.share:.2%} of the pixels changed since {earlier_path} ({result.changed:,} of "
                     f"{result.total:,}; {sizes}), within x {left}-{right - 1}, y {top}-{bottom - 1}.")
    _, diff_path = response.image(result.diff_png, kind="diff")
    response.add(f"Diff image (changes in red): {diff_path}. "
                 f"The new screenshot: {now_path} (compare with it next time).")
    response.data({"changed_share": result.share, "changed_pixels": result.changed, "total_pixels": result.total,
                   "box": list(result.box) if result.box else None, "diff_path": str(diff_path),
                   "screenshot_path": str(now_path)})
