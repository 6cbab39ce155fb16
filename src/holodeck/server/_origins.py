"""What a page on another site may make this server do: no server takes a state-changing
request (POST, PUT, PATCH, DELETE) from a page whose `Origin` is neither its own nor one
of `cors_origins`. (A loopback listener also refuses other names, DNS rebinding:
`holodeck.http.LoopbackOnly`.)"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from holodeck.server._errors import ApiError, refuse

_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# the end of a wrong_host refusal's hint, after the address to use
LOOPBACK_ADVICE = "to serve a network, listen on its address with --host, behind API keys"


class OriginGuard:
    def __init__(self, app: ASGIApp, *, cors_origins: tuple[str, ...]) -> None:
        self.app = app
        self.origins = frozenset(cors_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in _CHANGING:
            headers = dict(scope["headers"])
            origin = headers.get(b"origin")
            host = headers.get(b"host", b"").decode("latin-1")
            if origin is not None and not self._allowed(origin.decode("latin-1"), host):
                refused = ApiError(
                    403,
                    "origin_refused",
                    f"a page from {origin.decode('latin-1')} may not change anything on "
                    "this server",
                    hint="to let that site's pages call this API, add its origin to "
                    "deployment.cors_origins",
                )
                await refuse(scope, receive, send, refused)
                return
        await self.app(scope, receive, send)

    def _allowed(self, origin: str, host: str) -> bool:
        if "*" in self.origins or origin in self.origins:
            return True
        return bool(host) and urlsplit(origin).netloc == host  # the server's own pages
