"""A session's active tab recorded as a video: WebM (VP8) from the browser's screencast frames.

``browser_recording`` starts a ``TabVideo`` on the active tab: the browser sends a JPEG frame each
time the page paints (the screencast the dashboard's live view uses, on a channel of its own), and
the frames are kept with their times. On stop they are encoded with PyAV (FFmpeg's libvpx) at
their own times (variable frame rate, at most ``fps`` a second), the last one held until the
recording stopped, so a page that stands still for a while is still a while in the video. The recording is bounded in time and in
memory; the file goes to the conversation's own folder, also when the session closes
while it runs (Session.close saves it then). PyAV is an optional extra (``video``),
imported only when a recording is encoded.
"""

from __future__ import annotations

import asyncio
import io
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from webhand.conversation_files import ConversationFiles
from webhand.engine.driver import Screencast, ScreencastFrame, Tab
from webhand.errors import ConfigError
from webhand.security.locations import make_private_folders, open_private_file

#: Longest recording, and the most frame bytes kept for it, before it stops taking frames.
MAX_SECONDS = 600.0
MAX_BYTES = 256 * 1024 * 1024
MAX_SIDE = 1280
QUALITY = 70


@dataclass
class TabVideo:
    """One recording in progress: the screencast and the frames it brought."""

    tab: Tab
    fps: int
    started: float = field(default_factory=time.time)
    frames: list[tuple[float, bytes]] = field(default_factory=list)  # (seconds since start, JPEG)
    kept_bytes: int = 0
    full: bool = False  # a bound was reached: later frames are dropped
    screencast: Screencast | None = None

    async def start(self, timeout: float) -> None:
        self.screencast = await asyncio.wait_for(
            self.tab.live_view.start_screencast(self._on_frame, max_width=MAX_SIDE, max_height=MAX_SIDE, quality=QUALITY), timeout)

    def _on_frame(self, frame: ScreencastFrame) -> None:
        at = max(0.0, time.time() - self.started)
        if at > MAX_SECONDS or self.kept_bytes + len(frame.jpeg) > MAX_BYTES:
            self.full = True
            return
        self.frames.append((at, frame.jpeg))
        self.kept_bytes += len(frame.jpeg)

    async def stop(self) -> float:
        """Stop taking frames; the recording's length in seconds."""
        if self.screencast is not None:
            screencast, self.screencast = self.screencast, None
            await screencast.stop()
        return min(time.time() - self.started, MAX_SECONDS)

    async def save(self, seconds: float, files: ConversationFiles) -> tuple[Path, int]:
        """Encode the stopped recording into the conversation's ``video`` folder (owner-only): the
        file and its number of video frames. Encoding runs in a thread: it takes CPU."""
        path = files.folder / "video" / f"tab-{self.tab.index}-{time.strftime('%Y%m%d-%H%M%S')}.webm"
        files.ensure()
        make_private_folders(path.parent)
        os.close(open_private_file(path))  # owner-only before the encoder writes into it (it keeps the mode)
        count = await asyncio.to_thread(encode_webm, self.frames, seconds, self.fps, path)
        return path, count


def timeline(frames: list[tuple[float, bytes]], seconds: float, fps: int) -> list[tuple[int, bytes]]:
    """The video's frames as (milliseconds, JPEG): the page's frames at most ``fps`` a second (a
    newer one replaces the one shown too recently), then the last picture again at ``seconds``, so
    that the video lasts as long as the recording even when the page stood still."""
    kept: list[tuple[float, bytes]] = []
    for at, jpeg in frames:
        if kept and at - kept[-1][0] < 1 / fps:
            kept[-1] = (kept[-1][0], jpeg)
        else:
            kept.append((at, jpeg))
    kept.append((max(seconds, kept[-1][0] + 1 / fps), kept[-1][1]))
    return [(round(at * 1000), jpeg) for at, jpeg in kept]


def encode_webm(frames: list[tuple[float, bytes]], seconds: float, fps: int, path: Path) -> int:
    """Write ``frames`` (time, JPEG) as a ``seconds``-long WebM (VP8), at most ``fps`` frames a
    second, each lasting until the next (variable frame rate: a still page costs one frame, not
    one per tick); the number of video frames. Run in a thread: encoding takes CPU."""
    try:
        import av
    except ImportError:
        raise ConfigError("Recording video needs PyAV, which is not installed.",
                          "Install webhand's video extra: pip install 'webhand[video]'.") from None
    from fractions import Fraction

    from PIL import Image

    first = Image.open(io.BytesIO(frames[0][1]))
    width, height = first.width - first.width % 2, first.height - first.height % 2  # VP8 wants even sizes
    shown = timeline(frames, seconds, fps)
    with av.open(str(path), mode="w", format="webm") as container:
        # Realtime at the fastest setting: encoding must not take longer than the recording did.
        stream = container.add_stream("libvpx", rate=fps, options={"deadline": "realtime", "cpu-used": "8", "b": "2M"})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        for at, jpeg in shown:
            image = Image.open(io.BytesIO(jpeg)).convert("RGB")
            if image.size != (width, height):
                image = image.resize((width, height))
            frame = av.VideoFrame.from_image(image)
            frame.pts, frame.time_base = at, Fraction(1, 1000)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return len(shown)
