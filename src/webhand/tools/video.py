"""Recording a session's active tab as a video (session/video.py): for a person to watch later
what the agent did, or to attach to a bug report."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import Field

from webhand.durations import Timeout
from webhand.errors import InvalidArgument
from webhand.response import Response
from webhand.session.session import Session
from webhand.session.video import TabVideo
from webhand.tools.definition import PageArgs, tool


class RecordingArgs(PageArgs):
    action: Literal["start", "stop", "status"] = Field(
        description="start recording the active tab; stop and save the WebM video; status: whether one runs.")
    fps: int = Field(10, ge=1, le=30, description="start: frames per second of the video.")
    timeout: Timeout = None  # start: for the screencast to begin; stop: for the video to be encoded


@tool("browser_recording", capability="debug")
async def recording(session: Session, args: RecordingArgs, response: Response) -> None:
    """Record the active tab as a WebM video: start, then stop to save it in your folder (path and length in the reply)."""
    video = session.video
    if args.action == "status":
        response.add(f"Recording tab {video.tab.index} for {time.time() - video.started:.0f} s ({len(video.frames)} page frames)."
                     if video else "No recording runs.")
        return
    if args.action == "start":
        if video is not None:
            raise InvalidArgument("A recording already runs in this session.", "Call browser_recording with action=stop first.")
        tab = await session.tab()
        video = TabVideo(tab, args.fps)
        await video.start(args.timeout or session.settings.timeout)
        session.video = video
        response.add(f"Recording tab {tab.index} at {args.fps} frames a second. Call browser_recording action=stop to save it.")
        return
    if video is None:
        raise InvalidArgument("No recording runs in this session.", "Call browser_recording with action=start first.")
    session.video = None
    seconds = await video.stop()
    if not video.frames:
        raise InvalidArgument("The recording has no frame: the page never painted.", "Start again on a page that is shown.")
    response.waiting_for(f"the {seconds:.0f}-second video to be encoded")
    path, count = await video.save(seconds, response.files)
    response.saved(path)
    cut = " (it reached the recording's bounds and stopped taking frames)" if video.full else ""
    response.add(f"Saved {seconds:.1f} s of tab {video.tab.index} as WebM: {path} ({path.stat().st_size:,} bytes, "
                 f"{count} frames at {video.fps} fps){cut}.")
    response.data({"path": str(path), "seconds": round(seconds, 2), "frames": count})
