"""Sessions in the process's memory: the default for one server process."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from holodeck.sessions._local_locks import LocalLocks
from holodeck.sessions._store import DEFAULT_LOCK_WAIT_S, SessionStore

_T = TypeVar("_T")


class MemorySessionStore(SessionStore):
    def __init__(
        self, *, ttl_s: float | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__(ttl_s=ttl_s, clock=clock)
        self._data: dict[str, tuple[bytes, float]] = {}  # id -> (json, saved at)
        self._locks = LocalLocks()
        self._counters: dict[str, tuple[bytes, float]] = {}  # key -> (json, kept until)

    async def load(self, session_id: str) -> bytes | None:
        entry = self._data.get(session_id)
        if entry is None:
            return None
        data, saved = entry
        if self.ttl_s is not None and self.clock() - saved > self.ttl_s:
            del self._data[session_id]
            return None
        return data

    async def save(self, session_id: str, data: bytes) -> None:
        self._data[session_id] = (bytes(data), self.clock())

    async def delete(self, session_id: str) -> bool:
        return self._data.pop(session_id, None) is not None

    @asynccontextmanager
    async def lock(
        self, session_id: str, *, wait_s: float = DEFAULT_LOCK_WAIT_S
    ) -> AsyncIterator[None]:
        deadline = asyncio.get_running_loop().time() + wait_s
        async with self._locks.hold(session_id, deadline):
            yield

    async def update_counters(
        self, key: str, change: Callable[[bytes | None], tuple[bytes, _T]], *, keep_s: float
    ) -> _T:
        # no await between the read and the write: atomic on the one event loop
        now = self.clock()
        entry = self._counters.get(key)
        data, answer = change(entry[0] if entry is not None and entry[1] > now else None)
        self._counters[key] = (data, now + keep_s)
        for stale in [k for k, (_, until) in self._counters.items() if until <= now]:
            del self._counters[stale]
        return answer
