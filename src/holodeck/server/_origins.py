"""What a browser may make this server do. A page on another site can send requests
to 127.0.0.1 (and, by DNS rebinding, under its own name): a server listening on a
loopback address answers only requests addressed to a loopback name, and no server
takes a state-changing request (POST, PUT, PATCH, DELETE) from a page whose `Origin`
is neither its own nor one of `cors_origins`."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from holodeck.net import loopback_name
from holodeck.server._errors import ApiError, refuse

_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class BrowserGuard:
    def __init__(
        self, app: ASGIApp, *, loopback: bool, port: int, cors_origins: tuple[str, ...]
    ) -> None:
        self.app, self.loopback, self.port = app, loopback, port
        self.origins = frozenset(cors_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        origin = headers.get(b"origin")
        try:
            if self.loopback and host and not _loopback_name(host):
                raise ApiError(
                    421,
                    "wrong_host",
                    f"this server listens on a loopback address and answers only requests "
                    f"addressed to it, not to {host!r}",
                    hint=f"use http://127.0.0.1:{self.port}/ (or localhost); to serve a "
                    "network, listen on its address with --host, behind API keys",
                )
            if origin is not None and scope["method"] in _CHANGING:
                self._check_origin(origin.decode("latin-1"), host)
        except ApiError as error:
            await refuse(scope, receive, send, error)
            return
        await self.app(scope, receive, send)

    def _check_origin(self, origin: str, host: str) -> None:
        if "*" in self.origins or origin in self.origins:
            return
        if host and urlsplit(origin).netloc == host:  # the server's own pages
            return
        raise ApiError(
            403,
            "origin_refused",
            f"a page from {origin} may not change anything on this server",
            hint="to let that site's pages call this API, add its origin to "
            "deployment.cors_origins",
        )


def _loopback_name(host: str) -> bool:
    """`host` (a Host header: name or address, and maybe a port) names this machine."""
    if host.startswith("["):  # [::1]:8000
        name = host[1 : host.find("]")] if "]" in host else ""
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return loopback_name(name)
