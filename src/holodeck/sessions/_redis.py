"""Sessions in Redis: every server process that reaches it shares them, on one machine or
many. A session is a hash (its JSON and when it was saved) that Redis expires itself when
there is a time to live. The lock is redis-py's `Lock` (`redis.asyncio.lock`): a key set
only when absent, with the lease as its timeout, extended while held and deleted only by
its owner (its token checked in Redis, in one script, on extend and release); the waiting,
the renewal and one process's turns queueing are `LeasedStore`'s. The `redis` package is
imported on first use."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from holodeck.sessions._leased import LEASE_S, LeasedStore
from holodeck.sessions._remote import masked, missing, server_error

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.lock import Lock

_T = TypeVar("_T")
_CONNECT_TIMEOUT_S = 10.0
_RETRIES = 3  # a dropped connection is tried again this often, quickly, before failing
_HINT = (
    "start Redis at that address, or give the store another url (redis://[:password@]host:port/db)"
)

# An expired session goes only if it was not saved again meanwhile.
_FORGET = """
if redis.call('hget', KEYS[1], 'saved_at') == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class RedisSessionStore(LeasedStore):
    """Sessions under `prefix` in the Redis at `url` (`redis://[:password@]host:port/db`)."""

    def __init__(
        self,
        url: str,
        *,
        ttl_s: float | None = None,
        lease_s: float = LEASE_S,
        clock: Callable[[], float] = time.time,
        prefix: str = "holodeck:",
    ) -> None:
        super().__init__(ttl_s=ttl_s, lease_s=lease_s, clock=clock)
        self.url = url
        self.prefix = prefix
        self._redis: Redis | None = None
        self._held: dict[str, Lock] = {}  # the locks this store holds, by session

    def __repr__(self) -> str:
        return f"RedisSessionStore({masked(self.url)!r})"

    def _session_key(self, session_id: str) -> str:
        return f"{self.prefix}session:{session_id}"

    def _lock_key(self, session_id: str) -> str:
        return f"{self.prefix}lock:{session_id}"

    def _counters_key(self, key: str) -> str:
        return f"{self.prefix}counters:{key}"

    # -- the client

    def _client(self) -> Redis:
        if self._redis is None:
            try:
                from redis.asyncio import Redis
                from redis.asyncio.retry import Retry
                from redis.backoff import ExponentialWithJitterBackoff
            except ImportError:
                raise missing("redis", "redis") from None
            try:
                self._redis = Redis.from_url(
                    self.url,
                    socket_connect_timeout=_CONNECT_TIMEOUT_S,
                    retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=0.5), _RETRIES),
                )
            except ValueError as error:  # an address redis cannot read
                raise server_error("Redis", self.url, error, _HINT) from None
        return self._redis

    async def _call(self, work: Callable[[Redis], Awaitable[_T]]) -> _T:
        """`work` on the client; Redis's failures become `SessionStoreError`."""
        client = self._client()
        from redis.exceptions import RedisError

        try:
            return await work(client)
        except (RedisError, OSError) as error:
            raise server_error("Redis", self.url, error, _HINT) from None

    async def aclose(self) -> None:
        client, self._redis = self._redis, None
        if client is not None:
            await client.aclose()  # and its connection pool, which the client owns

    # -- sessions

    async def load(self, session_id: str) -> bytes | None:
        key = self._session_key(session_id)
        data, saved = await self._call(lambda r: r.hmget(key, ["data", "saved_at"]))
        if data is None or saved is None:
            return None
        if self.ttl_s is not None and self.clock() - float(saved) > self.ttl_s:
            await self._call(lambda r: r.eval(_FORGET, 1, key, saved))
            return None
        return data.encode() if isinstance(data, str) else data  # bytes: responses are raw

    async def save(self, session_id: str, data: bytes) -> None:
        key = self._session_key(session_id)

        async def save(client: Redis) -> None:
            async with client.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping={"data": bytes(data), "saved_at": repr(self.clock())})
                if self.ttl_s is None:
                    pipe.persist(key)  # kept until deleted, even if once saved with a ttl
                else:  # Redis drops it itself once stale, so nothing piles up
                    pipe.pexpire(key, math.ceil(self.ttl_s * 1000))
                await pipe.execute()

        await self._call(save)

    async def delete(self, session_id: str) -> bool:
        key = self._session_key(session_id)
        return bool(await self._call(lambda r: r.delete(key)))

    # -- counters

    async def update_counters(
        self, key: str, change: Callable[[bytes | None], tuple[bytes, _T]], *, keep_s: float
    ) -> _T:
        name = self._counters_key(key)
        from redis.exceptions import WatchError

        async def update(client: Redis) -> _T:
            async with client.pipeline(transaction=True) as pipe:
                while True:  # WATCH: a change by another process meanwhile runs it again
                    try:
                        await pipe.watch(name)
                        current = await pipe.get(name)
                        stored = current.encode() if isinstance(current, str) else current
                        data, answer = change(stored)
                        pipe.multi()  # type: ignore[no-untyped-call]
                        pipe.set(name, data, px=max(1, math.ceil(keep_s * 1000)))
                        await pipe.execute()
                        return answer
                    except WatchError:
                        continue

        return await self._call(update)

    # -- locks (taken, renewed and given back by `LeasedStore.lock`)

    async def _acquire(self, session_id: str) -> bool:
        from redis.asyncio.lock import Lock

        async def take(client: Redis) -> bool:
            # one try (LeasedStore waits between tries); the token is the store's name, in
            # the task-shared (not thread-local) place: the renewal is another task
            lease = Lock(
                client,
                self._lock_key(session_id),
                timeout=max(0.001, self.lease_s),
                blocking=False,
                thread_local=False,
            )
            if not await lease.acquire(token=self._owner):
                return False
            self._held[session_id] = lease
            return True

        return await self._call(take)

    async def _renew(self, session_id: str) -> bool:
        from redis.exceptions import LockError

        lease = self._held.get(session_id)
        if lease is None:
            return False

        async def extend(_: Redis) -> bool:
            try:
                return await lease.extend(self.lease_s, replace_ttl=True)
            except LockError:  # not ours any more: a stall let another process take it
                return False

        return await self._call(extend)

    async def _release(self, session_id: str) -> None:
        from redis.exceptions import LockError

        lease = self._held.pop(session_id, None)
        if lease is None:
            return

        async def give(_: Redis) -> None:
            # the lease ran out, or another process holds it now: not ours to give back
            with contextlib.suppress(LockError):
                await lease.release()

        await self._call(give)
