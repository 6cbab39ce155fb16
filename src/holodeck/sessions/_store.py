"""The `SessionStore` interface every store implements."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import TypeVar

from holodeck.errors import BusyError, StoreError

_T = TypeVar("_T")

DEFAULT_LOCK_WAIT_S = 60.0  # how long a turn waits for the previous turn of its session


class SessionBusy(BusyError):
    """A session stayed locked by another turn for longer than the wait allowed."""


class SessionStoreError(StoreError):
    """The store cannot be opened, read or written."""


class SessionStore(ABC):
    """Sessions as JSON documents by id, with an optional time to live.

    `ttl_s`: a session not saved for that long is gone (load returns None); None keeps
    sessions until deleted. `lock(id)` serialises turns of one session: hold it from the
    load to the save of a turn. Stores are async context managers that close what they open.
    """

    def __init__(
        self, *, ttl_s: float | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        if ttl_s is not None and ttl_s <= 0:
            raise ValueError("ttl_s must be positive (or None to keep sessions)")
        self.ttl_s = ttl_s
        self.clock = clock  # seconds since the epoch; shared by processes sharing a store

    @abstractmethod
    async def load(self, session_id: str) -> bytes | None:
        """The session's JSON, or None when there is no such session (or it expired)."""

    @abstractmethod
    async def save(self, session_id: str, data: bytes) -> None:
        """Store the session's JSON, replacing what was there; restarts its time to live."""

    @abstractmethod
    async def delete(self, session_id: str) -> bool:
        """Forget the session; True when there was one."""

    @abstractmethod
    def lock(
        self, session_id: str, *, wait_s: float = DEFAULT_LOCK_WAIT_S
    ) -> AbstractAsyncContextManager[None]:
        """Hold the session for one turn; raises `SessionBusy` after `wait_s`."""

    @abstractmethod
    async def update_counters(
        self, key: str, change: Callable[[bytes | None], tuple[bytes, _T]], *, keep_s: float
    ) -> _T:
        """Apply `change` to the counters document `key` (None when there is none yet)
        atomically for every process sharing the store: `change` gets what is stored and
        returns what to store and what to answer. It may run more than once (a store that
        retries on a conflict), so it only computes. The document is kept `keep_s` after
        its last change."""

    async def aclose(self) -> None:  # noqa: B027 (stores without resources keep this)
        """Release what the store holds open (connections, threads)."""

    async def __aenter__(self) -> SessionStore:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()
