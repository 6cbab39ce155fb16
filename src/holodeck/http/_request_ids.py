"""Every request gets an id (the client's `X-Request-ID` when it is sane), kept in
`request.state.request_id`, returned in the `X-Request-ID` header and written in the
request log, so a client's report can be matched to the log's line."""

from __future__ import annotations

import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_CLIENT_ID = re.compile(rb"^[A-Za-z0-9._:-]{1,64}$")


class RequestIds:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"x-request-id", b"")
        request_id = given.decode() if _CLIENT_ID.match(given) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"], state["started"] = request_id, time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k != b"x-request-id"]
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_id)
