"""The network layer of the origin policy: a loopback proxy every request of a context goes through.

The request layer in the browser (``engine/pw/policy.py``) sees what Playwright routes: the
requests of pages, frames, dedicated and service workers. It never sees WebSockets (their
handshake is not interceptable), the requests of shared workers, or a redirect hop in a worker.
A browser context created with a proxy sends *everything* through that proxy, on every channel,
so this proxy is where the policy holds for all of them:

- ``CONNECT host:port`` (https, wss, and ws: Chromium tunnels WebSockets): checked, then tunneled
  untouched. When only one of http/https is allowed on that host and port, the first byte the
  browser sends tells them apart (0x16 opens a TLS handshake);
- ``GET http://host/path`` (plain http): checked, then sent on as one request per connection.

A host name is resolved here, not in the browser, and each address it resolves to is checked
against the blocked rules too, so a name whose DNS points at a blocked address is refused, and
the connection goes to the address that was checked. A refusal reaches the browser as a 403 (it
never reaches the server) and is reported through ``on_refusal``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

from webhand.security.host_names import InvalidHost, is_loopback, normalize_host
from webhand.security.origins import OriginRules

log = logging.getLogger("webhand.policy")

#: The header on the 403 this proxy answers in place of a refused http:// request.
REFUSED_HEADER = "x-webhand-policy"

_MAX_HEAD = 64 * 1024  # the stream limit is a multiple of it: a longer head drops the connection
#: Chromium opens proxy connections ahead of need; an idle one is closed after this long.
_HEAD_SECONDS = 120.0
_CONNECT_SECONDS = 15.0
_TLS_HANDSHAKE = 0x16
_ESTABLISHED = b"HTTP/1.1 200 Connection Established\r\n\r\n"
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te",
               "trailer", "upgrade"}

Refusal = Callable[[str, str, str], None]  # method, url, reason


class Refused(Exception):
    pass


class PolicyProxy:
    """One context's proxy on 127.0.0.1. ``start`` gives its address; ``close`` ends every tunnel."""

    def __init__(self, rules: OriginRules, on_refusal: Refusal, *, refuse_http_with_403: bool = True) -> None:
        self.rules = rules
        self.on_refusal = on_refusal
        # A refused http:// request gets a 403 (the browser shows it, the driver names it), or, with
        # False, its connection is closed unanswered: a network error, which is what the page must
        # see where the browser layer cannot fail the request itself (Firefox's service workers).
        self.refuse_http_with_403 = refuse_http_with_403
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0, limit=_MAX_HEAD * 4)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        self._server = None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ValueError):
            pass  # the browser or the server hung up, or sent what no browser sends: drop the connection
        except asyncio.CancelledError:
            pass  # close(): this task is the top of its own connection, nobody else waits for it
        except Exception:  # noqa: BLE001 - a proxy bug must cost one connection, never the server
            log.exception("policy proxy: unexpected error")
        finally:
            self._connections.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_SECONDS)
        method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
        if method == "CONNECT":
            await self._tunnel(target, reader, writer)
        elif target.startswith("http://"):
            await self._forward(method, target, head, reader, writer)
        else:
            await _answer(writer, 400, "this is webhand's policy proxy: send absolute http:// URLs or CONNECT")

    # CONNECT -------------------------------------------------------------------------------------
    async def _tunnel(self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, port = _host_port(target, default_port=443)
        refusals = {scheme: self.rules.check_origin(scheme, host, port) for scheme in ("https", "http")}
        allowed = [scheme for scheme, reason in refusals.items() if not reason]
        if not allowed:
            reason = refusals["https"] or ""
            self.on_refusal("CONNECT", f"{host}:{port}", reason)
            return await _answer(writer, 403, reason)
        first = b""
        try:
            if len(allowed) == 2:
                upstream = await self._open(allowed, host, port)
                writer.write(_ESTABLISHED)
            else:  # allowed for one scheme only: the browser's first byte says which this is
                writer.write(_ESTABLISHED)
                first = await asyncio.wait_for(reader.readexactly(1), _HEAD_SECONDS)
                scheme = "https" if first[0] == _TLS_HANDSHAKE else "http"
                reason = refusals[scheme]
                if reason:
                    self.on_refusal("CONNECT", f"{scheme}://{host}:{port}", reason)
                    return
                upstream = await self._open([scheme], host, port)
        except (Refused, OSError) as error:
            if not first:  # the browser has not been told the tunnel is open yet: say why not
                refused = isinstance(error, Refused)
                await _answer(writer, 403 if refused else 502,
                              str(error) if refused else f"webhand's policy proxy could not reach {host}:{port}: {error}")
            return
        if first:
            upstream[1].write(first)
        await _pipe_both(reader, writer, *upstream)

    # plain http ------------------------------------------------------------------------------------
    async def _forward(self, method: str, target: str, head: bytes, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> None:
        parts = urlsplit(target)
        host_text, port = _host_port(parts.netloc.rpartition("@")[2], default_port=80)
        reason = self.rules.check(target)
        if reason:
            self.on_refusal(method, target, reason)
            return await self._refuse_http(writer, reason)
        try:
            up_reader, up_writer = await self._open(["http"], host_text, port, method=method, url=target)
        except Refused as refused:
            return await self._refuse_http(writer, str(refused))
        except OSError as error:
            return await _answer(writer, 502, f"webhand's policy proxy could not reach {host_text}:{port}: {error}")
        path = parts.path or "/"
        lines = head.decode("latin-1").split("\r\n")
        request = [f"{method} {path}{'?' + parts.query if parts.query else ''} {lines[0].rsplit(' ', 1)[1]}"]
        request += [line for line in lines[1:] if line and line.split(":", 1)[0].strip().lower() not in _HOP_BY_HOP]
        up_writer.write(("\r\n".join(request + ["Connection: close", "", ""])).encode("latin-1"))
        # One request per connection: the reply is marked Connection: close so that the browser
        # sends its next request (maybe to another host) on a new connection, checked again.
        body = asyncio.ensure_future(_pipe(reader, up_writer))
        try:
            while True:
                response = await asyncio.wait_for(up_reader.readuntil(b"\r\n\r\n"), _HEAD_SECONDS)
                status = response.split(b" ", 2)[1] if response.count(b" ") >= 2 else b""
                if status.startswith(b"1") and status != b"101":  # 100 Continue, 103 Early Hints
                    writer.write(response)
                    continue
                writer.write(_close_after(response))
                break
            await _pipe(up_reader, writer)
        finally:
            body.cancel()
            up_writer.close()

    # connecting ------------------------------------------------------------------------------------
    async def _refuse_http(self, writer: asyncio.StreamWriter, reason: str) -> None:
        if self.refuse_http_with_403:
            await _answer(writer, 403, reason)
        # else: _accept closes the connection, unanswered

    async def _open(self, schemes: list[str], host: str, port: int, *, method: str = "CONNECT",
                    url: str | None = None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Resolve ``host``, refuse if any address it resolves to is blocked, and connect to one
        of those addresses (the ones checked: a second lookup could answer otherwise)."""
        addresses = await _resolve(host, port)
        for ip in addresses:
            for scheme in schemes:
                reason = self.rules.check_address(scheme, host, ip, port)
                if reason:
                    self.on_refusal(method, url or f"{host}:{port}", reason)
                    raise Refused(reason)
        last: OSError = OSError(f"{host} has no address")
        for ip in addresses:
            try:
                return await asyncio.wait_for(asyncio.open_connection(ip, port, limit=_MAX_HEAD * 16), _CONNECT_SECONDS)
            except (OSError, asyncio.TimeoutError) as error:
                last = error if isinstance(error, OSError) else OSError(f"connecting to {ip} timed out")
        raise last


async def _resolve(host: str, port: int) -> list[str]:
    """The addresses of a normalized host. Names under localhost are loopback without a lookup,
    as in Chromium; an IP literal is itself."""
    if host.startswith("[") or host.replace(".", "").isdigit():
        return [host.strip("[]")]
    if is_loopback(host):
        return ["127.0.0.1", "::1"]
    found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def _host_port(text: str, default_port: int) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or (":" in host and not host.endswith("]")):  # no port, or a bracketed IPv6 without one
        host, port = text, str(default_port)
    try:
        return normalize_host(host), int(port)
    except (InvalidHost, ValueError):
        raise ValueError(f"bad proxy target {text!r}") from None


def _close_after(head: bytes) -> bytes:
    lines = head.decode("latin-1").split("\r\n")
    kept = [lines[0]] + [line for line in lines[1:] if line and line.split(":", 1)[0].strip().lower()
                         not in ("connection", "keep-alive", "proxy-connection")]
    return "\r\n".join(kept + ["Connection: close", "", ""]).encode("latin-1")


async def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reasons = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}
    body = f"webhand: {text}\n".encode()
    marker = f"{REFUSED_HEADER}: refused\r\n" if status == 403 else ""  # lets the browser side tell our 403 apart
    writer.write(f"HTTP/1.1 {status} {reasons[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n{marker}"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        pass  # the other side went away


async def _pipe_both(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     up_reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter) -> None:
    # When either side is done, so is the tunnel: a peer that vanished without a close must not
    # keep the other direction (an idle WebSocket server, say) open for ever.
    directions = [asyncio.ensure_future(_pipe(reader, up_writer)), asyncio.ensure_future(_pipe(up_reader, writer))]
    try:
        await asyncio.wait(directions, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for direction in directions:
            direction.cancel()
        up_writer.close()
