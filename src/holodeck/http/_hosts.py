"""DNS rebinding: a page on another site can send requests to 127.0.0.1, and, once its own
name resolves there, read the answers. A service listening on a loopback address answers
only requests addressed to a loopback name (`localhost`, `127.0.0.1`, `[::1]`, any port)
or with no `Host` at all; others get 421 `wrong_host`."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from holodeck.http._errors import ApiError, Respond, error_response, refuse
from holodeck.net import loopback_name


def loopback_host(host: str) -> bool:
    """`host` (a Host header: name or address, and maybe a port) names this machine."""
    if host.startswith("["):  # [::1]:8000
        name = host[1 : host.find("]")] if "]" in host else ""
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return loopback_name(name)


class LoopbackOnly:
    """Refuses requests addressed to another name; add it only to a loopback listener.
    `advice` ends the hint (what to do to serve others); `respond` renders the refusal."""

    def __init__(
        self, app: ASGIApp, *, advice: str = "", respond: Respond = error_response
    ) -> None:
        self.app, self.advice, self.respond = app, advice, respond

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if host and not loopback_host(host):
                await refuse(scope, receive, send, self._wrong_host(scope, host), self.respond)
                return
        await self.app(scope, receive, send)

    def _wrong_host(self, scope: Scope, host: str) -> ApiError:
        server = scope.get("server") or ("127.0.0.1", None)
        port = f":{server[1]}" if server[1] else ""
        hint = f"use http://127.0.0.1{port}/ (or localhost)"
        return ApiError(
            421,
            "wrong_host",
            f"this server listens on a loopback address and answers only requests "
            f"addressed to it, not to {host!r}",
            hint=f"{hint}; {self.advice}" if self.advice else hint,
        )
