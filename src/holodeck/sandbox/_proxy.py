"""`OutboundProxy`: the only way out of a sandbox with `allow_network: true`. An HTTP proxy
on a Unix socket (bound into the sandbox, where the relay forwards 127.0.0.1:3128 to it)
that checks every destination with the outbound policy `web_fetch` uses, and connects to
the address it checked (a name that resolves elsewhere the second time reaches nothing).

    async with OutboundProxy(policy) as proxy:
        ...  # bind proxy.folder into the sandbox; the command's requests come through

It speaks `CONNECT host:port` (HTTPS, and any TLS: the tunnel carries bytes it does not
read) and plain HTTP with an absolute URI. A refused destination is answered `403` with
the policy's reason, as the status line's reason phrase (what Python's urllib, pip and
curl -v print) and as the body (what curl prints).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from holodeck.net import OutboundBlocked, OutboundPolicy

SOCKET_NAME = "proxy.sock"
MAX_HEAD = 64 * 1024  # bytes of a request line and its headers
CONNECT_TIMEOUT = 30.0  # seconds to reach a checked address
_DROPPED = (b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive")


class _Refusal(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class OutboundProxy:
    """The proxy of one sandboxed call (or terminal): its socket is `folder / SOCKET_NAME`;
    `user` (a uid) owns the folder, so a sandbox run as that user can bind and reach it.
    Leaving the context closes the socket, every open connection and the folder."""

    def __init__(self, policy: OutboundPolicy, *, user: int | None = None) -> None:
        self.policy = policy
        self.user = user
        self.folder = Path(tempfile.mkdtemp(prefix="holodeck-net-"))
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> OutboundProxy:
        path = str(self.folder / SOCKET_NAME)
        self._server = await asyncio.start_unix_server(self._accept, path=path, limit=MAX_HEAD)
        if self.user is not None:
            os.chown(self.folder, self.user, self.user)
            os.chown(path, self.user, self.user)
        return self

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        shutil.rmtree(self.folder, ignore_errors=True)

    async def __aenter__(self) -> OutboundProxy:
        try:
            return await self.start()
        except BaseException:
            await self.aclose()
            raise

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError):
            pass  # the command or the destination hung up
        finally:
            self._writers.discard(writer)
            self._tasks.discard(task)
            writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await _read_head(reader)
            method, target, version, headers = _parse(head)
            if method == b"CONNECT":
                host, port = _authority(target)
                upstream = await self._open(host, port)
                writer.write(version + b" 200 Connection established\r\n\r\n")
            else:
                host, port, first_line = _absolute(method, target, version, self.policy)
                upstream = await self._open(host, port)
                # one request per connection: the answer ends when the server hangs up
                upstream[1].write(first_line + _forwarded(headers) + b"Connection: close\r\n\r\n")
        except _Refusal as refusal:
            writer.write(_answer(refusal))
            await writer.drain()
            return
        up_reader, up_writer = upstream
        self._writers.add(up_writer)
        try:
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        finally:
            self._writers.discard(up_writer)
            up_writer.transport.abort()

    async def _open(
        self, host: str, port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            addresses = await self.policy.addresses(host, port)
        except OutboundBlocked as blocked:
            raise _Refusal(403, str(blocked)) from None
        except (OSError, UnicodeError):
            raise _Refusal(502, f"{host} does not resolve") from None
        failure = "it has no address"
        for address in addresses:  # the checked addresses only, never the name again
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT):
                    return await asyncio.open_connection(str(address), port)
            except (OSError, TimeoutError) as error:
                failure = getattr(error, "strerror", None) or "no answer"
        raise _Refusal(502, f"cannot connect to {host}:{port}: {failure}")


async def _read_head(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise _Refusal(431, f"the request's head is longer than {MAX_HEAD} bytes") from None


def _parse(head: bytes) -> tuple[bytes, bytes, bytes, list[bytes]]:
    first, *headers = head[:-4].split(b"\r\n")
    parts = first.split()
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        raise _Refusal(400, "not an HTTP/1 proxy request")
    return parts[0], parts[1], parts[2], headers


def _authority(target: bytes) -> tuple[str, int]:
    parts = urlsplit("//" + target.decode("latin-1"))
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise _Refusal(400, "CONNECT needs host:port")
    return parts.hostname, port


def _absolute(
    method: bytes, target: bytes, version: bytes, policy: OutboundPolicy
) -> tuple[str, int, bytes]:
    url = target.decode("latin-1")
    if not url.lower().startswith("http://"):
        try:
            policy.check_url(url)
        except OutboundBlocked as blocked:
            raise _Refusal(403, str(blocked)) from None
        raise _Refusal(400, "send https:// requests through CONNECT (an HTTPS proxy)")
    parts = urlsplit(url)
    try:
        port = parts.port or 80
    except ValueError:
        raise _Refusal(400, f"{url}: not a valid port") from None
    if not parts.hostname:
        raise _Refusal(400, f"{url}: no host")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, port, b"%s %s %s\r\n" % (method, path.encode("latin-1"), version)


def _forwarded(headers: list[bytes]) -> bytes:
    kept = [h for h in headers if h.split(b":", 1)[0].strip().lower() not in _DROPPED]
    return b"".join(h + b"\r\n" for h in kept)


def _answer(refusal: _Refusal) -> bytes:
    # the reason on the status line must be one line of printable ASCII
    reason = refusal.reason.encode("ascii", "replace").replace(b"\r", b" ").replace(b"\n", b" ")
    body = reason + b"\n"
    return (
        b"HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
        % (refusal.status, reason, len(body), body)
    )


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()  # a half-close passes through (the request is all sent)
    except OSError:
        writer.transport.abort()
