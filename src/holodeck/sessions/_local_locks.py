"""Per-session locks within one process, kept only while someone holds or awaits them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from holodeck.sessions._store import SessionBusy


class LocalLocks:
    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}  # id -> (lock, users)

    def __len__(self) -> int:
        return len(self._locks)

    @asynccontextmanager
    async def hold(self, session_id: str, deadline: float) -> AsyncIterator[None]:
        """Hold `session_id`'s lock; `SessionBusy` when it is not free by `deadline`
        (a `loop.time()` value)."""
        lock, users = self._locks.get(session_id, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[session_id] = (lock, users + 1)
        try:
            try:
                async with asyncio.timeout_at(deadline):
                    await lock.acquire()
            except TimeoutError:
                raise busy(session_id) from None
            try:
                yield
            finally:
                lock.release()
        finally:  # the last user removes the lock: idle sessions cost nothing here
            held, count = self._locks[session_id]
            if count <= 1:
                del self._locks[session_id]
            else:
                self._locks[session_id] = (held, count - 1)


def busy(session_id: str) -> SessionBusy:
    return SessionBusy(
        f"session {session_id} is busy with another turn; send the next message when "
        "the answer to the previous one has arrived"
    )
