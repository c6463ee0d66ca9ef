"""A session's network log saved as HAR 1.2, and its active tab recorded as a WebM video."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest

from helpers import ref_of

_NAME_VALUE = {"type": "array", "items": {"type": "object", "required": ["name", "value"],
                                           "properties": {"name": {"type": "string"}, "value": {"type": "string"}}}}
_TIMING = {"type": "number", "minimum": -1}
#: The HAR 1.2 spec's required fields and types (http://www.softwareishard.com/blog/har-12-spec/), the part
#: Chrome DevTools reads on import.
HAR_12 = {
    "type": "object", "required": ["log"],
    "properties": {"log": {
        "type": "object", "required": ["version", "creator", "entries"],
        "properties": {
            "version": {"const": "1.2"},
            "creator": {"type": "object", "required": ["name", "version"]},
            "entries": {"type": "array", "items": {
                "type": "object", "required": ["startedDateTime", "time", "request", "response", "cache", "timings"],
                "properties": {
                    "startedDateTime": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+(Z|[+-]\d\d:\d\d)$"},
                    "time": {"type": "number", "minimum": 0},
                    "request": {"type": "object", "required": ["method", "url", "httpVersion", "cookies", "headers",
                                                               "queryString", "headersSize", "bodySize"],
                                "properties": {"method": {"type": "string"}, "url": {"type": "string"},
                                               "cookies": {"type": "array"}, "headers": _NAME_VALUE,
                                               "queryString": _NAME_VALUE, "headersSize": {"type": "integer"},
                                               "bodySize": {"type": "integer"}}},
                    "response": {"type": "object", "required": ["status", "statusText", "httpVersion", "cookies", "headers",
                                                                "content", "redirectURL", "headersSize", "bodySize"],
                                 "properties": {"status": {"type": "integer"}, "headers": _NAME_VALUE,
                                                "content": {"type": "object", "required": ["size", "mimeType"]},
                                                "redirectURL": {"type": "string"}}},
                    "cache": {"type": "object"},
                    "timings": {"type": "object", "required": ["send", "wait", "receive"],
                                "properties": {"send": _TIMING, "wait": _TIMING, "receive": _TIMING}},
                }}},
        }}},
}


async def test_the_network_log_saved_as_har_passes_the_schema_and_lists_the_pages_requests(tools, site):
    await tools.call("browser_navigate", {"url": site.url("network.html")})
    page = (await tools.call("browser_snapshot", {})).text
    await tools.call("browser_click", {"ref": ref_of(page, 'button "Load data"')})
    await tools.call("browser_wait_for", {"text": "loaded 200 and 404"})
    reply = await tools.call("browser_network_requests", {"har": True, "include_static": True})
    assert not reply.is_error, reply.text
    path = Path(next(f for f in reply.files if f.endswith(".har")))
    assert path.is_relative_to(tools.files.folder) and f"as HAR 1.2: {path}" in reply.text
    har = json.loads(path.read_text())
    jsonschema.validate(har, HAR_12)
    entries = {e["request"]["url"].removeprefix(site.url("")).lstrip("/"): e for e in har["log"]["entries"]}
    assert {"network.html", "network-style.css", "echo?item=1", "status/404"} <= set(entries)
    assert entries["status/404"]["response"]["status"] == 404
    assert entries["echo?item=1"]["request"]["queryString"] == [{"name": "item", "value": "1"}]
    assert any(h["name"].lower() == "content-type" for h in entries["network.html"]["response"]["headers"])
    assert entries["network.html"]["response"]["content"]["mimeType"].startswith("text/html")
    assert path.stat().st_mode & 0o077 == 0


@pytest.mark.one_driver("the screencast under it is the Driver's, run on both drivers by the dashboard's tests")
async def test_a_five_second_recording_plays_for_five_seconds(tools, site):
    import av

    await tools.call("browser_navigate", {"url": site.url("actions/form.html")})
    began = time.monotonic()
    started = await tools.call("browser_recording", {"action": "start", "fps": 5})
    assert not started.is_error, started.text
    await tools.call("browser_type", {"selector": "#name", "text": "Ada"})  # something moves on the page
    await tools.call("browser_wait_for", {"time": 5})
    stopped = await tools.call("browser_recording", {"action": "stop"})
    elapsed = time.monotonic() - began
    assert not stopped.is_error, stopped.text
    path = Path(stopped.data["path"])
    assert path.is_relative_to(tools.files.folder) and path.suffix == ".webm" and str(path) in stopped.files
    assert path.stat().st_mode & 0o077 == 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "vp8"
        decoded = [frame for frame in container.decode(stream)]
        seconds = float(container.duration / av.time_base)
    assert len(decoded) == stopped.data["frames"] >= 2  # the page's frames (it changed), then the last one held
    # As long as the recording ran: the 5 s waited, plus the calls around it (however long they took).
    assert 5 <= seconds <= elapsed + 0.5 and decoded[0].width == 1280
    assert abs(seconds - stopped.data["seconds"]) < 0.5
    again = await tools.call("browser_recording", {"action": "stop"})
    assert again.is_error and "No recording runs" in again.text


@pytest.mark.one_driver("what closing does with a recording is above the Driver")
async def test_a_recording_still_running_when_the_conversation_ends_is_saved_not_dropped(webhand, tools, site):
    import av

    await tools.call("browser_navigate", {"url": site.url("actions/form.html")})
    assert not (await tools.call("browser_recording", {"action": "start", "fps": 5})).is_error
    await tools.call("browser_type", {"selector": "#name", "text": "Ada"})  # the page paints
    folder = tools.files.folder / "video"
    assert not folder.exists()
    await webhand.end_conversation(tools.conversation_id)
    saved = list(folder.glob("tab-*.webm"))
    assert len(saved) == 1 and saved[0].stat().st_mode & 0o077 == 0
    with av.open(str(saved[0])) as container:
        assert container.streams.video[0].codec_context.name == "vp8"
        assert sum(1 for _ in container.decode(video=0)) >= 1
