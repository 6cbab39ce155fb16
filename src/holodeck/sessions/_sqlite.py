"""Sessions in a SQLite file: they survive a restart, and processes on one machine share
them. The lock is a lease row, so it holds across processes; it is renewed while held, and
a process that dies while holding one frees it when the lease runs out. Queries run on one
thread of the store's own, never on the event loop."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from holodeck.private_files import create_private_file
from holodeck.sessions._leased import LEASE_S, LeasedStore
from holodeck.sessions._store import SessionStoreError

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, data BLOB NOT NULL, saved_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS session_locks (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (
    id TEXT PRIMARY KEY, data BLOB NOT NULL, kept_until REAL NOT NULL
);
"""


class SqliteSessionStore(LeasedStore):
    def __init__(
        self,
        path: str | Path,
        *,
        ttl_s: float | None = None,
        lease_s: float = LEASE_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(ttl_s=ttl_s, lease_s=lease_s, clock=clock)
        self.path = Path(path).expanduser()
        self._db: sqlite3.Connection | None = None
        self._thread: ThreadPoolExecutor | None = None

    # -- the thread and the connection

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="holodeck-sqlite")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._with_db, work)

    def _with_db(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        try:
            if self._db is None:
                # sessions are private: the file (and its -wal, -shm, which SQLite makes
                # with the database's mode) 0600, a directory it creates 0700
                create_private_file(self.path)
                # no busy wait while switching to WAL: `_write_ahead` tries again itself
                db = sqlite3.connect(
                    self.path, isolation_level=None, check_same_thread=False, timeout=0
                )
                _write_ahead(db)
                db.execute("PRAGMA busy_timeout=10000")
                db.executescript(_SCHEMA)
                self._db = db
            return work(self._db)
        except (sqlite3.Error, OSError) as exc:
            raise SessionStoreError(
                f"session store {self.path}: {exc}",
                hint="give a file in a writable directory (it is created when missing)",
            ) from exc

    async def aclose(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        db, self._db = self._db, None
        if db is not None:
            await asyncio.get_running_loop().run_in_executor(thread, db.close)
        thread.shutdown(wait=False)

    # -- sessions

    async def load(self, session_id: str) -> bytes | None:
        def load(db: sqlite3.Connection) -> bytes | None:
            row = db.execute(
                "SELECT data, saved_at FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return None
            if self.ttl_s is not None and self.clock() - row[1] > self.ttl_s:
                db.execute(
                    "DELETE FROM sessions WHERE id = ? AND saved_at = ?", (session_id, row[1])
                )
                return None
            return bytes(row[0])

        return await self._run(load)

    async def save(self, session_id: str, data: bytes) -> None:
        def save(db: sqlite3.Connection) -> None:
            now = self.clock()
            db.execute(
                "INSERT INTO sessions (id, data, saved_at) VALUES (?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET data = excluded.data, saved_at = excluded.saved_at",
                (session_id, data, now),
            )
            if self.ttl_s is not None:  # expired sessions go as others are saved
                db.execute("DELETE FROM sessions WHERE saved_at < ?", (now - self.ttl_s,))

        await self._run(save)

    async def delete(self, session_id: str) -> bool:
        def delete(db: sqlite3.Connection) -> bool:
            return db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0

        return await self._run(delete)

    # -- counters

    async def update_counters(
        self, key: str, change: Callable[[bytes | None], tuple[bytes, _T]], *, keep_s: float
    ) -> _T:
        def update(db: sqlite3.Connection) -> _T:
            now = self.clock()
            # IMMEDIATE takes the write lock before the read: another process's change
            # waits (busy_timeout) instead of interleaving with this one
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT data FROM counters WHERE id = ? AND kept_until > ?", (key, now)
                ).fetchone()
                data, answer = change(None if row is None else bytes(row[0]))
                db.execute(
                    "INSERT INTO counters (id, data, kept_until) VALUES (?, ?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET data = excluded.data, "
                    "kept_until = excluded.kept_until",
                    (key, data, now + keep_s),
                )
                db.execute("DELETE FROM counters WHERE kept_until <= ?", (now,))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return answer

        return await self._run(update)

    # -- locks (taken, renewed and given back by `LeasedStore.lock`)

    async def _acquire(self, session_id: str) -> bool:
        return await self._run(lambda db: self._take(db, session_id))

    async def _renew(self, session_id: str) -> bool:
        def renew(db: sqlite3.Connection) -> bool:
            renewed = db.execute(
                "UPDATE session_locks SET expires_at = ? WHERE id = ? AND owner = ?",
                (self.clock() + self.lease_s, session_id, self._owner),
            )
            return renewed.rowcount > 0

        return await self._run(renew)

    async def _release(self, session_id: str) -> None:
        await self._run(lambda db: self._give(db, session_id))

    def _take(self, db: sqlite3.Connection, session_id: str) -> bool:
        now = self.clock()
        taken = db.execute(
            "INSERT INTO session_locks (id, owner, expires_at) VALUES (?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, "
            "expires_at = excluded.expires_at WHERE session_locks.expires_at < ?",
            (session_id, self._owner, now + self.lease_s, now),
        )
        return taken.rowcount > 0

    def _give(self, db: sqlite3.Connection, session_id: str) -> None:
        db.execute(
            "DELETE FROM session_locks WHERE id = ? AND owner = ?", (session_id, self._owner)
        )


def _write_ahead(db: sqlite3.Connection, within_s: float = 10.0) -> None:
    """WAL mode, so readers never wait for a writer. Switching needs the file alone, and
    SQLite answers "locked" at once instead of waiting (waiting could deadlock) when
    another connection opens a new file at the same moment: try again until `within_s`."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)
