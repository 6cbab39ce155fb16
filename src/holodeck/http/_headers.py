"""Headers every answer carries unless its route set its own: no content sniffing (a JSON
body holding user text is never run as HTML or script), no referrer leaving with a link,
and no framing by another site's page."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

SECURITY_HEADERS: Mapping[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


class SecurityHeaders:
    """Adds `SECURITY_HEADERS` and `extra` (a page's Content-Security-Policy, say) to each
    answer that has not set them itself."""

    def __init__(self, app: ASGIApp, *, extra: Mapping[str, str] | None = None) -> None:
        self.app = app
        wanted = {**SECURITY_HEADERS, **(extra or {})}
        self.headers = [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in wanted.items()
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in self.headers if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
