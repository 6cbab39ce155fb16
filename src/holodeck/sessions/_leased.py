"""The lock of stores shared by processes (SQLite, Redis, PostgreSQL): a lease with an
owner, taken in the shared place, renewed while held, and given back on release. A
process that dies while holding one frees it when the lease runs out."""

from __future__ import annotations

import asyncio
import time
import uuid
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from holodeck.sessions._local_locks import LocalLocks, busy
from holodeck.sessions._store import DEFAULT_LOCK_WAIT_S, SessionStore, SessionStoreError

LEASE_S = 600.0  # a lock outlives a crashed holder by at most this
RENEWALS_PER_LEASE = 3  # a held lease is renewed this often within its length
_POLL_S = (0.005, 0.2)  # first and longest pause between tries for a lock held elsewhere


class LeasedStore(SessionStore):
    """A store whose lock is a lease: subclasses take, renew and give it back in the
    shared place, in the name of `_owner` (one per store object)."""

    def __init__(
        self,
        *,
        ttl_s: float | None = None,
        lease_s: float = LEASE_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(ttl_s=ttl_s, clock=clock)
        if lease_s <= 0:
            raise ValueError("lease_s must be positive")
        self.lease_s = lease_s
        self._owner = uuid.uuid4().hex  # this store's name on the locks it holds
        self._locks = LocalLocks()

    @abstractmethod
    async def _acquire(self, session_id: str) -> bool:
        """Take the lease when nobody holds it (or the holder's ran out); True if taken."""

    @abstractmethod
    async def _renew(self, session_id: str) -> bool:
        """Push the held lease's end `lease_s` from now; False when it is no longer ours."""

    @abstractmethod
    async def _release(self, session_id: str) -> None:
        """Give the lease back, if it is still ours."""

    @asynccontextmanager
    async def lock(
        self, session_id: str, *, wait_s: float = DEFAULT_LOCK_WAIT_S
    ) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        # turns in this process queue here; only the first competes with other processes
        async with self._locks.hold(session_id, deadline):
            pause = _POLL_S[0]
            while not await self._acquire(session_id):
                if loop.time() + pause > deadline:
                    raise busy(session_id)
                await asyncio.sleep(pause)  # held by another process: try again shortly
                pause = min(pause * 2, _POLL_S[1])
            renewing = asyncio.create_task(
                self._keep(session_id), name=f"holodeck-lease-renewal:{session_id}"
            )
            try:
                yield
            finally:
                renewing.cancel()
                try:
                    await asyncio.wait([renewing])  # no renewal runs after the release
                finally:
                    await asyncio.shield(self._release(session_id))

    async def _keep(self, session_id: str) -> None:
        """Renew the lease until cancelled, so a turn longer than the lease keeps it."""
        while True:
            await asyncio.sleep(self.lease_s / RENEWALS_PER_LEASE)
            try:
                if not await self._renew(session_id):
                    return  # taken over after a stall: renewing would steal it back
            except SessionStoreError:
                pass  # the store is out of reach for now: try again at the next renewal
