"""A session's network log as HAR 1.2 (the HTTP Archive format Chrome DevTools imports).

What webhand knows of each request (``NetworkEntry``: method, URL, status, type, when, how long,
how big) and, when the browser still has them, its headers (``RequestDetail``) become one HAR
entry each. Timings webhand does not measure are -1, as the format allows; a request that failed
has status 0 and its error in ``_error`` (DevTools' own custom field). Header values are masked
before they are written, like every reply.
"""

from __future__ import annotations

import datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from webhand import __version__
from webhand.engine.driver import NetworkEntry, RequestDetail
from webhand.security.masking import Masker


def _headers(headers: dict[str, str], masker: Masker) -> list[dict[str, str]]:
    return [{"name": name, "value": masker.text(str(value))} for name, value in headers.items()]


def _when(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc).isoformat(timespec="milliseconds")


def har_entry(entry: NetworkEntry, detail: RequestDetail | None, masker: Masker) -> dict[str, Any]:
    duration_ms = round(entry.duration * 1000, 3) if entry.duration is not None else 0
    request_headers = detail.request_headers if detail else {}
    response_headers = detail.response_headers if detail else {}
    body = detail.request_body if detail else None
    request: dict[str, Any] = {
        "method": entry.method, "url": masker.text(entry.url), "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _headers(request_headers, masker),
        "queryString": [{"name": k, "value": masker.text(v)}
                        for k, v in parse_qsl(urlsplit(entry.url).query, keep_blank_values=True)],
        "headersSize": -1, "bodySize": len(body) if body is not None else 0}
    if body:
        request["postData"] = {"mimeType": request_headers.get("content-type", request_headers.get("Content-Type", "")),
                               "text": masker.text(body.decode(errors="replace"))}
    mime = entry.mime_type or response_headers.get("content-type", "")
    har: dict[str, Any] = {
        "startedDateTime": _when(entry.started), "time": duration_ms, "request": request,
        "response": {"status": entry.status or 0, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
                     "headers": _headers(response_headers, masker),
                     "content": {"size": entry.size if entry.size is not None else -1, "mimeType": mime},
                     "redirectURL": masker.text(response_headers.get("location", "")),
                     "headersSize": -1, "bodySize": entry.size if entry.size is not None else -1},
        "cache": {}, "timings": {"send": 0, "wait": duration_ms, "receive": 0},
        "_resourceType": entry.resource_type}
    if entry.failure:
        har["_error"] = masker.text(entry.failure)
    return har


def har_log(entries: list[tuple[NetworkEntry, RequestDetail | None]], masker: Masker) -> dict[str, Any]:
    """The whole HAR document for ``entries``, oldest first."""
    ordered = sorted(entries, key=lambda pair: pair[0].started)
    return {"log": {"version": "1.2", "creator": {"name": "webhand", "version": __version__},
                    "entries": [har_entry(entry, detail, masker) for entry, detail in ordered]}}
