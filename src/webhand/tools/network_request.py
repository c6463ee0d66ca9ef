"""One request in full: its headers and body, and on demand its response body.

Everything shown passes through the reply's masker (security/masking.py), so a secret the model
typed never comes back in a header or a body, in any encoding ``security.secret_spellings`` knows. A response
body larger than the inline cap is written to a file in the conversation's folder, masked; a binary
body is saved as it came unless a secret is in it.
"""

from __future__ import annotations

import mimetypes

from pydantic import Field

from webhand.durations import Timeout
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool

#: Types whose bodies are read as text (with any charset); everything else is binary.
_TEXT_TYPES = ("text/", "json", "javascript", "xml", "x-www-form-urlencoded", "svg", "graphql")


class RequestArgs(PageArgs):
    id: int = Field(ge=1, description="The request's #id from browser_network_requests.")
    response_body: bool = Field(False, description="Also fetch the response body from the browser.")
    max_chars: int = Field(4000, ge=100, le=100_000,
                           description="Longest body shown inline; a longer one is saved to a file and its path given.")
    timeout: Timeout = None


def _headers(headers: dict[str, str]) -> str:
    return "\n".join(f"  {name}: {value}" for name, value in sorted(headers.items())) or "  (none)"


def _as_text(data: bytes, content_type: str) -> str | None:
    """The body as text when it is text; None for binary data (an image, a font, a zip)."""
    if content_type and not any(kind in content_type.lower() for kind in _TEXT_TYPES):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None if not content_type else data.decode("latin-1")
    return None if "\x00" in text else text


@tool("browser_network_request", capability="network", read_only=True)
async def network_request(session: Session, args: RequestArgs, response: Response) -> None:
    """Show one request in full: request headers and body, response headers, and (response_body=true) its response
    body; secrets masked."""
    timeout = args.timeout or session.settings.timeout
    detail = await session.context.request_detail(args.id, timeout=timeout)
    entry = detail.entry
    source = "" if entry.source == "network" else f", from {entry.source}"
    response.add(f"#{entry.id} {entry.method} {entry.failure or entry.status} {response.clip(entry.url, 500)} "
                 f"({entry.resource_type}{source})")
    response.add("Request headers:\n" + _headers(detail.request_headers))
    data: dict[str, object] = {"request": entry.__dict__, "request_headers": detail.request_headers,
                               "response_headers": detail.response_headers}
    if detail.request_body:
        body = _as_text(detail.request_body, detail.request_headers.get("content-type", ""))
        if body is None:
            response.add(f"Request body: {len(detail.request_body):,} bytes of binary data.")
        else:
            response.add(f"Request body ({len(detail.request_body):,} bytes):")
            response.large(body, what="request body", limit=args.max_chars)
            data["request_body"] = body if len(body.encode()) <= args.max_chars else None
    response.add("Response headers:\n" + _headers(detail.response_headers))
    if args.response_body:
        data["response_body"] = await _response_body(session, args, detail.response_headers.get("content-type", ""),
                                                      response)
    else:
        response.add("(response_body=true shows the response body.)")
    response.data(data)


async def _response_body(session: Session, args: RequestArgs, content_type: str,
                         response: Response) -> dict[str, object]:
    body = await session.context.response_body(args.id, timeout=args.timeout or session.settings.timeout)
    kind = content_type.split(";")[0].strip() or "unknown type"
    text = _as_text(body, content_type)
    if text is None:
        suffix = mimetypes.guess_extension(kind) or ".bin"
        # A file webhand writes from page content is masked like a reply; a body without a secret is
        # saved exactly as it came.
        masked = response.masker.file_bytes(body)
        path = response.files.write(response.files.large_replies / f"response-{args.id}{suffix}", masked)
        note = " (a secret in it was masked, so the file differs from what the page got)" if masked != body else ""
        response.add(f"Response body: {len(body):,} bytes of {kind}, saved to {path}{note}.")
        return {"size": len(body), "path": str(path)}
    response.add(f"Response body ({len(body):,} bytes, {kind}):")
    response.large(text, what="response body", limit=args.max_chars, suffix=".txt")
    return {"size": len(body), "text": text if len(text.encode()) <= args.max_chars else None}
