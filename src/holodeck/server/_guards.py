"""What stands between a request and a turn: the body size limit and admission (a
bounded number of turns running and waiting; beyond that 503 with Retry-After rather
than a queue that grows until memory runs out). Keys are checked in `_keys`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from holodeck.server._errors import ApiError, refuse


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
            await self._refuse(scope, receive, send)
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
                await self._refuse(scope, receive, send)
                return
        whole: Message = {"type": "http.request", "body": bytes(body), "more_body": False}
        await self.app(scope, _replay([whole], then=receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        error = ApiError(
            413,
            "too_large",
            f"the request body is larger than {self.limit} bytes",
            hint="send a smaller body, or raise deployment.max_request_bytes",
        )
        await refuse(scope, receive, send, error)


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


class TurnSlots:
    """At most `running` turns at once and `waiting` more queued, for a slot or for their
    session's turn before them; of those, at most `per_session` wait for one session, so
    one conversation's flood cannot fill the queue. Turns waiting for their session hold
    no slot: the slot is taken once the session is theirs (`_Reservation.run`)."""

    def __init__(self, running: int, waiting: int, per_session: int) -> None:
        self.running, self.waiting, self.per_session = running, waiting, per_session
        self._free = asyncio.Semaphore(running)
        self.admitted = 0  # running + waiting now
        self._sessions: dict[str, int] = {}  # session's store key -> its turns admitted

    def reserve(self, session: str | None = None) -> _Reservation:
        """Admission decided now (raises 503, or 429 for a session's full queue), the
        waits later: a streamed answer must know its status before its body starts."""
        if self.admitted >= self.running + self.waiting:
            raise ApiError(
                503,
                "overloaded",
                f"the server is busy ({self.running} turns running, {self.waiting} waiting)",
                hint="retry shortly",
                headers={"Retry-After": "1"},
            )
        if session is not None and self._sessions.get(session, 0) > self.per_session:
            raise ApiError(
                429,
                "session_queue_full",
                f"this session already has {self.per_session} turns waiting for the one "
                "it is running",
                hint="send a session's messages one after another, waiting for each answer; "
                "the limit is deployment.max_queued_turns_per_session",
                headers={"Retry-After": "1"},
            )
        self.admitted += 1
        if session is not None:
            self._sessions[session] = self._sessions.get(session, 0) + 1
        return _Reservation(self, session)


class _Reservation:
    def __init__(self, slots: TurnSlots, session: str | None) -> None:
        self._slots, self._session = slots, session
        self._done = False

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        try:
            async with self._slots._free:
                yield
        finally:
            self.release()

    def release(self) -> None:
        if self._done:
            return
        self._done = True
        slots = self._slots
        slots.admitted -= 1
        if self._session is not None:
            left = slots._sessions[self._session] - 1
            if left:
                slots._sessions[self._session] = left
            else:
                del slots._sessions[self._session]
