"""Sessions in PostgreSQL: every server process that reaches it shares them, on one
machine or many. The tables are created on first use; the lock is a lease row, as in the
SQLite store, renewed while held. The `psycopg` package is imported on first use."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from holodeck.sessions._leased import LEASE_S, LeasedStore
from holodeck.sessions._remote import masked, missing, server_error

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.sql import Composed
    from psycopg_pool import AsyncConnectionPool

_T = TypeVar("_T")
_CONNECT_TIMEOUT_S = 10
_POOL_SIZE = (1, 10)  # connections kept open, and at most open at once
_HINT = (
    "start PostgreSQL at that address, or give the store another url "
    "(postgresql://user:password@host:port/database)"
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {sessions} (
    id TEXT PRIMARY KEY, data BYTEA NOT NULL, saved_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS {saved_at} ON {sessions} (saved_at);
CREATE TABLE IF NOT EXISTS {locks} (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS {counters} (
    id TEXT PRIMARY KEY, data BYTEA NOT NULL, kept_until DOUBLE PRECISION NOT NULL
);
"""


class PostgresSessionStore(LeasedStore):
    """Sessions in `table` (and its locks in `table`_locks) of the PostgreSQL database at
    `url` (`postgresql://user:password@host:port/database`)."""

    def __init__(
        self,
        url: str,
        *,
        ttl_s: float | None = None,
        lease_s: float = LEASE_S,
        clock: Callable[[], float] = time.time,
        table: str = "holodeck_sessions",
    ) -> None:
        super().__init__(ttl_s=ttl_s, lease_s=lease_s, clock=clock)
        self.url = url
        self.table = table
        self._pool: AsyncConnectionPool[Any] | None = None
        self._opening = asyncio.Lock()  # the first uses at once open one pool
        self._sql: dict[str, Composed] = {}

    def __repr__(self) -> str:
        return f"PostgresSessionStore({masked(self.url)!r}, table={self.table!r})"

    # -- the pool

    async def _run(self, work: Callable[[AsyncConnection[Any]], Awaitable[_T]]) -> _T:
        """`work` on a connection of the pool (autocommit); PostgreSQL's failures become
        `SessionStoreError`."""
        try:
            import psycopg
        except ImportError:
            raise missing("psycopg", "postgres") from None
        try:
            pool = self._pool or await self._open()
            async with pool.connection() as db:
                return await work(db)
        except psycopg.Error as error:
            raise server_error("PostgreSQL", self.url, error, _HINT) from None

    async def _open(self) -> AsyncConnectionPool[Any]:
        async with self._opening:
            if self._pool is not None:
                return self._pool
            try:
                from psycopg import AsyncConnection
                from psycopg_pool import AsyncConnectionPool
            except ImportError:
                raise missing("psycopg-pool", "postgres") from None
            self._sql = _statements(self.table)
            # one connection first: a server out of reach says why at once (a pool would
            # only time out), and the tables are there before any query
            async with (
                await AsyncConnection.connect(
                    self.url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S
                ) as db,
                db.transaction(),
            ):
                # processes starting together create the tables one at a time
                await db.execute(self._sql["serialise"], (self.table,))
                await db.execute(self._sql["schema"])
            pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
                self.url,
                min_size=_POOL_SIZE[0],
                max_size=_POOL_SIZE[1],
                kwargs={"autocommit": True, "connect_timeout": _CONNECT_TIMEOUT_S},
                timeout=_CONNECT_TIMEOUT_S,
                open=False,
            )
            await pool.open()
            self._pool = pool
            return pool

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def _rowcount(
        self, statement: str, params: tuple[Any, ...] | Callable[[], tuple[Any, ...]]
    ) -> int:
        """Rows `statement` changed; `params` may be a function, called once a connection
        is there (times in a lease count from then: opening the pool may take a while)."""

        async def run(db: AsyncConnection[Any]) -> int:
            values = params() if callable(params) else params
            return (await db.execute(self._sql[statement], values)).rowcount

        return await self._run(run)

    # -- sessions

    async def load(self, session_id: str) -> bytes | None:
        async def load(db: AsyncConnection[Any]) -> tuple[bytes, float] | None:
            cursor = await db.execute(self._sql["load"], (session_id,))
            row = await cursor.fetchone()
            return None if row is None else (bytes(row[0]), float(row[1]))

        found = await self._run(load)
        if found is None:
            return None
        data, saved = found
        if self.ttl_s is not None and self.clock() - saved > self.ttl_s:
            await self._rowcount("forget", (session_id, saved))  # unless saved meanwhile
            return None
        return data

    async def save(self, session_id: str, data: bytes) -> None:
        now = self.clock()
        await self._rowcount("save", (session_id, bytes(data), now))
        if self.ttl_s is not None:  # expired sessions go as others are saved
            await self._rowcount("purge", (now - self.ttl_s,))

    async def delete(self, session_id: str) -> bool:
        return await self._rowcount("delete", (session_id,)) > 0

    # -- counters

    async def update_counters(
        self, key: str, change: Callable[[bytes | None], tuple[bytes, _T]], *, keep_s: float
    ) -> _T:
        async def update(db: AsyncConnection[Any]) -> _T:
            async with db.transaction():
                # changes of one document, from any process, one at a time
                await db.execute(self._sql["serialise"], (f"{self.table}:counters:{key}",))
                now = self.clock()
                cursor = await db.execute(self._sql["counters"], (key, now))
                row = await cursor.fetchone()
                data, answer = change(None if row is None else bytes(row[0]))
                await db.execute(self._sql["count"], (key, data, now + keep_s))
                await db.execute(self._sql["uncount"], (now,))
                return answer

        return await self._run(update)

    # -- locks (taken, renewed and given back by `LeasedStore.lock`)

    async def _acquire(self, session_id: str) -> bool:
        def params() -> tuple[Any, ...]:
            now = self.clock()
            return (session_id, self._owner, now + self.lease_s, now)

        return await self._rowcount("take", params) > 0

    async def _renew(self, session_id: str) -> bool:
        def params() -> tuple[Any, ...]:
            return (self.clock() + self.lease_s, session_id, self._owner)

        return await self._rowcount("renew", params) > 0

    async def _release(self, session_id: str) -> None:
        await self._rowcount("give", (session_id, self._owner))


