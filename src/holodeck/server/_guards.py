"""What stands between a request and a turn: the body size limit, bearer keys, the
per-key rate limit, and admission (a bounded number of turns running and waiting; beyond
that 503 with Retry-After rather than a queue that grows until memory runs out)."""

from __future__ import annotations

import asyncio
import hmac
import json
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from holodeck.server._errors import ApiError


class BodyLimit:
    """Refuses request bodies over `limit` bytes with 413, whether or not the client
    said their length up front."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await self._refuse(scope, send)
            return
        if length is not None:
            await self.app(scope, receive, send)  # the server stops a body at its length
            return
        # no length given (chunked): read it here, up to the limit, then hand it on
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await self._refuse(scope, send)
                return
        whole: Message = {"type": "http.request", "body": bytes(body), "more_body": False}
        await self.app(scope, _replay([whole], then=receive), send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        error = {
            "type": "too_large",
            "message": f"the request body is larger than {self.limit} bytes",
            "hint": "send a smaller body, or raise deployment.max_request_bytes",
        }
        request_id = scope.get("state", {}).get("request_id")
        body = json.dumps({"error": error, "request_id": request_id}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A `receive` giving `messages` first, then what `then` gives (a disconnect)."""
    queue = list(messages)

    async def receive() -> Message:
        if queue:
            return queue.pop(0)
        if then is None:
            return {"type": "http.disconnect"}
        return await then()

    return receive


class KeyGuard:
    """Bearer API keys (none configured: open) and a per-key token bucket."""

    def __init__(self, keys: tuple[str, ...], requests_per_minute: int | None) -> None:
        self.keys = keys
        self.rate = requests_per_minute
        self._buckets: dict[str, tuple[float, float]] = {}  # who -> (tokens, at)

    def check(self, request: Request) -> None:
        who = self._authenticate(request)
        if self.rate is not None:
            self._spend(who)

    def _authenticate(self, request: Request) -> str:
        client = request.client.host if request.client else "?"
        if not self.keys:
            return f"address:{client}"
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise ApiError(
                401,
                "unauthorized",
                "this server needs an API key",
                hint="send `Authorization: Bearer <key>` with a key from deployment.auth.api_keys",
                headers={"WWW-Authenticate": "Bearer"},
            )
        for index, key in enumerate(self.keys):
            if hmac.compare_digest(token.encode(), key.encode()):
                return f"key:{index}"  # buckets are named by position: no key is kept twice
        raise ApiError(
            401,
            "unauthorized",
            "the API key is not one of this server's keys",
            hint="check the key in `Authorization: Bearer <key>`",
            headers={"WWW-Authenticate": "Bearer"},
        )

    def _spend(self, who: str) -> None:
        assert self.rate is not None
        per_second = self.rate / 60.0
        now = time.monotonic()
        tokens, at = self._buckets.get(who, (float(self.rate), now))
        tokens = min(float(self.rate), tokens + (now - at) * per_second)
        if tokens < 1.0:
            wait = math.ceil((1.0 - tokens) / per_second)
            self._buckets[who] = (tokens, now)
            raise ApiError(
                429,
                "rate_limited",
                f"more than {self.rate} requests a minute",
                hint=f"retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )
        self._buckets[who] = (tokens - 1.0, now)


class TurnSlots:
    """At most `running` turns at once and `waiting` more queued; others are refused."""

    def __init__(self, running: int, waiting: int) -> None:
        self.running, self.waiting = running, waiting
        self._free = asyncio.Semaphore(running)
        self.admitted = 0  # running + waiting now

    def reserve(self) -> _Reservation:
        """Admission decided now (raises 503), the wait for a slot later: a streamed
        answer must know its status before its body starts."""
        if self.admitted >= self.running + self.waiting:
            raise ApiError(
                503,
                "overloaded",
                f"the server is busy ({self.running} turns running, {self.waiting} waiting)",
                hint="retry shortly",
                headers={"Retry-After": "1"},
            )
        self.admitted += 1
        return _Reservation(self)


class _Reservation:
    def __init__(self, slots: TurnSlots) -> None:
        self._slots = slots
        self._done = False

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        try:
            async with self._slots._free:
                yield
        finally:
            self.release()

    def release(self) -> None:
        if not self._done:
            self._done = True
            self._slots.admitted -= 1