def _statements(table: str) -> dict[str, Composed]:
    """The store's statements, its table names quoted as identifiers."""
    from psycopg import sql

    names = {
        "sessions": sql.Identifier(table),
        "locks": sql.Identifier(f"{table}_locks"),
        "saved_at": sql.Identifier(f"{table}_saved_at"),
        "counters": sql.Identifier(f"{table}_counters"),
    }
    texts = {
        "serialise": "SELECT pg_advisory_xact_lock(hashtext(%s))",
        "schema": _SCHEMA,
        "load": "SELECT data, saved_at FROM {sessions} WHERE id = %s",
        "forget": "DELETE FROM {sessions} WHERE id = %s AND saved_at = %s",
        "save": "INSERT INTO {sessions} (id, data, saved_at) VALUES (%s, %s, %s) "
        "ON CONFLICT (id) DO UPDATE SET data = excluded.data, saved_at = excluded.saved_at",
        "purge": "DELETE FROM {sessions} WHERE saved_at < %s",
        "delete": "DELETE FROM {sessions} WHERE id = %s",
        "take": "INSERT INTO {locks} AS held (id, owner, expires_at) VALUES (%s, %s, %s) "
        "ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, "
        "expires_at = excluded.expires_at WHERE held.expires_at < %s",
        "renew": "UPDATE {locks} SET expires_at = %s WHERE id = %s AND owner = %s",
        "give": "DELETE FROM {locks} WHERE id = %s AND owner = %s",
        "counters": "SELECT data FROM {counters} WHERE id = %s AND kept_until > %s",
        "count": "INSERT INTO {counters} (id, data, kept_until) VALUES (%s, %s, %s) "
        "ON CONFLICT (id) DO UPDATE SET data = excluded.data, kept_until = excluded.kept_until",
        "uncount": "DELETE FROM {counters} WHERE kept_until <= %s",
    }
    return {key: sql.SQL(text).format(**names) for key, text in texts.items()}
